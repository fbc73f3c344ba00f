/*
 * test_alloc.c — the trainers' caching allocator (trainer_pool.c) and its
 * expandable segments (trainer_vmm.c) on the simulated device: block
 * placement, splitting and merging, the small and large pools, reuse only
 * on the allocating stream, record_stream holding a block back until the
 * other stream is done, VMM ranges growing chunk by chunk without moving.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "trainer.h"

const char *trainer_prog = "test_alloc";

#define KiB (1ull << 10)
#define MiB (1ull << 20)

static cudaStream_t s1, s2;

static int setup(void **state)
{
	(void)state;
	if (cudaSetDevice(0) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) != cudaSuccess)
		return -1;
	return 0;
}

static char *take(size_t bytes, cudaStream_t s)
{
	const char *oom = NULL;
	char *p = pool_alloc(bytes, s, &oom);
	assert_non_null(p);
	assert_null(oom);
	return p;
}

static struct pool_stats stats(void)
{
	struct pool_stats st;
	pool_stats(&st);
	return st;
}

static size_t device_used(void)
{
	size_t free_bytes = 0, total = 0;
	assert_int_equal(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
	return total - free_bytes;
}

/* Small requests round to 512 bytes and sit side by side in one 2 MiB
 * segment; a large one gets a 20 MiB segment of its own. */
static void test_pools_and_rounding(void **state)
{
	(void)state;
	pool_init(ALLOC_CACHING);
	size_t before = device_used();
	char *a = take(100, s1), *b = take(600, s1), *c = take(512, s1);
	assert_ptr_equal(b, a + 512);
	assert_ptr_equal(c, b + 1024);
	assert_int_equal(stats().segments, 1);
	assert_int_equal(stats().reserved_bytes, 2 * MiB);
	char *big = take(3 * MiB, s1);
	assert_int_equal(stats().segments, 2);
	assert_int_equal(stats().reserved_bytes, 22 * MiB);
	assert_true(big < a || big >= a + 2 * MiB);
	/* The rest of the large segment (17 MiB) serves the next large one. */
	char *big2 = take(2 * MiB, s1);
	assert_ptr_equal(big2, big + 3 * MiB);
	assert_int_equal(stats().device_allocs, 2);
	assert_int_equal(device_used() - before, 22 * MiB);
	/* A small request never comes from the large pool's free space. */
	char *d = take(4 * KiB, s1);
	assert_ptr_equal(d, c + 512);
	pool_release();
	assert_int_equal(device_used(), before);
}

/* A freed block is reused by the best fit; freed neighbours merge, so the
 * whole segment serves one request again. */
static void test_split_and_merge(void **state)
{
	(void)state;
	pool_init(ALLOC_CACHING);
	char *a = take(64 * KiB, s1), *b = take(64 * KiB, s1), *c = take(64 * KiB, s1);
	char *d = take(16 * KiB, s1);
	pool_free(b, s1);
	pool_free(d, s1);
	/* 16 KiB fits both holes: the tail after c (2 MiB - 192 KiB, merged
	 * with d's block) and b's 64 KiB; best fit is b's. */
	char *e = take(16 * KiB, s1);
	assert_ptr_equal(e, b);
	pool_free(e, s1);
	pool_free(a, s1);
	pool_free(c, s1);
	struct pool_stats st = stats();
	assert_true(st.merges >= 3);
	char *whole = take(1 * MiB, s1);
	assert_ptr_equal(whole, a);
	assert_int_equal(stats().segments, 1);
	assert_int_equal(stats().reused, 5); /* e, whole and the three after a */
	pool_free(whole, s1);
	pool_release();
}

/* A block freed on s1 is not handed to s2: s2's work is not ordered after
 * s1's.  Back on s1 it is reused. */
static void test_stream_ownership(void **state)
{
	(void)state;
	pool_init(ALLOC_CACHING);
	char *x = take(256 * KiB, s1);
	pool_free(x, s1);
	char *y = take(256 * KiB, s2);
	assert_true(y < x || y >= x + 2 * MiB); /* another segment, s2's */
	assert_int_equal(stats().segments, 2);
	char *z = take(256 * KiB, s1);
	assert_ptr_equal(z, x);
	pool_release();
}

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open;

