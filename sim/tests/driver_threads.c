/*
 * driver_threads.c — many host threads using the driver at once (each
 * with its own streams, events, allocations and module handles, plus
 * cross-thread event waits), so that the driver's locking, reference
 * counts and handle table are exercised under ASan+UBSan.  Results are
 * checked, so a lost or reordered op shows as wrong data.
 */
#include "driver_common.h"

#include <pthread.h>

enum { THREADS = 4, ROUNDS = 150, N = 256 };

static CUmodule mod;
static CUevent shared_done[THREADS];
static pthread_barrier_t barrier;

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	CUcontext c;
	CHECK(cuDevicePrimaryCtxRetain(&c, 0));
	CHECK(cuCtxSetCurrent(c));
	CUfunction plus = get_fn(mod, "copy_plus_one");
	CUstream s;
	CHECK(cuStreamCreate(&s, me % 2 ? CU_STREAM_NON_BLOCKING : 0));
	CUdeviceptr a, b;
	CHECK(cuMemAllocAsync(&a, N * 4, s));
	CHECK(cuMemAllocAsync(&b, N * 4, s));
	CHECK(cuMemsetD32Async(a, (unsigned)me * 1000, N, s));
	int n = N;
	for (int r = 0; r < ROUNDS; r++) {
		/* a -> b -> a, each +1: a grows by 2 per round */
		void *ab[] = {&a, &b, &n}, *ba[] = {&b, &a, &n};
		CHECK(cuLaunchKernel(plus, 1, 1, 1, N, 1, 1, 0, s, ab, NULL));
		CHECK(cuLaunchKernel(plus, 1, 1, 1, N, 1, 1, 0, s, ba, NULL));
		CUevent e;
		CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
		CHECK(cuEventRecord(e, s));
		if (r % 10 == 0) {
			CUstream tmp;
			CHECK(cuStreamCreate(&tmp, CU_STREAM_NON_BLOCKING));
			CHECK(cuStreamWaitEvent(tmp, e, 0));
			CHECK(cuStreamDestroy(tmp));
		}
		CHECK(cuEventDestroy(e));
	}
	CHECK(cuEventRecord(shared_done[me], s));
	pthread_barrier_wait(&barrier);
	/* wait for a neighbour's work through its event */
	CHECK(cuStreamWaitEvent(s, shared_done[(me + 1) % THREADS], 0));
	unsigned out[N];
	CHECK(cuMemcpyDtoHAsync(out, a, sizeof(out), s));
	for (int i = 0; i < N; i++)
		assert_int_equal(out[i], (unsigned)me * 1000 + 2 * ROUNDS);
	CHECK(cuMemFreeAsync(a, s));
	CHECK(cuMemFreeAsync(b, s));
	CHECK(cuStreamSynchronize(s));
	pthread_barrier_wait(&barrier); /* neighbours still wait on our event */
	CHECK(cuStreamDestroy(s));
	CHECK(cuDevicePrimaryCtxRelease(0));
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	setup_context();
	mod = load_test_module();
	for (int i = 0; i < THREADS; i++)
		CHECK(cuEventCreate(&shared_done[i], 0));
	pthread_barrier_init(&barrier, NULL, THREADS);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(cuCtxSynchronize());
	struct simcuda_stats st;
	simcudaGetStats(&st);
	assert_int_equal(st.kernels, THREADS * ROUNDS * 2);
	assert_int_equal(st.physical_in_use, 0);
	for (int i = 0; i < THREADS; i++)
		CHECK(cuEventDestroy(shared_done[i]));
	CHECK(cuModuleUnload(mod));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
