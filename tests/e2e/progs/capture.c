/*
 * capture.c — what a program may do around a stream capture, one scenario
 * per line of output; the same lines must come out with and without
 * libremat (tests/e2e/run_capture.sh), whatever the driver answers.
 *
 *   capture KERNELS.so      (tests/e2e/progs/chain.cu's kernels)
 *
 * graph-memory   an allocation, two kernels and a free captured in a
 *                global capture: graph memory nodes; the graph runs three
 *                times
 * pool-free      memory allocated before the capture freed on the
 *                capturing stream (a graph frees only graph allocations)
 * other-thread   another thread allocates and frees stream-ordered memory
 *                on its own stream during a global capture
 * sync-alloc     cuMemAlloc during a global capture (an unsafe call)
 * sync-free      cuMemFree during a global capture
 * relaxed        cuMemAlloc during the thread's own global capture after
 *                switching the thread to relaxed (PyTorch's allocator)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>

#include "progs.h"

enum { N = 65536 }; /* 256 KiB per buffer */

static CUfunction fwd, use;
static CUcontext ctx;

static void launch(CUfunction f, CUstream s, void **args)
{
	CK(cuLaunchKernel(f, N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static uint64_t checksum(CUdeviceptr p)
{
	static float h[N];
	CK(cuMemcpyDtoH(h, p, sizeof(h)));
	uint64_t x = 0xcbf29ce484222325ULL;
	const unsigned char *b = (const unsigned char *)h;
	for (size_t i = 0; i < sizeof(h); i++)
		x = (x ^ b[i]) * 0x100000001b3ULL;
	return x;
}

static void graph_memory(CUstream s, CUdeviceptr x, CUdeviceptr acc)
{
	CUdeviceptr t;
	int n = N;
	float a = 1.25f;
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuMemAllocAsync(&t, N * sizeof(float), s));
	void *fa[] = {&x, &t, &n, &a}, *ua[] = {&t, &acc, &n};
	launch(fwd, s, fa);
	launch(use, s, ua);
	CK(cuMemFreeAsync(t, s));
	CUgraph g;
	CK(cuStreamEndCapture(s, &g));
	CUgraphExec e;
	CK(cuGraphInstantiate(&e, g, 0));
	CK(cuGraphDestroy(g));
	for (int i = 0; i < 3; i++)
		CK(cuGraphLaunch(e, s));
	CK(cuStreamSynchronize(s));
	CK(cuGraphExecDestroy(e));
	printf("graph-memory: acc %016llx\n", (unsigned long long)checksum(acc));
}

static void pool_free(CUstream s)
{
	CUdeviceptr p;
	CK(cuMemAllocAsync(&p, N * sizeof(float), s));
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CUresult fr = cuMemFreeAsync(p, s);
	CUgraph g = NULL;
	CUresult end = cuStreamEndCapture(s, &g);
	if (g)
		CK(cuGraphDestroy(g));
	CK(cuMemFreeAsync(p, s));
	CK(cuStreamSynchronize(s));
	printf("pool-free: free %d, end %d\n", (int)fr, (int)end);
}

struct other {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int step; /* 1: capture begun; 2: the other thread is done */
	CUresult last;
};

static void *other_thread(void *arg)
{
	struct other *o = arg;
	CK(cuCtxSetCurrent(ctx));
	CUstream s2;
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	pthread_mutex_lock(&o->lock);
	while (o->step < 1)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);
	/* Frees still pending on s2 while the next allocations come: an
	 * allocator that asks whether they completed (cuEventQuery) makes an
	 * unsafe call during the other thread's global capture. */
	CUresult r = CUDA_SUCCESS;
	for (int i = 0; i < 8 && r == CUDA_SUCCESS; i++) {
		CUdeviceptr p;
		r = cuMemAllocAsync(&p, N * sizeof(float), s2);
		if (r == CUDA_SUCCESS)
			r = cuMemsetD32Async(p, (unsigned)i, N, s2);
		if (r == CUDA_SUCCESS)
			r = cuMemFreeAsync(p, s2);
	}
	pthread_mutex_lock(&o->lock);
	o->step = 2;
	o->last = r;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	CK(cuStreamSynchronize(s2));
	CK(cuStreamDestroy(s2));
	return NULL;
}

static void other_thread_allocates(CUstream s, CUdeviceptr x, CUdeviceptr acc)
{
	struct other o = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
	pthread_t t;
	pthread_create(&t, NULL, other_thread, &o);
	int n = N;
	void *ua[] = {&x, &acc, &n};
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	launch(use, s, ua);
	pthread_mutex_lock(&o.lock);
	o.step = 1;
	pthread_cond_broadcast(&o.cond);
	while (o.step < 2)
		pthread_cond_wait(&o.cond, &o.lock);
	pthread_mutex_unlock(&o.lock);
	CUgraph g = NULL;
	CUresult end = cuStreamEndCapture(s, &g);
	if (g)
		CK(cuGraphDestroy(g));
	pthread_join(t, NULL);
	printf("other-thread: allocations %d, end %d\n", (int)o.last, (int)end);
}

static void sync_calls(CUstream s)
{
	CUdeviceptr p = 0, q;
	CUgraph g = NULL;
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CUresult ar = cuMemAlloc(&p, N * sizeof(float));
	CUresult end = cuStreamEndCapture(s, &g);
	if (ar == CUDA_SUCCESS)
		CK(cuMemFree(p));
	printf("sync-alloc: alloc %d, end %d\n", (int)ar, (int)end);

	CK(cuMemAlloc(&q, N * sizeof(float)));
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CUresult fr = cuMemFree(q);
	end = cuStreamEndCapture(s, &g);
	if (fr != CUDA_SUCCESS)
		CK(cuMemFree(q));
	printf("sync-free: free %d, end %d\n", (int)fr, (int)end);
}

static void relaxed(CUstream s, CUdeviceptr x)
{
	CUdeviceptr p;
	int n = N;
	float a = 0.5f;
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	CK(cuThreadExchangeStreamCaptureMode(&m));
	CUresult ar = cuMemAlloc(&p, N * sizeof(float));
	CK(cuThreadExchangeStreamCaptureMode(&m));
	void *fa[] = {&x, &p, &n, &a};
	if (ar == CUDA_SUCCESS)
		launch(fwd, s, fa);
	CUgraph g = NULL;
	CUresult end = cuStreamEndCapture(s, &g);
	if (end == CUDA_SUCCESS) {
		CUgraphExec e;
		CK(cuGraphInstantiate(&e, g, 0));
		CK(cuGraphLaunch(e, s));
		CK(cuStreamSynchronize(s));
		CK(cuGraphExecDestroy(e));
		CK(cuGraphDestroy(g));
	}
	printf("relaxed: alloc %d, end %d, out %016llx\n", (int)ar, (int)end,
	       ar == CUDA_SUCCESS ? (unsigned long long)checksum(p) : 0ull);
	if (ar == CUDA_SUCCESS)
		CK(cuMemFree(p));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: capture KERNELS.so\n");
		return 1;
	}
	CUmodule mod;
	ctx = prog_context();
	CK(cuModuleLoad(&mod, argv[1]));
	CK(cuModuleGetFunction(&fwd, mod, "fwd"));
	CK(cuModuleGetFunction(&use, mod, "use"));
	CUstream s;
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr x, acc;
	CK(cuMemAlloc(&x, N * sizeof(float)));
	CK(cuMemAlloc(&acc, N * sizeof(float)));
	CK(cuMemsetD32(x, 0x3f800000u, N)); /* 1.0f */
	CK(cuMemsetD32(acc, 0, N));
	CK(cuCtxSynchronize());

	graph_memory(s, x, acc);
	pool_free(s);
	other_thread_allocates(s, x, acc);
	sync_calls(s);
	relaxed(s, x);
	CK(cuMemFree(x));
	CK(cuMemFree(acc));
	CK(cuStreamDestroy(s));
	return 0;
}
