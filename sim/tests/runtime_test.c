/*
 * runtime_test.c — the simulated libcudart.so.13 against the simulated
 * driver: devices, memory and every copy kind, error stickiness, stream
 * ordering with events, launches from a library, entry points.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#ifndef RT_MODULE
#error "RT_MODULE: path of the rt_kernels.so test module"
#endif

#define CHECK(call) assert_int_equal((call), cudaSuccess)

static cudaLibrary_t lib;
static cudaKernel_t k_fill, k_axpy, k_iota;

static int setup(void **state)
{
	(void)state;
	if (cudaLibraryLoadFromFile(&lib, RT_MODULE, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess)
		return -1;
	if (cudaLibraryGetKernel(&k_fill, lib, "rt_fill") != cudaSuccess ||
	    cudaLibraryGetKernel(&k_axpy, lib, "rt_axpy") != cudaSuccess ||
	    cudaLibraryGetKernel(&k_iota, lib, "rt_iota") != cudaSuccess)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return cudaLibraryUnload(lib) == cudaSuccess ? 0 : -1;
}

static void test_versions_and_device(void **state)
{
	(void)state;
	int n = 0, v = 0, dev = -1;
	CHECK(cudaGetDeviceCount(&n));
	assert_true(n >= 1);
	CHECK(cudaRuntimeGetVersion(&v));
	assert_int_equal(v, 13000);
	CHECK(cudaDriverGetVersion(&v));
	assert_true(v >= 13000);
	CHECK(cudaGetDevice(&dev));
	assert_int_equal(dev, 0);
	assert_int_equal(cudaSetDevice(n), cudaErrorInvalidDevice);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);

	struct cudaDeviceProp p;
	CHECK(cudaGetDeviceProperties(&p, 0));
	assert_true(strlen(p.name) > 0);
	assert_true(p.totalGlobalMem > 0);
	assert_true(p.maxThreadsPerBlock >= 1);
	assert_true(p.multiProcessorCount >= 1);
	assert_int_equal(p.warpSize, 32);
	int attr = 0;
	CHECK(cudaDeviceGetAttribute(&attr, cudaDevAttrMaxThreadsPerBlock, 0));
	assert_int_equal(attr, p.maxThreadsPerBlock);
	CHECK(cudaDeviceGetAttribute(&attr, cudaDevAttrComputeCapabilityMajor, 0));
	assert_int_equal(attr, p.major);

	/* Device flags (darknet sets blocking sync), also on a context in use. */
	unsigned flags = 0;
	CHECK(cudaFree(0));
	CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
	CHECK(cudaGetDeviceFlags(&flags));
	assert_int_equal(flags, cudaDeviceScheduleBlockingSync | cudaDeviceMapHost);
	assert_int_equal(cudaSetDeviceFlags(3), cudaErrorInvalidValue);
	assert_int_equal(cudaSetDeviceFlags(0x400), cudaErrorInvalidValue);
	assert_int_equal(cudaGetDeviceFlags(NULL), cudaErrorInvalidValue);
	CHECK(cudaSetDeviceFlags(cudaDeviceScheduleAuto));
	CHECK(cudaGetDeviceFlags(&flags));
	assert_int_equal(flags, cudaDeviceMapHost);
	(void)cudaGetLastError();
}

