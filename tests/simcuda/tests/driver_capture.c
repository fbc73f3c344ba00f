/*
 * driver_capture.c — stream capture and graphs: captured work does not
 * run until the graph is launched, runs on every launch (reading host
 * sources at launch time), streams join a capture through events, and
 * what a capture forbids is refused and invalidates it.
 */
#include "driver_common.h"

static CUmodule mod;
static CUfunction fill, plus_one;

static int setup(void **state)
{
	(void)state;
	setup_context();
	mod = load_test_module();
	fill = get_fn(mod, "fill_u32");
	plus_one = get_fn(mod, "copy_plus_one");
	return 0;
}

static uint64_t kernels_run(void)
{
	struct simcuda_stats st;
	simcudaGetStats(&st);
	return st.kernels;
}

static unsigned read_u32(CUdeviceptr p)
{
	unsigned v;
	CHECK(cuMemcpyDtoH(&v, p, 4));
	return v;
}

static CUstreamCaptureStatus status_of(CUstream s, cuuint64_t *id)
{
	CUstreamCaptureStatus st;
	CHECK(cuStreamGetCaptureInfo(s, &st, id, NULL, NULL, NULL, NULL));
	return st;
}

static void test_capture_and_replay(void **state)
{
	(void)state;
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, 64 * 4));
	CHECK(cuMemAlloc(&b, 64 * 4));
	CHECK(cuMemsetD32(a, 0, 64));
	CHECK(cuMemsetD32(b, 0, 64));
	CHECK(cuCtxSynchronize());
	static unsigned host[64];
	for (int i = 0; i < 64; i++)
		host[i] = 100;
	uint64_t before = kernels_run();

	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	cuuint64_t id = 0;
	assert_int_equal(status_of(s, &id), CU_STREAM_CAPTURE_STATUS_ACTIVE);
	assert_int_not_equal(id, 0);
	CHECK(cuMemcpyHtoDAsync(a, host, sizeof(host), s));
	int n = 64;
	void *args[] = {&a, &b, &n};
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
	CHECK(cuMemsetD32Async(a, 7, 1, s));
	CUgraph g;
	CHECK(cuStreamEndCapture(s, &g));
	assert_int_equal(status_of(s, NULL), CU_STREAM_CAPTURE_STATUS_NONE);

	/* nothing ran yet */
	CHECK(cuCtxSynchronize());
	assert_int_equal(kernels_run(), before);
	assert_int_equal(read_u32(b), 0);
	size_t count = 0;
	CHECK(cuGraphGetNodes(g, NULL, &count));
	assert_int_equal(count, 3);

	CUgraphExec exec;
	CHECK(cuGraphInstantiate(&exec, g, 0));
	CHECK(cuGraphDestroy(g)); /* the executable graph is a copy */
	CHECK(cuGraphLaunch(exec, s));
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(read_u32(b + 4), 101);
	assert_int_equal(read_u32(a), 7);
	/* the host source is read at each launch */
	for (int i = 0; i < 64; i++)
		host[i] = 200;
	CHECK(cuGraphLaunch(exec, s));
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(read_u32(b + 4), 201);
	assert_int_equal(kernels_run(), before + 2);
	CHECK(cuGraphExecDestroy(exec));
	assert_int_equal(cuGraphLaunch(exec, s), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	CHECK(cuStreamDestroy(s));
}

static void test_fork_join(void **state)
{
	(void)state;
	CUstream s1, s2, other;
	CUevent fork, join, outside;
	CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&outside, 0));
	CHECK(cuEventRecord(outside, other));
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, 4));
	CHECK(cuMemAlloc(&b, 4));
	unsigned v = 41;
	int n = 1;
	void *fargs[] = {&a, &v, &n}, *pargs[] = {&a, &b, &n};

	CHECK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	CHECK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s1, fargs, NULL));
	CHECK(cuEventRecord(fork, s1));
	CHECK(cuStreamWaitEvent(s2, fork, 0)); /* s2 joins the capture */
	cuuint64_t id1, id2;
	assert_int_equal(status_of(s1, &id1), CU_STREAM_CAPTURE_STATUS_ACTIVE);
	assert_int_equal(status_of(s2, &id2), CU_STREAM_CAPTURE_STATUS_ACTIVE);
	assert_int_equal(id1, id2);
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 1, 1, 1, 0, s2, pargs, NULL));
	/* a dependency on work from outside the capture is refused */
	assert_int_equal(cuStreamWaitEvent(s2, outside, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
	CHECK(cuEventRecord(join, s2));
	CHECK(cuStreamWaitEvent(s1, join, 0));
	CUgraph g;
	assert_int_equal(cuStreamEndCapture(s2, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	assert_int_equal(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	assert_null(g);
	assert_int_equal(status_of(s2, NULL), CU_STREAM_CAPTURE_STATUS_NONE);

	/* again, ending where it began */
	CHECK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	CHECK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s1, fargs, NULL));
	CHECK(cuEventRecord(fork, s1));
	CHECK(cuStreamWaitEvent(s2, fork, 0));
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 1, 1, 1, 0, s2, pargs, NULL));
	CHECK(cuEventRecord(join, s2));
	CHECK(cuStreamWaitEvent(s1, join, 0));
	CHECK(cuStreamEndCapture(s1, &g));
	CUgraphExec exec;
	CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
	CHECK(cuGraphLaunch(exec, other));
	CHECK(cuStreamSynchronize(other));
	assert_int_equal(read_u32(b), 42);
	CHECK(cuGraphExecDestroy(exec));
	CHECK(cuGraphDestroy(g));
	CHECK(cuEventDestroy(fork));
	CHECK(cuEventDestroy(join));
	CHECK(cuEventDestroy(outside));
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	CHECK(cuStreamDestroy(s1));
	CHECK(cuStreamDestroy(s2));
	CHECK(cuStreamDestroy(other));
}

static void test_forbidden_calls(void **state)
{
	(void)state;
	CUstream s, blocking;
	CUgraph g;
	CUdeviceptr p;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&blocking, 0));
	assert_int_equal(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
	                 CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);

	/* synchronizing with the capturing stream */
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	assert_int_equal(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL),
	                 CUDA_ERROR_ILLEGAL_STATE);
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(status_of(s, NULL), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* an unsafe call during a global capture; allowed when relaxed */
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	assert_int_equal(cuMemAlloc(&p, 16), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	CHECK(cuMemAlloc(&p, 16));
	/* stream-ordered allocation: graph memory nodes are not simulated */
	CUdeviceptr q;
	assert_int_equal(cuMemAllocAsync(&q, 16, s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	CHECK(cuMemFree(p));

	/* the legacy stream would implicitly wait for a capturing blocking
	 * stream, whatever the mode */
	CUdeviceptr r;
	CHECK(cuMemAlloc(&r, 16));
	CHECK(cuStreamBeginCapture(blocking, CU_STREAM_CAPTURE_MODE_RELAXED));
	assert_int_equal(cuMemsetD32Async(r, 0, 4, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	assert_int_equal(cuStreamEndCapture(blocking, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* with the capture over, the legacy stream works again */
	CHECK(cuMemsetD32Async(r, 0, 4, NULL));
	CHECK(cuMemFree(r));
	CHECK(cuStreamDestroy(s));
	CHECK(cuStreamDestroy(blocking));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capture_and_replay),
	    cmocka_unit_test(test_fork_join),
	    cmocka_unit_test(test_forbidden_calls),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