/* Holds its stream until the test opens the gate. */
static void CUDART_CB gate(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gate_lock);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

/* record_stream: a block s2 also used is not reused before s2 gets past
 * the work it had queued when the block was freed. */
static void test_record_stream(void **state)
{
	(void)state;
	pool_init(ALLOC_CACHING);
	char *x = take(128 * KiB, s1);
	gate_open = 0;
	assert_int_equal(cudaLaunchHostFunc(s2, gate, NULL), cudaSuccess);
	assert_int_equal(cudaMemsetAsync(x, 1, 128 * KiB, s2), cudaSuccess);
	pool_record_stream(x, s2);
	pool_record_stream(x, s1); /* its own stream: nothing to record */
	pool_free(x, s1);
	assert_int_equal(stats().deferred_frees, 1);
	char *y = take(128 * KiB, s1);
	assert_ptr_not_equal(y, x);
	pthread_mutex_lock(&gate_lock);
	gate_open = 1;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
	char *z = take(128 * KiB, s1);
	assert_ptr_equal(z, x);
	pool_release();
}

/* vmm: one reserved range per stream and pool, grown by whole chunks at
 * its end; blocks run on across chunk boundaries, nothing moves. */
static void test_vmm_grows_in_place(void **state)
{
	(void)state;
	pool_init(ALLOC_VMM);
	size_t before = device_used();
	char *a = take(1 * MiB, s1), *b = take(1 * MiB, s1), *c = take(1 * MiB, s1);
	assert_ptr_equal(b, a + 1 * MiB);
	assert_ptr_equal(c, b + 1 * MiB); /* across the first chunk's end */
	struct pool_stats st = stats();
	assert_int_equal(st.segments, 1);
	assert_int_equal(st.chunks, 2); /* the simulator's 2 MiB granularity */
	assert_int_equal(st.device_allocs, 2);
	assert_int_equal(device_used() - before, 4 * MiB);
	/* The mapped range is device memory the program can write. */
	assert_int_equal(cudaMemset(a, 7, 3 * MiB), cudaSuccess);
	unsigned char host = 0;
	assert_int_equal(cudaMemcpy(&host, c + 1 * MiB - 1, 1, cudaMemcpyDeviceToHost),
	                 cudaSuccess);
	assert_int_equal(host, 7);
	/* The free tail serves the next request; the one after grows the
	 * range by one chunk, right behind it. */
	char *d = take(1 * MiB, s1);
	assert_ptr_equal(d, c + 1 * MiB);
	assert_int_equal(stats().chunks, 2);
	char *e = take(1 * MiB, s1);
	assert_ptr_equal(e, d + 1 * MiB);
	assert_int_equal(stats().chunks, 3);
	/* A large request: the large pool's own range, 20 MiB chunks. */
	char *big = take(3 * MiB, s1);
	assert_true(big < a || big >= a + 6 * MiB);
	assert_int_equal(stats().segments, 2);
	assert_int_equal(stats().chunks, 4);
	assert_int_equal(device_used() - before, 26 * MiB);
	/* Freed blocks are reused by best fit, as in the caching mode. */
	pool_free(b, s1);
	char *b2 = take(512 * KiB, s1);
	assert_ptr_equal(b2, b);
	assert_int_equal(stats().chunks, 4);
	/* Another stream gets its own range. */
	char *other = take(4 * KiB, s2);
	assert_true(other < a || other >= a + 6 * MiB);
	assert_int_equal(stats().segments, 3);
	pool_release();
	assert_int_equal(device_used(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pools_and_rounding), cmocka_unit_test(test_split_and_merge),
	    cmocka_unit_test(test_stream_ownership),   cmocka_unit_test(test_record_stream),
	    cmocka_unit_test(test_vmm_grows_in_place),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