static void test_copy_kinds(void **state)
{
	(void)state;
	enum { N = 4096 };
	static unsigned char src[N], dst[N], hh[N];
	for (int i = 0; i < N; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	void *a = NULL, *b = NULL;
	CHECK(cudaMalloc(&a, N));
	CHECK(cudaMalloc(&b, N));
	assert_non_null(a);
	assert_ptr_not_equal(a, b);

	CHECK(cudaMemcpy(a, src, N, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, a, N, cudaMemcpyDeviceToDevice));
	memset(dst, 0, N);
	CHECK(cudaMemcpy(dst, b, N, cudaMemcpyDeviceToHost));
	assert_memory_equal(dst, src, N);

	CHECK(cudaMemcpy(hh, src, N, cudaMemcpyHostToHost));
	assert_memory_equal(hh, src, N);
	memset(hh, 0, N);
	CHECK(cudaMemcpy(hh, src, N, cudaMemcpyDefault));
	assert_memory_equal(hh, src, N);

	/* cudaMemcpyDefault: the direction comes from the addresses. */
	CHECK(cudaMemset(a, 0, N));
	CHECK(cudaMemcpy(a, src, N, cudaMemcpyDefault));
	memset(dst, 0, N);
	CHECK(cudaMemcpy(dst, a, N, cudaMemcpyDefault));
	assert_memory_equal(dst, src, N);

	/* Async forms on a stream, then memset. */
	cudaStream_t s;
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaMemsetAsync(b, 0xab, N, s));
	CHECK(cudaMemcpyAsync(dst, b, N, cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	for (int i = 0; i < N; i++)
		assert_int_equal(dst[i], 0xab);
	CHECK(cudaStreamDestroy(s));

	assert_int_equal(cudaMemcpy(dst, a, N, (enum cudaMemcpyKind)7),
	                 cudaErrorInvalidMemcpyDirection);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
	/* An explicit kind is checked against the pointers. */
	assert_int_not_equal(cudaMemcpy(dst, src, N, cudaMemcpyDeviceToHost), cudaSuccess);
	(void)cudaGetLastError();

	struct cudaPointerAttributes pa;
	CHECK(cudaPointerGetAttributes(&pa, (char *)a + 100));
	assert_int_equal(pa.type, cudaMemoryTypeDevice);
	assert_int_equal(pa.device, 0);
	assert_ptr_equal(pa.devicePointer, (char *)a + 100);
	CHECK(cudaPointerGetAttributes(&pa, src));
	assert_int_equal(pa.type, cudaMemoryTypeUnregistered);
	assert_null(pa.devicePointer);

	CHECK(cudaFree(a));
	CHECK(cudaFree(b));
	CHECK(cudaFree(NULL));
}

static void test_malloc_edges_and_info(void **state)
{
	(void)state;
	void *p = (void *)1;
	CHECK(cudaMalloc(&p, 0));
	assert_null(p);
	size_t free0, total, free1;
	CHECK(cudaMemGetInfo(&free0, &total));
	assert_true(total >= free0);
	CHECK(cudaMalloc(&p, 64 << 20));
	CHECK(cudaMemGetInfo(&free1, &total));
	assert_true(free1 < free0);
	CHECK(cudaFree(p));
}

/* Stream-ordered allocation after an ordinary allocation was freed: the
 * range the driver hands out may be one it sealed before.  Last in the
 * list: a fault here ends the program. */
static void test_stream_ordered_alloc(void **state)
{
	(void)state;
	void *p = NULL;
	CHECK(cudaMalloc(&p, 64 << 20));
	CHECK(cudaFree(p));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMallocAsync(&p, 1 << 20, s));
	assert_non_null(p);
	CHECK(cudaMemsetAsync(p, 1, 1 << 20, s));
	unsigned char back[64] = {0};
	CHECK(
	    cudaMemcpyAsync(back, (char *)p + (1 << 19), sizeof(back), cudaMemcpyDeviceToHost, s));
	CHECK(cudaFreeAsync(p, s));
	CHECK(cudaStreamSynchronize(s));
	for (size_t i = 0; i < sizeof(back); i++)
		assert_int_equal(back[i], 1);
	CHECK(cudaStreamDestroy(s));
}

/* Page-locked host memory: usable as a copy source and target, known to
 * the driver as host memory. */
static void test_pinned_host_memory(void **state)
{
	(void)state;
	enum { N = 1 << 16 };
	unsigned char *h = NULL, *h2 = NULL;
	CHECK(cudaMallocHost((void **)&h, N));
	CHECK(cudaHostAlloc((void **)&h2, N, cudaHostAllocDefault));
	assert_non_null(h);
	assert_non_null(h2);
	for (int i = 0; i < N; i++)
		h[i] = (unsigned char)(i * 13);
	void *d;
	CHECK(cudaMalloc(&d, N));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaMemcpyAsync(d, h, N, cudaMemcpyHostToDevice, s));
	CHECK(cudaMemcpyAsync(h2, d, N, cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	assert_memory_equal(h, h2, N);
	struct cudaPointerAttributes pa;
	CHECK(cudaPointerGetAttributes(&pa, h + 10));
	assert_int_equal(pa.type, cudaMemoryTypeHost);
	assert_ptr_equal(pa.hostPointer, h + 10);
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(d));
	CHECK(cudaFreeHost(h));
	CHECK(cudaFreeHost(h2));
	assert_int_equal(cudaMallocHost(NULL, 16), cudaErrorInvalidValue);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
}

/* Non-sticky errors: cudaGetLastError reports the last one and clears it,
 * cudaPeekAtLastError reports without clearing; each thread has its own;
 * success does not overwrite; cudaErrorNotReady is never remembered. */
static void *other_thread_error(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)cudaGetLastError();
}

