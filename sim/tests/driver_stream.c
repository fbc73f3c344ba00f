/*
 * driver_stream.c — streams really run concurrently, each in FIFO order;
 * events and cuStreamWaitEvent order work across streams; the legacy
 * default stream synchronizes with blocking streams but not with
 * non-blocking ones; the per-thread default stream is one per thread.
 *
 * Runs with SIMCUDA_SLOW_STREAM=100 (user streams sleep 100 ms before
 * each op), so a missing dependency on a user stream shows as wrong data.
 * The negative controls check exactly that: without the dependency the
 * result is wrong.
 */
#include "driver_common.h"

#include <pthread.h>
#include <stdatomic.h>

static CUmodule mod;
static CUfunction fill, plus_one, append;

static int setup(void **state)
{
	(void)state;
	setup_context();
	mod = load_test_module();
	fill = get_fn(mod, "fill_u32");
	plus_one = get_fn(mod, "copy_plus_one");
	append = get_fn(mod, "append");
	return 0;
}

static void launch_fill(CUdeviceptr p, unsigned v, int n, CUstream s)
{
	void *args[] = {&p, &v, &n};
	CHECK(cuLaunchKernel(fill, 1, 1, 1, (unsigned)n, 1, 1, 0, s, args, NULL));
}

static void launch_plus_one(CUdeviceptr src, CUdeviceptr dst, int n, CUstream s)
{
	void *args[] = {&src, &dst, &n};
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, (unsigned)n, 1, 1, 0, s, args, NULL));
}

static unsigned read_u32(CUdeviceptr p)
{
	unsigned v;
	CHECK(cuMemcpyDtoH(&v, p, 4));
	return v;
}

static void test_fifo_order(void **state)
{
	(void)state;
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr log;
	CHECK(cuMemAlloc(&log, 64 * 4));
	CHECK(cuMemsetD32Async(log, 0, 64, s));
	for (unsigned v = 1; v <= 5; v++) {
		void *args[] = {&log, &v};
		CHECK(cuLaunchKernel(append, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	}
	assert_int_equal(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	CHECK(cuStreamSynchronize(s));
	CHECK(cuStreamQuery(s));
	unsigned out[6];
	CHECK(cuMemcpyDtoH(out, log, sizeof(out)));
	assert_int_equal(out[0], 5);
	for (unsigned i = 1; i <= 5; i++)
		assert_int_equal(out[i], i);
	CHECK(cuMemFree(log));
	CHECK(cuStreamDestroy(s));
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
}

CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);

/* A user stream (slowed) produces; the per-thread default stream (not
 * slowed, and not synchronized with non-blocking streams) consumes. */
static unsigned produce_consume(bool with_event)
{
	CUstream a;
	CUevent e;
	CHECK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&e, 0));
	CUdeviceptr buf, out;
	CHECK(cuMemAlloc(&buf, 4));
	CHECK(cuMemAlloc(&out, 4));
	CHECK(cuMemsetD32(buf, 1, 1));
	CHECK(cuCtxSynchronize());
	launch_fill(buf, 41, 1, a);
	CHECK(cuEventRecord(e, a));
	if (with_event)
		CHECK(cuStreamWaitEvent(CU_STREAM_PER_THREAD, e, 0));
	launch_plus_one(buf, out, 1, CU_STREAM_PER_THREAD);
	CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	unsigned v;
	CHECK(cuMemcpyDtoH_v2_ptds(&v, out, 4));
	CHECK(cuCtxSynchronize());
	CHECK(cuEventDestroy(e));
	CHECK(cuStreamDestroy(a));
	CHECK(cuMemFree(buf));
	CHECK(cuMemFree(out));
	return v;
}

static void test_event_dependency(void **state)
{
	(void)state;
	assert_int_equal(produce_consume(true), 42);
	/* negative control: without the wait the consumer reads too early */
	assert_int_equal(produce_consume(false), 2);
}

/* The legacy stream waits for a blocking stream's earlier work, not for a
 * non-blocking stream's. */
static unsigned legacy_after(unsigned flags)
{
	CUstream a;
	CHECK(cuStreamCreate(&a, flags));
	CUdeviceptr buf, out;
	CHECK(cuMemAlloc(&buf, 4));
	CHECK(cuMemAlloc(&out, 4));
	CHECK(cuMemsetD32(buf, 1, 1));
	CHECK(cuCtxSynchronize());
	launch_fill(buf, 5, 1, a);
	launch_plus_one(buf, out, 1, NULL); /* legacy default stream */
	unsigned v = read_u32(out);
	CHECK(cuCtxSynchronize());
	CHECK(cuStreamDestroy(a));
	CHECK(cuMemFree(buf));
	CHECK(cuMemFree(out));
	return v;
}

static void test_legacy_stream_sync(void **state)
{
	(void)state;
	assert_int_equal(legacy_after(0), 6);
	assert_int_equal(legacy_after(CU_STREAM_NON_BLOCKING), 2);
}

