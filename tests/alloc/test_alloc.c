/*
 * test_alloc.c — the VMM allocator's bookkeeping against a fake driver that
 * checks every map and unmap: granularity rounding, small-allocation
 * packing, deterministic addresses across iterations, stream-ordered reuse
 * (same stream: nothing; other stream: a wait; synchronous: the host
 * fake.waits), reclaiming and a bounded pool, run mode's address list, and
 * out-of-memory cleanup; run mode's quarantine, deferred unmaps (evictions)
 * and remapping at the same address, and the budget cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../alloc/alloc.h"
#include "../../core/driver.h"
#include "../core/fake_driver.h"

#define GRAN  FAKE_GRAN
#define TOTAL FAKE_TOTAL

static int setup(void **state)
{
	(void)state;
	fake_install();
	return 0;
}

static CUstream S1 = (CUstream)0x111, S2 = (CUstream)0x222;

static CUdeviceptr alloc(size_t n, CUstream s, int async)
{
	CUdeviceptr p = 0;
	struct remat_alloc_info info;
	assert_int_equal(remat_alloc(&p, n, s, async, &info), CUDA_SUCCESS);
	assert_int_equal(info.size, n);
	return p;
}

static void freep(CUdeviceptr p, CUstream s, int async)
{
	CUresult rc;
	assert_int_equal(remat_free(p, s, async, &rc), 1);
}

static void test_large_rounding_and_unmap(void **state)
{
	(void)state;
	fake.dev = 1;
	int before = fake.nmapped;
	CUdeviceptr p = 0;
	struct remat_alloc_info info;
	assert_int_equal(remat_alloc(&p, 3 * GRAN + 1, NULL, 0, &info), CUDA_SUCCESS);
	assert_int_equal(p % GRAN, 0);
	assert_int_equal(info.rounded, 4 * GRAN);
	assert_int_equal(info.small, 0);
	assert_int_equal(fake.nmapped - before, 4);
	assert_true(remat_alloc_owns(p, NULL));
	assert_false(remat_alloc_owns(p + 8, NULL));
	freep(p, NULL, 0); /* synchronous: unmapped at once */
	assert_int_equal(fake.nmapped, before);
	assert_false(remat_alloc_owns(p, NULL));
	CUresult rc;
	assert_int_equal(remat_free(p, NULL, 0, &rc), 0); /* double free: not ours any more */
	assert_int_equal(remat_free(0x1234, NULL, 0, &rc), 0);
}

static void test_small_packing(void **state)
{
	(void)state;
	fake.dev = 2;
	struct remat_alloc_stats st0, st1;
	remat_alloc_stats(&st0);
	CUdeviceptr a = alloc(100, NULL, 0), b = alloc(300, NULL, 0), c = alloc(GRAN - 1, NULL, 0);
	struct remat_alloc_info info;
	assert_true(remat_alloc_owns(a, &info));
	assert_int_equal(info.small, 1);
	assert_int_equal(info.rounded, 0);
	assert_int_equal(a % 256, 0);
	assert_int_equal(b, a + 256); /* packed */
	assert_int_equal(c % 256, 0);
	remat_alloc_stats(&st1);
	assert_int_equal(st1.small_pool - st0.small_pool, 2 * GRAN);
	int before = fake.nmapped;
	freep(a, NULL, 0);
	freep(b, NULL, 0);
	freep(c, NULL, 0);
	assert_int_equal(fake.nmapped, before);  /* small chunks are never unmapped */
	assert_int_equal(alloc(64, NULL, 0), a); /* first fit: the same slot again */
}

static void iteration(CUdeviceptr out[4])
{
	out[0] = alloc(100 * 1024, S1, 1);
	out[1] = alloc(300 * 1024, S1, 1);
	freep(out[0], S1, 1);
	out[2] = alloc(50 * 1024, S1, 1);
	out[3] = alloc(200, S1, 1);
	freep(out[1], S1, 1);
	freep(out[2], S1, 1);
	freep(out[3], S1, 1);
}

