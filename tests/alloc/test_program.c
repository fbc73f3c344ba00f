/*
 * test_program.c — the program's own VMM (alloc/program.c) against the
 * fake driver, which checks every map and unmap: what libremat takes and
 * what it leaves to the driver; a handle's chunks, its references and
 * mappings (memory goes only once released and unmapped everywhere);
 * the driver's argument checks; extents appearing, merging and going;
 * eviction and remapping inside the program's range; aliases kept whole;
 * the budget.
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

#define GRAN FAKE_GRAN

static CUstream S1 = (CUstream)0x111;

static int setup(void **state)
{
	(void)state;
	fake_install();
	return 0;
}

static CUmemAllocationProp plain(CUdevice dev)
{
	CUmemAllocationProp p = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                         .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev}};
	return p;
}

static CUmemGenericAllocationHandle create(size_t bytes)
{
	CUmemAllocationProp p = plain(fake.dev);
	CUmemGenericAllocationHandle h = 0;
	assert_int_equal(remat_prog_create(&h, bytes, &p, 0), CUDA_SUCCESS);
	return h;
}

static uint64_t reserve(size_t bytes)
{
	CUdeviceptr va = 0;
	assert_int_equal(remat_prog_reserve(&va, bytes, 0, 0, 0), CUDA_SUCCESS);
	assert_int_equal(va % GRAN, 0);
	return va;
}

static void grant(uint64_t va, size_t bytes)
{
	CUmemAccessDesc a = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = fake.dev},
	                     .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	assert_int_equal(remat_prog_set_access(va, bytes, &a, 1), CUDA_SUCCESS);
}

static uint64_t fixed(void)
{
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	return st.program_fixed;
}

/* The extent changes since the last call: "+addr:size" / "-addr:size"
 * relative to base, in units of GRAN, space separated. */
static const char *changes(uint64_t base)
{
	static char buf[512];
	struct remat_prog_change c[32];
	size_t n = remat_prog_changes(c, 32), len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%c%llu:%llu", i ? " " : "",
		                        c[i].added ? '+' : '-',
		                        (unsigned long long)((c[i].addr - base) / GRAN),
		                        (unsigned long long)(c[i].size / GRAN));
	return buf;
}

/* What libremat leaves to the driver: CUDA_ERROR_NOT_SUPPORTED, and no
 * driver call made. */
