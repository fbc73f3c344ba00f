/*
 * test_alloc.c — the VMM allocator's bookkeeping against a fake driver that
 * checks every map and unmap: granularity rounding, small-allocation
 * packing, deterministic addresses across iterations, stream-ordered reuse
 * (same stream: nothing; other stream: a wait; synchronous: the host
 * waits), reclaiming and a bounded pool, run mode's address list, and
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

#include "../../interpose/remat.h"
#include "../../interpose/alloc/alloc.h"

/* What the allocator links against outside interpose/alloc/. */
struct remat_driver remat_drv;
struct remat_config remat_cfg;
int remat_tracking;
void remat_log(int level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}
static char last_warn[512];
void remat_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_warn, sizeof(last_warn), fmt, ap);
	va_end(ap);
}

/* ---- the fake driver --------------------------------------------------- */

#define GRAN  (64u << 10)
#define TOTAL (4u << 20)

static CUdevice cur_dev;
static int created, released, create_limit = 1 << 30;
static struct {
	uint64_t va;
	CUmemGenericAllocationHandle h;
	uint8_t *mem; /* what a kernel would see there: garbage until written */
} mapped[4096];
static int nmapped;
static int ev_done[1024], nev, waits, host_waits;

static CUresult ctx_get_device(CUdevice *d)
{
	*d = cur_dev;
	return CUDA_SUCCESS;
}
static CUresult dev_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)a;
	(void)d;
	*v = 1;
	return CUDA_SUCCESS;
}
static CUresult granularity(size_t *g, const CUmemAllocationProp *p,
                            CUmemAllocationGranularity_flags f)
{
	(void)p;
	(void)f;
	*g = GRAN;
	return CUDA_SUCCESS;
}
static CUresult total_mem(size_t *t, CUdevice d)
{
	(void)d;
	*t = TOTAL;
	return CUDA_SUCCESS;
}
static CUresult reserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                        unsigned long long f)
{
	(void)size;
	(void)align;
	(void)addr;
	(void)f;
	*p = 0x100000000000ULL + (uint64_t)cur_dev * 0x10000000000ULL;
	return CUDA_SUCCESS;
}
static CUresult create(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *p,
                       unsigned long long f)
{
	(void)p;
	(void)f;
	assert_int_equal(size, GRAN);
	if (created - released >= create_limit)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*h = (CUmemGenericAllocationHandle)++created;
	return CUDA_SUCCESS;
}
static CUresult release(CUmemGenericAllocationHandle h)
{
	(void)h;
	released++;
	return CUDA_SUCCESS;
}
static int find_map(uint64_t va)
{
	for (int i = 0; i < nmapped; i++)
		if (mapped[i].va == va)
			return i;
	return -1;
}
static CUresult map(CUdeviceptr va, size_t size, size_t off, CUmemGenericAllocationHandle h,
                    unsigned long long f)
{
	(void)off;
	(void)f;
	assert_int_equal(size, GRAN);
	assert_int_equal(va % GRAN, 0);
	assert_int_equal(find_map(va), -1); /* never mapped twice */
	mapped[nmapped].va = va;
	mapped[nmapped].h = h;
	mapped[nmapped].mem = malloc(GRAN);
	assert_non_null(mapped[nmapped].mem);
	memset(mapped[nmapped].mem, 0xdd, GRAN);
	nmapped++;
	return CUDA_SUCCESS;
}
static CUresult unmap(CUdeviceptr va, size_t size)
{
	assert_int_equal(size, GRAN);
	int i = find_map(va);
	assert_true(i >= 0);
	free(mapped[i].mem);
	mapped[i] = mapped[--nmapped];
	return CUDA_SUCCESS;
}
static CUresult set_access(CUdeviceptr va, size_t size, const CUmemAccessDesc *d, size_t n)
{
	(void)d;
	(void)n;
	for (uint64_t a = va; a < va + size; a += GRAN)
		assert_true(find_map(a) >= 0);
	return CUDA_SUCCESS;
}
/* Copies touch mapped pages only (the simulator faults otherwise). */
static int syncs;
static CUresult ctx_sync(void)
{
	syncs++;
	return CUDA_SUCCESS;
}
static uint8_t *dev_byte(uint64_t va)
{
	int i = find_map(va / GRAN * GRAN);
	assert_true(i >= 0);
	return mapped[i].mem + va % GRAN;
}
static CUresult dtoh(void *dst, CUdeviceptr src, size_t n)
{
	for (size_t k = 0; k < n; k++)
		((uint8_t *)dst)[k] = *dev_byte(src + k);
	return CUDA_SUCCESS;
}
static CUresult htod(CUdeviceptr dst, const void *src, size_t n)
{
	for (size_t k = 0; k < n; k++)
		*dev_byte(dst + k) = ((const uint8_t *)src)[k];
	return CUDA_SUCCESS;
}
static CUresult ev_create(CUevent *e, unsigned f)
{
	(void)f;
	*e = (CUevent)(uintptr_t)++nev;
	return CUDA_SUCCESS;
}
static CUresult ev_record(CUevent e, CUstream s)
{
	(void)s;
	ev_done[(uintptr_t)e] = 0;
	return CUDA_SUCCESS;
}
static CUresult ev_query(CUevent e)
{
	return ev_done[(uintptr_t)e] ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
static CUresult ev_sync(CUevent e)
{
	ev_done[(uintptr_t)e] = 1;
	host_waits++;
	return CUDA_SUCCESS;
}
static CUresult stream_wait(CUstream s, CUevent e, unsigned f)
{
	(void)s;
	(void)e;
	(void)f;
	waits++;
	return CUDA_SUCCESS;
}
static CUresult stream_sync(CUstream s)
{
	(void)s;
	return CUDA_SUCCESS;
}

static void complete_all_events(void)
{
	for (int i = 0; i <= nev; i++)
		ev_done[i] = 1;
}

static int setup(void **state)
{
	(void)state;
	remat_drv.cuCtxGetDevice = ctx_get_device;
	remat_drv.cuDeviceGetAttribute = dev_attr;
	remat_drv.cuMemGetAllocationGranularity = granularity;
	remat_drv.cuDeviceTotalMem = total_mem;
	remat_drv.cuMemAddressReserve = reserve;
	remat_drv.cuMemCreate = create;
	remat_drv.cuMemRelease = release;
	remat_drv.cuMemMap = map;
	remat_drv.cuMemUnmap = unmap;
	remat_drv.cuMemSetAccess = set_access;
	remat_drv.cuEventCreate = ev_create;
	remat_drv.cuEventRecord = ev_record;
	remat_drv.cuEventQuery = ev_query;
	remat_drv.cuEventSynchronize = ev_sync;
	remat_drv.cuStreamWaitEvent = stream_wait;
	remat_drv.cuStreamSynchronize = stream_sync;
	remat_drv.cuCtxSynchronize = ctx_sync;
	remat_drv.cuMemcpyDtoH = dtoh;
	remat_drv.cuMemcpyHtoD = htod;
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
	cur_dev = 1;
	int before = nmapped;
	CUdeviceptr p = 0;
	struct remat_alloc_info info;
	assert_int_equal(remat_alloc(&p, 3 * GRAN + 1, NULL, 0, &info), CUDA_SUCCESS);
	assert_int_equal(p % GRAN, 0);
	assert_int_equal(info.rounded, 4 * GRAN);
	assert_int_equal(info.small, 0);
	assert_int_equal(nmapped - before, 4);
	assert_true(remat_alloc_owns(p, NULL));
	assert_false(remat_alloc_owns(p + 8, NULL));
	freep(p, NULL, 0); /* synchronous: unmapped at once */
	assert_int_equal(nmapped, before);
	assert_false(remat_alloc_owns(p, NULL));
	CUresult rc;
	assert_int_equal(remat_free(p, NULL, 0, &rc), 0); /* double free: not ours any more */
	assert_int_equal(remat_free(0x1234, NULL, 0, &rc), 0);
}

static void test_small_packing(void **state)
{
	(void)state;
	cur_dev = 2;
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
	int before = nmapped;
	freep(a, NULL, 0);
	freep(b, NULL, 0);
	freep(c, NULL, 0);
	assert_int_equal(nmapped, before);       /* small chunks are never unmapped */
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
	cur_dev = 3;
	CUdeviceptr weights = alloc(5 * GRAN, NULL, 0);
	CUdeviceptr first[4], again[4];
	iteration(first);
	for (int it = 0; it < 3; it++) {
		if (it == 1)
			complete_all_events(); /* timing must not matter */
		iteration(again);
		assert_memory_equal(first, again, sizeof(first));
	}
	assert_true(weights != first[0]);
}

static void test_stream_ordered_reuse(void **state)
{
	(void)state;
	cur_dev = 4;
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	freep(a, S1, 1); /* the stream has not reached the free yet */
	int w = waits, hw = host_waits, m = nmapped;
	CUdeviceptr b = alloc(2 * GRAN, S1, 1);
	assert_int_equal(b, a);
	assert_int_equal(waits, w); /* same stream: ordered already */
	assert_int_equal(host_waits, hw);
	assert_int_equal(nmapped, m); /* chunks kept mapped, not remapped */
	freep(b, S1, 1);
	CUdeviceptr c = alloc(2 * GRAN, S2, 1);
	assert_int_equal(c, a);
	assert_int_equal(waits, w + 1); /* other stream waits on the free's event */
	freep(c, S2, 1);
	CUdeviceptr d = alloc(GRAN, NULL, 0);
	assert_int_equal(d, a);
	assert_int_equal(host_waits, hw + 1); /* synchronous: the host waits */
	freep(d, NULL, 0);
}

static void test_reclaim_and_bounded_pool(void **state)
{
	(void)state;
	cur_dev = 5;
	struct remat_alloc_stats st;
	CUdeviceptr p[40];
	for (int i = 0; i < 40; i++)
		p[i] = alloc(GRAN, S1, 1);
	for (int i = 0; i < 40; i++)
		freep(p[i], S1, 1);
	remat_alloc_stats(&st);
	uint64_t held = st.physical;
	complete_all_events();
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
	cur_dev = 6;
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
	cur_dev = 7;
	complete_all_events();
	create_limit = created - released + 3;
	int m = nmapped;
	CUdeviceptr p = 0;
	assert_int_equal(remat_alloc(&p, 8 * GRAN, NULL, 0, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(nmapped, m);
	assert_int_equal(remat_alloc(&p, 0, NULL, 0, NULL), CUDA_ERROR_INVALID_VALUE);
	create_limit = 1 << 30;
	CUdeviceptr q = alloc(8 * GRAN, NULL, 0); /* the range was given back */
	freep(q, NULL, 0);
}

static void test_quarantine(void **state)
{
	(void)state;
	cur_dev = 8;
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
	cur_dev = 9;
	complete_all_events();
	remat_alloc_poll(1); /* earlier tests' frees out of the way */
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	int m = nmapped;
	assert_true(remat_alloc_mapped(a, 2 * GRAN));
	CUstream both[2] = {S1, S2};
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, both, 2), 0);
	assert_int_equal(nmapped, m); /* the streams may still use it */
	assert_false(remat_alloc_mapped(a, 2 * GRAN));
	remat_alloc_poll(0);
	assert_int_equal(nmapped, m);
	complete_all_events();
	remat_alloc_poll(0);
	assert_int_equal(nmapped, m - 2); /* unmapped once both streams got there */
	assert_int_equal(remat_alloc_map(a, 2 * GRAN, S1), CUDA_SUCCESS);
	assert_int_equal(nmapped, m); /* the same address again */
	assert_true(remat_alloc_mapped(a, 2 * GRAN));
	/* Mapped again before the unmap happened: the chunks stay, the new user
	 * waits for the eviction's event instead. */
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, &S2, 1), 0);
	int w = waits, c = created;
	assert_int_equal(remat_alloc_map(a, 2 * GRAN, S1), CUDA_SUCCESS);
	assert_int_equal(waits, w + 2);
	assert_int_equal(created, c);
	assert_int_equal(nmapped, m);
	/* Freeing an evicted allocation unmaps nothing twice. */
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, &S1, 1), 0);
	complete_all_events();
	remat_alloc_poll(0);
	freep(a, NULL, 0);
	assert_int_equal(nmapped, m - 2);
}