static void test_deterministic_addresses(void **state)
{
	(void)state;
	fake.dev = 3;
	CUdeviceptr weights = alloc(5 * GRAN, NULL, 0);
	CUdeviceptr first[4], again[4];
	iteration(first);
	for (int it = 0; it < 3; it++) {
		if (it == 1)
			fake_complete_all_events(); /* timing must not matter */
		iteration(again);
		assert_memory_equal(first, again, sizeof(first));
	}
	assert_true(weights != first[0]);
}

static void test_stream_ordered_reuse(void **state)
{
	(void)state;
	fake.dev = 4;
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	freep(a, S1, 1); /* the stream has not reached the free yet */
	int w = fake.waits, hw = fake.host_waits, m = fake.nmapped;
	CUdeviceptr b = alloc(2 * GRAN, S1, 1);
	assert_int_equal(b, a);
	assert_int_equal(fake.waits, w); /* same stream: ordered already */
	assert_int_equal(fake.host_waits, hw);
	assert_int_equal(fake.nmapped, m); /* chunks kept mapped, not remapped */
	freep(b, S1, 1);
	CUdeviceptr c = alloc(2 * GRAN, S2, 1);
	assert_int_equal(c, a);
	assert_int_equal(fake.waits, w + 1); /* other stream fake.waits on the free's event */
	freep(c, S2, 1);
	CUdeviceptr d = alloc(GRAN, NULL, 0);
	assert_int_equal(d, a);
	assert_int_equal(fake.host_waits, hw + 1); /* synchronous: the host fake.waits */
	freep(d, NULL, 0);
}

static void test_reclaim_and_bounded_pool(void **state)
{
	(void)state;
	fake.dev = 5;
	struct remat_alloc_stats st;
	CUdeviceptr p[40];
	for (int i = 0; i < 40; i++)
		p[i] = alloc(GRAN, S1, 1);
	for (int i = 0; i < 40; i++)
		freep(p[i], S1, 1);
	remat_alloc_stats(&st);
	uint64_t held = st.physical;
	fake_complete_all_events();
	CUdeviceptr q = alloc(GRAN, S1, 1); /* reclaims the completed frees */
	remat_alloc_stats(&st);
	assert_true(st.physical < held);
	/* At most 16 spare chunks per device survive the trim. */
	assert_true(st.pooled <= 16ULL * GRAN * 5);
	freep(q, S1, 1);
}

static void test_follow_list(void **state)
{
	(void)state;
	fake.dev = 6;
	CUdeviceptr a = alloc(GRAN, NULL, 0), b = alloc(GRAN, NULL, 0), c = alloc(GRAN, NULL, 0);
	freep(a, NULL, 0);
	freep(b, NULL, 0);
	freep(c, NULL, 0);
	CUdeviceptr want[2] = {c, a};
	remat_alloc_follow(want, 2);
	assert_int_equal(alloc(GRAN, NULL, 0), c);
	assert_int_equal(alloc(GRAN, NULL, 0), a);
	assert_int_equal(alloc(GRAN, NULL, 0), b); /* list used up: first fit again */
}