static atomic_int flag;

/* Sets the flag after arg milliseconds (100 when NULL). */
static void set_flag_late(void *arg)
{
	usleep(arg ? (useconds_t)(uintptr_t)arg * 1000 : 100 * 1000);
	atomic_store(&flag, 1);
}

static void read_flag(void *arg)
{
	*(int *)arg = atomic_load(&flag);
}

/* A blocking stream's op waits for the legacy stream's earlier work. */
static int blocking_sees_legacy(unsigned flags)
{
	CUstream b;
	CHECK(cuStreamCreate(&b, flags));
	atomic_store(&flag, 0);
	int seen = -1;
	/* longer than b's 100 ms slow-down, so only a dependency orders them */
	CHECK(cuLaunchHostFunc(CU_STREAM_LEGACY, set_flag_late, (void *)(uintptr_t)400));
	CHECK(cuLaunchHostFunc(b, read_flag, &seen));
	CHECK(cuCtxSynchronize());
	CHECK(cuStreamDestroy(b));
	return seen;
}

static void test_blocking_waits_for_legacy(void **state)
{
	(void)state;
	assert_int_equal(blocking_sees_legacy(0), 1);
	assert_int_equal(blocking_sees_legacy(CU_STREAM_NON_BLOCKING), 0);
}

/* Two host functions that each wait for the other can only finish if
 * the two streams really run at the same time. */
static atomic_int left, right;

static void meet_left(void *arg)
{
	(void)arg;
	atomic_store(&left, 1);
	for (int i = 0; i < 2000 && !atomic_load(&right); i++)
		usleep(1000);
}

static void meet_right(void *arg)
{
	(void)arg;
	atomic_store(&right, 1);
	for (int i = 0; i < 2000 && !atomic_load(&left); i++)
		usleep(1000);
}

static void test_streams_run_concurrently(void **state)
{
	(void)state;
	CUstream a, b;
	CHECK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
	int seen_left = 0, seen_right = 0;
	CHECK(cuLaunchHostFunc(a, meet_left, NULL));
	CHECK(cuLaunchHostFunc(b, meet_right, NULL));
	CHECK(cuLaunchHostFunc(a, read_flag, &seen_left));
	CHECK(cuCtxSynchronize());
	seen_left = atomic_load(&right);
	seen_right = atomic_load(&left);
	assert_int_equal(seen_left, 1);
	assert_int_equal(seen_right, 1);
	struct simcuda_stats st;
	simcudaGetStats(&st);
	assert_true(st.host_funcs >= 3);
	CHECK(cuStreamDestroy(a));
	CHECK(cuStreamDestroy(b));
}

static void test_events(void **state)
{
	(void)state;
	CUstream s;
	CUevent e1, e2, nt;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&e1, 0));
	CHECK(cuEventCreate(&e2, 0));
	CHECK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
	float ms;
	CHECK(cuEventQuery(e1)); /* never recorded: complete */
	assert_int_equal(cuEventElapsedTime(&ms, e1, e2), CUDA_ERROR_INVALID_HANDLE);
	CHECK(cuEventRecord(e1, s));
	CHECK(cuLaunchHostFunc(s, set_flag_late, NULL));
	CHECK(cuEventRecordWithFlags(e2, s, 0));
	CHECK(cuEventRecord(nt, s));
	assert_int_equal(cuEventQuery(e2), CUDA_ERROR_NOT_READY);
	assert_int_equal(cuEventElapsedTime(&ms, e1, e2), CUDA_ERROR_NOT_READY);
	CHECK(cuEventSynchronize(e2));
	CHECK(cuEventQuery(e2));
	CHECK(cuEventElapsedTime(&ms, e1, e2));
	/* a host function: 1000 simulated ns (the legacy model: no launch cost) */
	assert_true(ms > 0.0009f && ms < 0.0011f);
	CHECK(cuEventSynchronize(nt));
	assert_int_equal(cuEventElapsedTime(&ms, e1, nt), CUDA_ERROR_INVALID_HANDLE);
	CHECK(cuEventDestroy(e1));
	assert_int_equal(cuEventQuery(e1), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuEventRecord(e1, s), CUDA_ERROR_INVALID_HANDLE);
	CHECK(cuEventDestroy(e2));
	CHECK(cuEventDestroy(nt));
	CHECK(cuStreamDestroy(s));
}

static void test_destroyed_stream_finishes_work(void **state)
{
	(void)state;
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	atomic_store(&flag, 0);
	CHECK(cuLaunchHostFunc(s, set_flag_late, NULL));
	CHECK(cuStreamDestroy(s));
	CHECK(cuCtxSynchronize());
	assert_int_equal(atomic_load(&flag), 1);
}