static void test_budget(void **state)
{
	(void)state;
	cur_dev = 10;
	complete_all_events();
	remat_alloc_poll(1);
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	uint64_t budget = st.physical + 3 * GRAN;
	remat_alloc_set_budget(budget);
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	CUdeviceptr p = 0;
	last_warn[0] = '\0';
	assert_int_equal(remat_alloc(&p, 2 * GRAN, S1, 1, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	assert_non_null(strstr(last_warn, "exceeds REMAT_BUDGET"));
	assert_non_null(strstr(last_warn, "by 65536 bytes"));
	/* An eviction the stream has not reached yet: the allocation waits for
	 * it instead of failing. */
	CUstream s1 = S1;
	assert_int_equal(remat_alloc_unmap_after(a, 2 * GRAN, &s1, 1), 0);
	int hw = host_waits;
	CUdeviceptr b = alloc(2 * GRAN, S1, 1);
	assert_true(host_waits > hw);
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
	htod(p, b, n);
	free(b);
}

static int holds(CUdeviceptr p, size_t n, unsigned seed)
{
	uint8_t *b = malloc(n);
	assert_non_null(b);
	dtoh(b, p, n);
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
	cur_dev = 11;
	create_limit = created - released + 4;
	remat_alloc_swap_enable(1);
	CUdeviceptr a = alloc(2 * GRAN, S1, 1);
	CUdeviceptr b = alloc(2 * GRAN - 100, S1, 1);
	fill(a, 2 * GRAN, 1);
	fill(b, 2 * GRAN - 100, 2);
	assert_false(remat_alloc_swap_armed);
	int s0 = syncs;
	CUdeviceptr c = alloc(2 * GRAN, S2, 1);
	assert_true(syncs > s0); /* queued work finished before the copy */
	assert_int_equal(remat_alloc_nswapped, 1);
	assert_true(remat_alloc_swap_armed);
	assert_int_equal(remat_tracking, 1);           /* every op is checked from now on */
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
	create_limit = 1 << 30;
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