static void test_out_of_memory_cleans_up(void **state)
{
	(void)state;
	fake.dev = 7;
	fake_complete_all_events();
	fake.create_limit = fake.created - fake.released + 3;
	int m = fake.nmapped;
	CUdeviceptr p = 0;
	assert_int_equal(remat_alloc(&p, 8 * GRAN, NULL, 0, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(fake.nmapped, m);
	assert_int_equal(remat_alloc(&p, 0, NULL, 0, NULL), CUDA_ERROR_INVALID_VALUE);
	fake.create_limit = 1 << 30;
	CUdeviceptr q = alloc(8 * GRAN, NULL, 0); /* the range was given back */
	freep(q, NULL, 0);
}

static void test_quarantine(void **state)
{
	(void)state;
	fake.dev = 8;
	remat_alloc_quarantine(1);
	CUdeviceptr a = alloc(GRAN, NULL, 0);
	freep(a, NULL, 0);
	CUdeviceptr b = alloc(GRAN, NULL, 0);
	assert_true(b != a); /* not reused within the iteration */
	freep(b, NULL, 0);
	remat_alloc_boundary(0);
	assert_int_equal(alloc(GRAN, NULL, 0), a); /* first fit again after the boundary */
	remat_alloc_quarantine(0);
}

static void test_evict_and_remap(void **state)
{
	(void)state;
	fake.dev = 9;
	fake_complete_all_events();
	remat_alloc_poll(1); /* earlier tests' frees out of the way */
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	int m = fake.nmapped;
	assert_true(remat_alloc_mapped(a, 2 * GRAN));
	CUstream both[2] = {S1, S2};
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, both, 2), 0);
	assert_int_equal(fake.nmapped, m); /* the streams may still use it */
	assert_false(remat_alloc_mapped(a, 2 * GRAN));
	remat_alloc_poll(0);
	assert_int_equal(fake.nmapped, m);
	fake_complete_all_events();
	remat_alloc_poll(0);
	assert_int_equal(fake.nmapped, m - 2); /* unmapped once both streams got there */
	assert_int_equal(remat_alloc_map(a, 2 * GRAN, S1), CUDA_SUCCESS);
	assert_int_equal(fake.nmapped, m); /* the same address again */
	assert_true(remat_alloc_mapped(a, 2 * GRAN));
	/* Mapped again before the unmap happened: the chunks stay, the new user
	 * fake.waits for the eviction's event instead. */
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, &S2, 1), 0);
	int w = fake.waits, c = fake.created;
	assert_int_equal(remat_alloc_map(a, 2 * GRAN, S1), CUDA_SUCCESS);
	assert_int_equal(fake.waits, w + 2);
	assert_int_equal(fake.created, c);
	assert_int_equal(fake.nmapped, m);
	/* Freeing an evicted allocation unmaps nothing twice. */
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, &S1, 1), 0);
	fake_complete_all_events();
	remat_alloc_poll(0);
	freep(a, NULL, 0);
	assert_int_equal(fake.nmapped, m - 2);
}

static void test_budget(void **state)
{
	(void)state;
	fake.dev = 10;
	fake_complete_all_events();
	remat_alloc_poll(1);
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	uint64_t budget = st.physical + 3 * GRAN;
	remat_alloc_set_budget(budget);
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	CUdeviceptr p = 0;
	fake.last_warn[0] = '\0';
	assert_int_equal(remat_alloc(&p, 2 * GRAN, S1, 1, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	assert_non_null(strstr(fake.last_warn, "exceeds REMAT_BUDGET"));
	assert_non_null(strstr(fake.last_warn, "by 65536 bytes"));
	/* An eviction the stream has not reached yet: the allocation fake.waits for
	 * it instead of failing. */
	CUstream s1 = S1;
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, &s1, 1), 0);
	int hw = fake.host_waits;
	CUdeviceptr b = alloc(2 * GRAN, S1, 1);
	assert_true(fake.host_waits > hw);
	remat_alloc_stats(&st);
	assert_true(st.physical <= budget);
	freep(b, NULL, 0);
	freep(a, NULL, 0);
	remat_alloc_set_budget(0);
}

static void fill(CUdeviceptr p, size_t n, unsigned seed)
{
	uint8_t *b = malloc(n);
	assert_non_null(b);
	for (size_t k = 0; k < n; k++)
		b[k] = (uint8_t)(k * 31 + seed);
	fake_write(p, b, n);
	free(b);
}

static int holds(CUdeviceptr p, size_t n, unsigned seed)
{
	uint8_t *b = malloc(n);
	assert_non_null(b);
	fake_read(b, p, n);
	int ok = 1;
	for (size_t k = 0; k < n && ok; k++)
		ok = b[k] == (uint8_t)(k * 31 + seed);
	free(b);
	return ok;
}

/* Swapping before a plan: a device of 4 chunks holding two 2-chunk
 * allocations; a third swaps the least recently used one to the host; an op
 * touching it brings it back bit-exact at the same address, making room by
 * swapping the next least recently used one but never what the op pins. */