static void test_pass_through(void **state)
{
	(void)state;
	fake.dev = 1;
	int created = fake.created, mapped = fake.nmapped;
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp p = plain(1);
	p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; /* exportable */
	assert_int_equal(remat_prog_create(&h, GRAN, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
	p = plain(1);
	p.location.type = CU_MEM_LOCATION_TYPE_HOST;
	assert_int_equal(remat_prog_create(&h, GRAN, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
	p = plain(1);
	p.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_GENERIC;
	assert_int_equal(remat_prog_create(&h, GRAN, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
	p = plain(1);
	p.type = CU_MEM_ALLOCATION_TYPE_INVALID;
	assert_int_equal(remat_prog_create(&h, GRAN, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
	p = plain(1);
	assert_int_equal(remat_prog_create(&h, GRAN + 512, &p, 0), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_create(&h, GRAN, &p, 1), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_create(&h, GRAN, NULL, 0), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(fake.created, created);
	/* Handles and ranges that are not ours. */
	CUmemGenericAllocationHandle real = 0x1234;
	assert_int_equal(remat_prog_release(real), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_props(&p, real), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_map(0x7000000000ull, GRAN, 0, real, 0),
	                 CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_unmap(0x7000000000ull, GRAN), CUDA_ERROR_NOT_SUPPORTED);
	CUmemAccessDesc a = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 1},
	                     .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	assert_int_equal(remat_prog_set_access(0x7000000000ull, GRAN, &a, 1),
	                 CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_retain(&h, (void *)0x7000000000ull), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_address_free(0x7000000000ull, GRAN), CUDA_ERROR_NOT_SUPPORTED);
	CUdeviceptr va;
	assert_int_equal(remat_prog_reserve(&va, GRAN, 0, 0, 1), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_reserve(&va, GRAN + 512, 0, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(remat_prog_reserve(&va, GRAN, 3 * GRAN, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
	assert_int_equal(fake.nmapped, mapped);
	assert_false(remat_prog_live);
}

/* A handle is chunks of the granularity from the pool; they go back when
 * it is released and unmapped everywhere, in either order. */
static void test_handle_chunks(void **state)
{
	(void)state;
	fake.dev = 2;
	int created = fake.created;
	CUmemGenericAllocationHandle h = create(3 * GRAN);
	assert_int_equal(fake.created, created + 3);
	assert_true(remat_prog_live);
	assert_int_equal(fixed(), 3 * GRAN);
	CUmemAllocationProp p;
	assert_int_equal(remat_prog_props(&p, h), CUDA_SUCCESS);
	assert_int_equal(p.location.id, 2);
	assert_int_equal(p.type, CU_MEM_ALLOCATION_TYPE_PINNED);
	assert_int_equal(remat_prog_release(h), CUDA_SUCCESS);
	assert_int_equal(fixed(), 0);
	assert_false(remat_prog_live);
	assert_int_equal(remat_prog_release(h), CUDA_ERROR_NOT_SUPPORTED); /* gone */
	/* Released while mapped: the memory stays until the unmap. */
	uint64_t va = reserve(8 * GRAN);
	h = create(2 * GRAN);
	assert_int_equal(remat_prog_map(va, 2 * GRAN, 0, h, 0), CUDA_SUCCESS);
	assert_true(fake_is_mapped(va) && fake_is_mapped(va + GRAN));
	assert_int_equal(remat_prog_release(h), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(h), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_props(&p, h), CUDA_ERROR_INVALID_VALUE);
	assert_true(fake_is_mapped(va));
	assert_int_equal(fixed(), 2 * GRAN); /* mapped, never given access */
	/* A retained handle needs one more release. */
	CUmemGenericAllocationHandle r = 0;
	assert_int_equal(remat_prog_retain(&r, (void *)(uintptr_t)(va + 100)), CUDA_SUCCESS);
	assert_int_equal(r, h);
	assert_int_equal(remat_prog_unmap(va, 2 * GRAN), CUDA_SUCCESS);
	assert_false(fake_is_mapped(va) || fake_is_mapped(va + GRAN));
	assert_int_equal(fixed(), 2 * GRAN);
	assert_int_equal(remat_prog_release(r), CUDA_SUCCESS);
	assert_int_equal(fixed(), 0);
	assert_int_equal(remat_prog_address_free(va, 8 * GRAN), CUDA_SUCCESS);
	assert_false(remat_prog_live);
}

/* Arguments the driver refuses are refused, nothing half done. */
static void test_driver_checks(void **state)
{
	(void)state;
	fake.dev = 3;
	uint64_t va = reserve(8 * GRAN);
	CUmemGenericAllocationHandle h = create(2 * GRAN), k = create(GRAN);
	int mapped = fake.nmapped;
	assert_int_equal(remat_prog_map(va, 2 * GRAN, GRAN, h, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_map(va, 3 * GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_map(va + 512, GRAN, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_map(va, GRAN, 0, h, 1), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_map(va + 7 * GRAN, 2 * GRAN, 0, h, 0),
	                 CUDA_ERROR_INVALID_VALUE); /* past the reservation */
	assert_int_equal(fake.nmapped, mapped);
	assert_int_equal(remat_prog_map(va, 2 * GRAN, 0, h, 0), CUDA_SUCCESS);
	assert_int_equal(remat_prog_map(va + GRAN, GRAN, 0, k, 0), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_map(va + 2 * GRAN, GRAN, 0, k, 0), CUDA_SUCCESS);
	/* Unmapping and access: whole mappings only. */
	assert_int_equal(remat_prog_unmap(va, GRAN), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_unmap(va + GRAN, 2 * GRAN), CUDA_ERROR_INVALID_VALUE);
	CUmemAccessDesc a = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 3},
	                     .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	assert_int_equal(remat_prog_set_access(va, GRAN, &a, 1), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_set_access(va, 4 * GRAN, &a, 1), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(fake.nmapped, mapped + 3);
	/* A range is freed whole, once nothing is mapped in it. */
	assert_int_equal(remat_prog_address_free(va, 8 * GRAN), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_unmap(va, 3 * GRAN), CUDA_SUCCESS); /* both at once */
	assert_int_equal(fake.nmapped, mapped);
	assert_int_equal(remat_prog_address_free(va, 4 * GRAN), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_address_free(va + GRAN, 7 * GRAN), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(remat_prog_address_free(va, 8 * GRAN), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(h), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(k), CUDA_SUCCESS);
	assert_string_equal(changes(va), "");
}

/* Extents: what is mapped exclusively with read-write access for the
 * device alone, joined where contiguous, as the program grows and
 * shrinks a range the way PyTorch's expandable segments do. */
static void test_extents(void **state)
{
	(void)state;
	fake.dev = 4;
	uint64_t va = reserve(16 * GRAN);
	CUmemGenericAllocationHandle a = create(2 * GRAN), b = create(GRAN), c = create(GRAN);
	assert_int_equal(remat_prog_map(va, 2 * GRAN, 0, a, 0), CUDA_SUCCESS);
	assert_string_equal(changes(va), ""); /* no access yet */
	assert_int_equal(fixed(), 4 * GRAN);  /* nothing in an extent yet */
	grant(va, 2 * GRAN);
	assert_string_equal(changes(va), "+0:2");
	assert_int_equal(fixed(), 2 * GRAN); /* b and c, unmapped */
	assert_int_equal(remat_prog_map(va + 2 * GRAN, GRAN, 0, b, 0), CUDA_SUCCESS);
	grant(va + 2 * GRAN, GRAN);
	assert_string_equal(changes(va), "-0:2 +0:3");
	assert_int_equal(fixed(), GRAN);
	/* Read-only: kept whole, a gap between extents. */
	assert_int_equal(remat_prog_map(va + 4 * GRAN, GRAN, 0, c, 0), CUDA_SUCCESS);
	CUmemAccessDesc ro = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 4},
	                      .flags = CU_MEM_ACCESS_FLAGS_PROT_READ};
	assert_int_equal(remat_prog_set_access(va + 4 * GRAN, GRAN, &ro, 1), CUDA_SUCCESS);
	assert_string_equal(changes(va), "");
	assert_int_equal(fixed(), GRAN);
	grant(va + 4 * GRAN, GRAN);
	assert_string_equal(changes(va), "+4:1");
	assert_true(remat_prog_touches(va + GRAN, 1));
	assert_false(remat_prog_touches(va + 3 * GRAN, GRAN));
	/* Shrinking. */
	assert_int_equal(remat_prog_unmap(va + 2 * GRAN, GRAN), CUDA_SUCCESS);
	assert_string_equal(changes(va), "-0:3 +0:2");
	assert_int_equal(remat_prog_unmap(va + 4 * GRAN, GRAN), CUDA_SUCCESS);
	assert_int_equal(remat_prog_unmap(va, 2 * GRAN), CUDA_SUCCESS);
	assert_string_equal(changes(va), "-4:1 -0:2");
	assert_int_equal(remat_prog_release(a), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(b), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(c), CUDA_SUCCESS);
	assert_int_equal(remat_prog_address_free(va, 16 * GRAN), CUDA_SUCCESS);
}

/* Run mode evicts inside an extent as inside an allocation of its own:
 * the chunks go, fresh ones come back at the same address.  A handle
 * unmapped while a page is evicted gets no chunk for it (its content was
 * dead) and a fresh one when mapped again. */
static void test_evict_in_extent(void **state)
{
	(void)state;
	fake.dev = 5;
	fake_complete_all_events();
	uint64_t va = reserve(8 * GRAN);
	CUmemGenericAllocationHandle h = create(4 * GRAN);
	assert_int_equal(remat_prog_map(va, 4 * GRAN, 0, h, 0), CUDA_SUCCESS);
	grant(va, 4 * GRAN);
	changes(va);
	struct remat_alloc_stats st0, st1;
	remat_alloc_stats(&st0);
	fake.events_complete_at_record = 1;
	assert_int_equal(remat_alloc_unmap_after(va + GRAN, 2 * GRAN, &S1, 1), 0);
	remat_alloc_poll(0);
	assert_false(fake_is_mapped(va + GRAN) || fake_is_mapped(va + 2 * GRAN));
	assert_true(fake_is_mapped(va) && fake_is_mapped(va + 3 * GRAN));
	assert_int_equal(remat_alloc_map(va + GRAN, GRAN, S1), CUDA_SUCCESS);
	assert_true(fake_is_mapped(va + GRAN));
	remat_alloc_stats(&st1);
	assert_int_equal(st1.physical - st1.pooled, st0.physical - st0.pooled - GRAN);
	/* Unmapped by the program with page 2 evicted. */
	assert_int_equal(remat_prog_unmap(va, 4 * GRAN), CUDA_SUCCESS);
	assert_string_equal(changes(va), "-0:4");
	assert_int_equal(fixed(), 3 * GRAN);
	assert_int_equal(remat_prog_map(va + 4 * GRAN, 4 * GRAN, 0, h, 0), CUDA_SUCCESS);
	assert_int_equal(fixed(), 4 * GRAN);
	for (int k = 0; k < 4; k++)
		assert_true(fake_is_mapped(va + (4 + k) * GRAN));
	assert_int_equal(remat_prog_unmap(va + 4 * GRAN, 4 * GRAN), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(h), CUDA_SUCCESS);
	assert_int_equal(remat_prog_address_free(va, 8 * GRAN), CUDA_SUCCESS);
	fake.events_complete_at_record = 0;
}

/* A handle mapped twice at once is an alias: its extents go, for good,
 * and both mappings show its chunks (fresh ones where an eviction had
 * left a page empty). */
static void test_alias_kept_whole(void **state)
{
	(void)state;
	fake.dev = 6;
	fake.events_complete_at_record = 1;
	uint64_t va = reserve(8 * GRAN);
	CUmemGenericAllocationHandle h = create(2 * GRAN);
	assert_int_equal(remat_prog_map(va, 2 * GRAN, 0, h, 0), CUDA_SUCCESS);
	grant(va, 2 * GRAN);
	assert_string_equal(changes(va), "+0:2");
	assert_int_equal(remat_alloc_unmap_after(va, GRAN, &S1, 1), 0);
	remat_alloc_poll(0);
	assert_false(fake_is_mapped(va));
	assert_true(remat_prog_mapped_handle(h));
	assert_int_equal(remat_prog_map(va + 4 * GRAN, 2 * GRAN, 0, h, 0), CUDA_SUCCESS);
	assert_string_equal(changes(va), "-0:2");
	assert_true(fake_is_mapped(va)); /* refilled */
	grant(va + 4 * GRAN, 2 * GRAN);
	grant(va, 2 * GRAN);
	assert_string_equal(changes(va), "");
	assert_int_equal(fixed(), 2 * GRAN); /* one handle's chunks, counted once */
	assert_false(remat_prog_touches(va, 8 * GRAN));
	assert_int_equal(remat_prog_unmap(va, 2 * GRAN), CUDA_SUCCESS);
	assert_true(fake_is_mapped(va + 4 * GRAN));
	assert_int_equal(remat_prog_release(h), CUDA_SUCCESS);
	assert_int_equal(fixed(), 2 * GRAN); /* still mapped at the second place */
	assert_int_equal(remat_prog_unmap(va + 4 * GRAN, 2 * GRAN), CUDA_SUCCESS);
	assert_int_equal(fixed(), 0);
	assert_int_equal(remat_prog_address_free(va, 8 * GRAN), CUDA_SUCCESS);
	fake.events_complete_at_record = 0;
}

/* The program's chunks count against the budget like the allocator's. */
static void test_budget(void **state)
{
	(void)state;
	fake.dev = 7;
	fake_complete_all_events();
	remat_alloc_poll(1);
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	remat_alloc_set_budget(st.physical + 3 * GRAN); /* room for three chunks */
	CUmemGenericAllocationHandle h = create(2 * GRAN), k = 0;
	CUmemAllocationProp p = plain(7);
	fake.last_warn[0] = '\0';
	assert_int_equal(remat_prog_create(&k, 2 * GRAN, &p, 0), CUDA_ERROR_OUT_OF_MEMORY);
	assert_non_null(strstr(fake.last_warn, "exceeds REMAT_BUDGET"));
	assert_int_equal(fixed(), 2 * GRAN); /* the refused one's first chunk went back */
	assert_int_equal(remat_prog_release(h), CUDA_SUCCESS);
	assert_int_equal(remat_prog_create(&k, 2 * GRAN, &p, 0), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(k), CUDA_SUCCESS);
	remat_alloc_set_budget(0);
}

/* A range carved where a free of the allocator's own still holds chunks
 * (its stream has not got there): they are let go first, after waiting. */
static void test_reserve_settles_pending(void **state)
{
	(void)state;
	fake.dev = 8;
	CUdeviceptr a = 0;
	assert_int_equal(remat_alloc(&a, 2 * GRAN, S1, 1, NULL), CUDA_SUCCESS);
	CUresult rc;
	assert_int_equal(remat_free(a, S1, 1, &rc), 1);
	assert_true(fake_is_mapped(a)); /* pending */
	int waits = fake.host_waits;
	CUdeviceptr va = 0;
	assert_int_equal(remat_prog_reserve(&va, 2 * GRAN, 0, a, 0), CUDA_SUCCESS);
	assert_int_equal(va, a);
	assert_true(fake.host_waits > waits);
	assert_false(fake_is_mapped(a));
	CUmemGenericAllocationHandle h = create(2 * GRAN);
	assert_int_equal(remat_prog_map(va, 2 * GRAN, 0, h, 0), CUDA_SUCCESS);
	assert_int_equal(remat_prog_unmap(va, 2 * GRAN), CUDA_SUCCESS);
	assert_int_equal(remat_prog_release(h), CUDA_SUCCESS);
	assert_int_equal(remat_prog_address_free(va, 2 * GRAN), CUDA_SUCCESS);
	assert_false(remat_prog_live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pass_through),    cmocka_unit_test(test_handle_chunks),
	    cmocka_unit_test(test_driver_checks),   cmocka_unit_test(test_extents),
	    cmocka_unit_test(test_evict_in_extent), cmocka_unit_test(test_alias_kept_whole),
	    cmocka_unit_test(test_budget),          cmocka_unit_test(test_reserve_settles_pending),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
