/*
 * range.h — free extents of a virtual address range, first fit, address
 * ordered, coalesced.  First fit on an address-ordered list is what makes
 * addresses deterministic: the same sequence of allocations and frees
 * always yields the same addresses.
 */
#ifndef REMAT_RANGE_H
#define REMAT_RANGE_H

#include <stddef.h>
#include <stdint.h>

struct remat_extent {
	uint64_t addr, size;
};

struct remat_range {
	uint64_t base, size;
	struct remat_extent *free; /* sorted by addr, never adjacent */
	size_t nfree, cap;
};

int remat_range_init(struct remat_range *r, uint64_t base, uint64_t size);
/* First fit of size bytes aligned to align (a power of two); 0 when full. */
uint64_t remat_range_alloc(struct remat_range *r, uint64_t size, uint64_t align);
/* Takes exactly [addr, addr+size) if it is free; 0 on success. */
int remat_range_alloc_at(struct remat_range *r, uint64_t addr, uint64_t size);
/* Returns [addr, addr+size); -1 if any part of it is already free or
 * outside the range (a double free). */
int remat_range_free(struct remat_range *r, uint64_t addr, uint64_t size);

#endif