static void test_swap(void **state)
{
	(void)state;
	fake.dev = 11;
	fake.create_limit = fake.created - fake.released + 4;
	remat_alloc_swap_enable(1);
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	CUdeviceptr b = alloc(2 * GRAN - 100, S1, 1);
	fill(a, 2 * GRAN, 1);
	fill(b, 2 * GRAN - 100, 2);
	assert_false(remat_alloc_swap_armed);
	int s0 = fake.syncs;
	CUdeviceptr c = alloc(2 * GRAN, S2, 1);
	assert_true(fake.syncs > s0); /* queued work finished before the copy */
	assert_int_equal(remat_alloc_nswapped, 1);
	assert_true(remat_alloc_swap_armed);
	assert_false(remat_alloc_mapped(a, 2 * GRAN)); /* a was the oldest */
	assert_true(remat_alloc_mapped(b, 2 * GRAN - 100));
	fill(c, 2 * GRAN, 3);

	/* An op with a pointer into a's second page. */
	uint64_t pins[8];
	size_t npins = 0;
	uint64_t stamp = remat_alloc_touch_begin();
	uint64_t r[4] = {a + GRAN + 8, a + GRAN + 9, 12345, 12346};
	assert_int_equal(remat_alloc_touch(stamp, r, 2, pins, &npins, 8), 1);
	assert_int_equal(npins, 1);
	assert_int_equal(pins[0], a);
	assert_int_equal(remat_alloc_swap_in(pins, npins), CUDA_SUCCESS);
	assert_true(remat_alloc_mapped(a, 2 * GRAN));
	assert_true(holds(a, 2 * GRAN, 1));
	/* b, the least recently used of b and c, made room. */
	assert_false(remat_alloc_mapped(b, 2 * GRAN - 100));
	assert_true(remat_alloc_mapped(c, 2 * GRAN));
	assert_int_equal(remat_alloc_nswapped, 1);

	/* Everything pinned: nothing can go, the allocation fails. */
	uint64_t stamp2 = remat_alloc_touch_begin();
	uint64_t r2[2] = {c, c + 2 * GRAN};
	assert_int_equal(remat_alloc_touch(stamp2, r2, 1, pins, &npins, 8), 0);
	assert_int_equal(npins, 2);
	CUdeviceptr d = 0;
	assert_int_equal(remat_alloc(&d, GRAN, S1, 1, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	remat_alloc_unpin(pins, npins);
	npins = 0;

	/* Freed while on the host: its copy goes (ASan sees any leak). */
	freep(b, NULL, 0);
	assert_int_equal(remat_alloc_nswapped, 0);
	struct remat_swap_stats st;
	remat_alloc_swap_stats(&st);
	assert_int_equal(st.outs, 2);
	assert_int_equal(st.ins, 1);
	assert_int_equal(st.in_bytes, 2 * GRAN);
	assert_int_equal(st.host, 0);
	/* b went out while a was still on the host. */
	assert_int_equal(st.host_max, 4 * GRAN - 100);

	/* Bring everything back: c goes out for d, all return with no room
	 * problem once d is freed. */
	d = alloc(2 * GRAN, S1, 1);
	assert_int_equal(remat_alloc_nswapped, 1);
	freep(d, NULL, 0);
	remat_alloc_poll(1);
	assert_int_equal(remat_alloc_swap_in(NULL, 0), CUDA_SUCCESS);
	assert_int_equal(remat_alloc_nswapped, 0);
	assert_true(holds(a, 2 * GRAN, 1));
	assert_true(holds(c, 2 * GRAN, 3));

	/* Without swapping a full device just fails. */
	remat_alloc_swap_enable(0);
	assert_int_equal(remat_alloc(&d, 2 * GRAN, S1, 1, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(remat_alloc_nswapped, 0);
	freep(a, NULL, 0);
	freep(c, NULL, 0);
	fake.create_limit = 1 << 30;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_large_rounding_and_unmap),
	    cmocka_unit_test(test_small_packing),
	    cmocka_unit_test(test_deterministic_addresses),
	    cmocka_unit_test(test_stream_ordered_reuse),
	    cmocka_unit_test(test_reclaim_and_bounded_pool),
	    cmocka_unit_test(test_follow_list),
	    cmocka_unit_test(test_out_of_memory_cleans_up),
	    cmocka_unit_test(test_quarantine),
	    cmocka_unit_test(test_evict_and_remap),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_swap),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