static void test_error_stickiness(void **state)
{
	(void)state;
	assert_int_equal(cudaGetLastError(), cudaSuccess);
	assert_int_equal(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
	int n;
	CHECK(cudaGetDeviceCount(&n)); /* a success keeps the error */
	assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
	assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);

	pthread_t t;
	void *other;
	assert_int_equal(pthread_create(&t, NULL, other_thread_error, NULL), 0);
	pthread_join(t, &other);
	assert_int_equal((uintptr_t)other, cudaSuccess);

	assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
	assert_int_equal(cudaGetLastError(), cudaSuccess);
	assert_int_equal(cudaPeekAtLastError(), cudaSuccess);

	/* A later error replaces an earlier one. */
	assert_int_equal(cudaSetDevice(-1), cudaErrorInvalidDevice);
	assert_int_equal(cudaMemcpy(NULL, NULL, 1, (enum cudaMemcpyKind)9),
	                 cudaErrorInvalidMemcpyDirection);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);

	/* Launch errors are reported by the launch and remembered. */
	assert_int_equal(cudaLaunchKernel(NULL, (dim3){1, 1, 1}, (dim3){1, 1, 1}, NULL, 0, 0),
	                 cudaErrorInvalidDeviceFunction);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidDeviceFunction);

	assert_string_equal(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
	assert_string_equal(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
	assert_string_equal(cudaGetErrorName((cudaError_t)123456), "unrecognized error code");
	assert_true(strlen(cudaGetErrorString(cudaErrorMemoryAllocation)) > 0);
	/* Reporting an error is not an error. */
	assert_int_equal(cudaGetLastError(), cudaSuccess);
}

/* A host function blocks stream A until the test releases it: work queued
 * behind an event on stream B must wait, and only then run. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open;

static void CUDART_CB gate(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gate_lock);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

static void test_stream_event_ordering(void **state)
{
	(void)state;
	enum { N = 1 << 14 };
	float *x, *y;
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)));
	CHECK(cudaMalloc((void **)&y, N * sizeof(float)));
	cudaStream_t a, b;
	cudaEvent_t done_a, t0, t1;
	CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CHECK(cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, 0));
	CHECK(cudaEventCreate(&done_a));
	CHECK(cudaEventCreate(&t0));
	CHECK(cudaEventCreateWithFlags(&t1, cudaEventDefault));

	gate_open = 0;
	float one = 1.0f, two = 2.0f;
	int n = N;
	void *fill_x[] = {&x, &two, &n};
	void *fill_y[] = {&y, &one, &n};
	CHECK(cudaLaunchHostFunc(a, gate, NULL));
	CHECK(cudaLaunchKernel((const void *)k_fill, (dim3){N / 256, 1, 1}, (dim3){256, 1, 1},
	                       fill_x, 0, a));
	CHECK(cudaEventRecord(done_a, a));
	/* y = 1 on b first, then y += 3 * x once a is done. */
	CHECK(cudaEventRecord(t0, b));
	CHECK(cudaLaunchKernel((const void *)k_fill, (dim3){N / 256, 1, 1}, (dim3){256, 1, 1},
	                       fill_y, 0, b));
	CHECK(cudaStreamWaitEvent(b, done_a, 0));
	float three = 3.0f;
	void *axpy[] = {&three, &x, &y, &n};
	CHECK(cudaLaunchKernel((const void *)k_axpy, (dim3){N / 256, 1, 1}, (dim3){256, 1, 1}, axpy,
	                       0, b));
	CHECK(cudaEventRecord(t1, b));

	assert_int_equal(cudaEventQuery(done_a), cudaErrorNotReady);
	assert_int_equal(cudaStreamQuery(b), cudaErrorNotReady);
	assert_int_equal(cudaStreamQuery(a), cudaErrorNotReady);
	assert_int_equal(cudaGetLastError(), cudaSuccess); /* not-ready is no error */

	pthread_mutex_lock(&gate_lock);
	gate_open = 1;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);

	CHECK(cudaEventSynchronize(t1));
	CHECK(cudaEventQuery(done_a));
	CHECK(cudaStreamQuery(b));
	static float host[N];
	CHECK(cudaMemcpy(host, y, sizeof(host), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		assert_true(host[i] == 7.0f);
	float ms = -1;
	CHECK(cudaEventElapsedTime(&ms, t0, t1));
	assert_true(ms > 0);

	CHECK(cudaEventDestroy(done_a));
	CHECK(cudaEventDestroy(t0));
	CHECK(cudaEventDestroy(t1));
	CHECK(cudaStreamDestroy(a));
	CHECK(cudaStreamDestroy(b));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
}

static void test_launch_paths(void **state)
{
	(void)state;
	enum { N = 1000 };
	int *p;
	CHECK(cudaMalloc((void **)&p, N * sizeof(int)));
	int n = N;
	void *args[] = {&p, &n};
	static int host[N];

	/* cudaLaunchKernelExC with a partial last block. */
	CHECK(cudaMemset(p, 0xff, N * sizeof(int)));
	cudaLaunchConfig_t cfg = {.gridDim = {(N + 127) / 128, 1, 1}, .blockDim = {128, 1, 1}};
	CHECK(cudaLaunchKernelExC(&cfg, (const void *)k_iota, args));
	CHECK(cudaMemcpy(host, p, sizeof(host), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		assert_int_equal(host[i], i);

	/* The per-thread default stream entry points. */
	cudaError_t cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
	cudaError_t cudaMemcpyAsync_ptsz(void *, const void *, size_t, enum cudaMemcpyKind,
	                                 cudaStream_t);
	cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
	CHECK(cudaMemset(p, 0, N * sizeof(int)));
	CHECK(cudaLaunchKernel_ptsz((const void *)k_iota, (dim3){(N + 255) / 256, 1, 1},
	                            (dim3){256, 1, 1}, args, 0, cudaStreamPerThread));
	memset(host, 0, sizeof(host));
	CHECK(cudaMemcpyAsync_ptsz(host, p, sizeof(host), cudaMemcpyDeviceToHost,
	                           cudaStreamPerThread));
	CHECK(cudaStreamSynchronize_ptsz(cudaStreamPerThread));
	assert_int_equal(host[N - 1], N - 1);

	/* Configurations no device can launch. */
	assert_int_equal(
	    cudaLaunchKernel((const void *)k_iota, (dim3){1, 1, 1}, (dim3){2048, 1, 1}, args, 0, 0),
	    cudaErrorInvalidConfiguration);
	assert_int_equal(
	    cudaLaunchKernel((const void *)k_iota, (dim3){0, 1, 1}, (dim3){32, 1, 1}, args, 0, 0),
	    cudaErrorInvalidConfiguration);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidConfiguration);

	/* A pointer that is no kernel. */
	assert_int_equal(
	    cudaLaunchKernel((const void *)&n, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, 0),
	    cudaErrorInvalidDeviceFunction);
	(void)cudaGetLastError();

	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusActive;
	CHECK(cudaStreamIsCapturing(0, &st));
	assert_int_equal(st, cudaStreamCaptureStatusNone);
	st = cudaStreamCaptureStatusActive;
	unsigned long long id = 7;
	CHECK(cudaStreamGetCaptureInfo(0, &st, &id, NULL, NULL, NULL, NULL));
	assert_int_equal(st, cudaStreamCaptureStatusNone);
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaFree(p));
}

struct seen {
	cudaStream_t stream;
	cudaError_t status;
	int calls;
};

static void CUDART_CB on_stream_done(cudaStream_t stream, cudaError_t status, void *arg)
{
	struct seen *seen = arg;
	seen->stream = stream;
	seen->status = status;
	seen->calls++;
}

static void test_stream_queries_and_callbacks(void **state)
{
	(void)state;
	int least = 0, greatest = 0;
	CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	assert_true(greatest <= least);
	cudaStream_t hi, lo;
	CHECK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest));
	CHECK(cudaStreamCreate(&lo));
	int prio = 1234;
	CHECK(cudaStreamGetPriority(hi, &prio));
	assert_int_equal(prio, greatest);
	unsigned flags = 99;
	CHECK(cudaStreamGetFlags(hi, &flags));
	assert_int_equal(flags, cudaStreamNonBlocking);
	CHECK(cudaStreamGetFlags(lo, &flags));
	assert_int_equal(flags, cudaStreamDefault);
	unsigned long long id_hi = 0, id_lo = 0;
	CHECK(cudaStreamGetId(hi, &id_hi));
	CHECK(cudaStreamGetId(lo, &id_lo));
	assert_int_not_equal(id_hi, id_lo);
	int dev = -1;
	CHECK(cudaStreamGetDevice(hi, &dev));
	assert_int_equal(dev, 0);

	struct seen seen = {NULL, cudaErrorUnknown, 0};
	int *p;
	CHECK(cudaMalloc((void **)&p, 1024 * sizeof(int)));
	int n = 1024;
	void *args[] = {&p, &n};
	CHECK(cudaLaunchKernel((const void *)k_iota, (dim3){4, 1, 1}, (dim3){256, 1, 1}, args, 0,
	                       hi));
	CHECK(cudaStreamAddCallback(hi, on_stream_done, &seen, 0));
	CHECK(cudaStreamSynchronize(hi));
	assert_int_equal(seen.calls, 1);
	assert_ptr_equal(seen.stream, hi);
	assert_int_equal(seen.status, cudaSuccess);
	assert_int_equal(cudaStreamAddCallback(hi, on_stream_done, &seen, 1),
	                 cudaErrorInvalidValue);
	assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
	CHECK(cudaFree(p));
	CHECK(cudaStreamDestroy(hi));
	CHECK(cudaStreamDestroy(lo));
}