static void test_stream_ordered_alloc(void **state)
{
	(void)state;
	CUstream s;
	CHECK(cuStreamCreate(&s, 0));
	CUdeviceptr p;
	CHECK(cuMemAllocAsync(&p, 256, s));
	CHECK(cuMemsetD32Async(p, 9, 64, s));
	unsigned v = 0;
	CHECK(cuMemcpyDtoHAsync(&v, p + 8, 4, s)); /* pageable: returns when done */
	assert_int_equal(v, 9);
	CHECK(cuMemFreeAsync(p, s));
	assert_int_equal(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE); /* double free */
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(cuMemcpyDtoH(&v, p, 4), CUDA_ERROR_INVALID_VALUE);
	/* Freed by the host before the (slowed) stream even reached the
	 * allocation: the memory is usable in between, in stream order. */
	CUdeviceptr out;
	CHECK(cuMemAlloc(&out, 4));
	CHECK(cuMemAllocAsync(&p, 256, s));
	CHECK(cuMemsetD32Async(p, 11, 64, s));
	CHECK(cuMemcpyDtoDAsync(out, p + 16, 4, s));
	CHECK(cuMemFreeAsync(p, s));
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(read_u32(out), 11);
	CHECK(cuMemFree(out));
	CHECK(cuStreamDestroy(s));
}

/* An asynchronous copy from pinned memory reads the buffer when it runs;
 * one from pageable memory reads it at the call (staging). */
static unsigned copy_then_change(bool pinned)
{
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	unsigned *host, pageable;
	if (pinned)
		CHECK(cuMemHostAlloc((void **)&host, 4, CU_MEMHOSTALLOC_PORTABLE));
	else
		host = &pageable;
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 4));
	*host = 1;
	CHECK(cuMemcpyHtoDAsync(p, host, 4, s)); /* runs 100 ms later */
	*host = 2;
	CHECK(cuStreamSynchronize(s));
	unsigned v = read_u32(p);
	if (pinned) {
		unsigned type = 0;
		CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		                            (CUdeviceptr)(uintptr_t)host));
		assert_int_equal(type, CU_MEMORYTYPE_HOST);
		CHECK(cuMemFreeHost(host));
		assert_int_equal(cuMemFreeHost(host), CUDA_ERROR_INVALID_VALUE);
	}
	CHECK(cuMemFree(p));
	CHECK(cuStreamDestroy(s));
	return v;
}

static void test_pinned_copies_are_asynchronous(void **state)
{
	(void)state;
	assert_int_equal(copy_then_change(false), 1);
	assert_int_equal(copy_then_change(true), 2);
	/* a device-to-host copy into pinned memory returns before it ran */
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	unsigned *host;
	CHECK(cuMemAllocHost((void **)&host, 4));
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 4));
	CHECK(cuMemsetD32(p, 7, 1));
	CHECK(cuCtxSynchronize());
	*host = 0;
	CHECK(cuMemcpyDtoHAsync(host, p, 4, s));
	assert_int_equal(*(volatile unsigned *)host, 0);
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(*host, 7);
	CHECK(cuMemFreeHost(host));
	CHECK(cuMemFree(p));
	CHECK(cuStreamDestroy(s));
}

static void *other_thread_stream(void *arg)
{
	CUcontext c;
	CHECK(cuDevicePrimaryCtxRetain(&c, 0));
	CHECK(cuCtxSetCurrent(c));
	CHECK(cuStreamGetId(CU_STREAM_PER_THREAD, arg));
	CHECK(cuDevicePrimaryCtxRelease(0));
	return NULL;
}

CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId);

static void test_per_thread_stream(void **state)
{
	(void)state;
	unsigned long long legacy, mine, mine_ptsz, other = 0;
	CHECK(cuStreamGetId(NULL, &legacy));
	CHECK(cuStreamGetId(CU_STREAM_LEGACY, &mine));
	assert_int_equal(legacy, mine);
	CHECK(cuStreamGetId(CU_STREAM_PER_THREAD, &mine));
	CHECK(cuStreamGetId_ptsz(NULL, &mine_ptsz)); /* 0 means per-thread in _ptsz */
	assert_int_equal(mine, mine_ptsz);
	assert_int_not_equal(mine, legacy);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, other_thread_stream, &other), 0);
	pthread_join(t, NULL);
	assert_int_not_equal(other, 0);
	assert_int_not_equal(other, mine);
	assert_int_not_equal(other, legacy);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("SIMCUDA_SLOW_STREAM") == NULL) {
		setenv("SIMCUDA_SLOW_STREAM", "100", 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fifo_order),
	    cmocka_unit_test(test_event_dependency),
	    cmocka_unit_test(test_legacy_stream_sync),
	    cmocka_unit_test(test_blocking_waits_for_legacy),
	    cmocka_unit_test(test_streams_run_concurrently),
	    cmocka_unit_test(test_events),
	    cmocka_unit_test(test_destroyed_stream_finishes_work),
	    cmocka_unit_test(test_stream_ordered_alloc),
	    cmocka_unit_test(test_per_thread_stream),
	    cmocka_unit_test(test_pinned_copies_are_asynchronous),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