/* Work captured from a stream replays, twice, from the instantiated graph. */
static void test_capture_and_graph(void **state)
{
	(void)state;
	enum { N = 512 };
	float *x, *y;
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)));
	CHECK(cudaMalloc((void **)&y, N * sizeof(float)));
	CHECK(cudaMemset(y, 0, N * sizeof(float)));
	cudaStream_t s;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	float one = 1.0f, two = 2.0f;
	int n = N;
	void *fill[] = {&x, &one, &n};
	void *axpy[] = {&two, &x, &y, &n};

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	CHECK(cudaStreamIsCapturing(s, &st));
	assert_int_equal(st, cudaStreamCaptureStatusActive);
	unsigned long long id = 0;
	CHECK(cudaStreamGetCaptureInfo(s, &st, &id, NULL, NULL, NULL, NULL));
	assert_int_equal(st, cudaStreamCaptureStatusActive);
	assert_true(id != 0);
	CHECK(cudaLaunchKernel((const void *)k_fill, (dim3){N / 128, 1, 1}, (dim3){128, 1, 1}, fill,
	                       0, s));
	CHECK(cudaLaunchKernel((const void *)k_axpy, (dim3){N / 128, 1, 1}, (dim3){128, 1, 1}, axpy,
	                       0, s));
	cudaGraph_t g = NULL;
	CHECK(cudaStreamEndCapture(s, &g));
	assert_non_null(g);
	CHECK(cudaStreamIsCapturing(s, &st));
	assert_int_equal(st, cudaStreamCaptureStatusNone);

	/* Nothing ran while capturing. */
	static float host[N];
	CHECK(cudaMemcpy(host, y, sizeof(host), cudaMemcpyDeviceToHost));
	assert_true(host[0] == 0.0f && host[N - 1] == 0.0f);

	cudaGraphExec_t exec = NULL;
	CHECK(cudaGraphInstantiate(&exec, g, 0));
	CHECK(cudaGraphLaunch(exec, s));
	CHECK(cudaGraphLaunch(exec, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaMemcpy(host, y, sizeof(host), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		assert_true(host[i] == 4.0f);
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
}

/* The runtime hands out what the driver's cuGetProcAddress_v2 answers,
 * version and flags included. */
static void test_driver_entry_points(void **state)
{
	(void)state;
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	assert_non_null(h);
	__typeof__(cuGetProcAddress) *gpa =
	    (__typeof__(cuGetProcAddress) *)dlsym(h, "cuGetProcAddress_v2");
	assert_non_null(gpa);
	static const char *const names[] = {"cuLaunchKernel", "cuMemAlloc", "cuMemcpyHtoDAsync",
	                                    "cuEventElapsedTime", "cuStreamSynchronize"};
	static const unsigned long long flags[] = {cudaEnableDefault, cudaEnableLegacyStream,
	                                           cudaEnablePerThreadDefaultStream};
	static const unsigned versions[] = {11000, 12000, 13000};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t f = 0; f < 3; f++)
			for (size_t v = 0; v < 3; v++) {
				void *ours = NULL, *theirs = NULL;
				enum cudaDriverEntryPointQueryResult qr;
				CUdriverProcAddressQueryResult dr;
				CHECK(cudaGetDriverEntryPointByVersion(names[i], &ours, versions[v],
				                                       flags[f], &qr));
				assert_int_equal(
				    gpa(names[i], &theirs, (int)versions[v], flags[f], &dr),
				    CUDA_SUCCESS);
				assert_non_null(ours);
				assert_ptr_equal(ours, theirs);
				assert_int_equal(qr, cudaDriverEntryPointSuccess);
			}
	/* The per-thread variant differs from the legacy one for stream
	 * functions. */
	void *legacy = NULL, *pt = NULL;
	CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &legacy, 13000, cudaEnableDefault,
	                                       NULL));
	CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &pt, 13000,
	                                       cudaEnablePerThreadDefaultStream, NULL));
	assert_ptr_not_equal(legacy, pt);
	assert_ptr_equal(legacy, dlsym(h, "cuLaunchKernel"));
	assert_ptr_equal(pt, dlsym(h, "cuLaunchKernel_ptsz"));

	/* Deprecated, still exported and still used by old binaries. */
	void *unversioned = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	CHECK(cudaGetDriverEntryPoint("cuMemAlloc", &unversioned, cudaEnableDefault, NULL));
#pragma GCC diagnostic pop
	assert_ptr_equal(unversioned, dlsym(h, "cuMemAlloc_v2"));

	void *none = (void *)1;
	enum cudaDriverEntryPointQueryResult qr = cudaDriverEntryPointSuccess;
	CHECK(cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &none, 13000, cudaEnableDefault,
	                                       &qr));
	assert_null(none);
	assert_int_equal(qr, cudaDriverEntryPointSymbolNotFound);
	assert_int_equal(cudaGetDriverEntryPointByVersion(NULL, &none, 13000, 0, NULL),
	                 cudaErrorInvalidValue);
	(void)cudaGetLastError();
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_versions_and_device),
	    cmocka_unit_test(test_copy_kinds),
	    cmocka_unit_test(test_malloc_edges_and_info),
	    cmocka_unit_test(test_pinned_host_memory),
	    cmocka_unit_test(test_error_stickiness),
	    cmocka_unit_test(test_stream_event_ordering),
	    cmocka_unit_test(test_launch_paths),
	    cmocka_unit_test(test_stream_queries_and_callbacks),
	    cmocka_unit_test(test_capture_and_graph),
	    cmocka_unit_test(test_driver_entry_points),
	    cmocka_unit_test(test_stream_ordered_alloc),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
