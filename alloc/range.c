/*
 * range.c — the free list behind every virtual range libremat hands out.
 */
#include <string.h>

#include "../core/grow.h"
#include "../core/search.h"
#include "range.h"

int remat_range_init(struct remat_range *r, uint64_t base, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	r->base = base;
	r->size = size;
	if (REMAT_RESERVE(r->free, 1, r->cap))
		return -1;
	r->free[0] = (struct remat_extent){base, size};
	r->nfree = size ? 1 : 0;
	return 0;
}

static int insert_at(struct remat_range *r, size_t i, struct remat_extent e)
{
	if (REMAT_GROW(r->free, r->nfree, r->cap))
		return -1;
	memmove(r->free + i + 1, r->free + i, (r->nfree - i) * sizeof(*r->free));
	r->free[i] = e;
	r->nfree++;
	return 0;
}

static void remove_at(struct remat_range *r, size_t i)
{
	memmove(r->free + i, r->free + i + 1, (r->nfree - i - 1) * sizeof(*r->free));
	r->nfree--;
}

/* Carves [addr, addr+size) out of extent i, which contains it. */
static int carve(struct remat_range *r, size_t i, uint64_t addr, uint64_t size)
{
	struct remat_extent e = r->free[i];
	uint64_t head = addr - e.addr, tail = e.addr + e.size - (addr + size);
	if (head && tail) {
		r->free[i].size = head;
		return insert_at(r, i + 1, (struct remat_extent){addr + size, tail});
	}
	if (head)
		r->free[i].size = head;
	else if (tail)
		r->free[i] = (struct remat_extent){addr + size, tail};
	else
		remove_at(r, i);
	return 0;
}

static uint64_t extent_addr(const void *free, size_t i)
{
	return ((const struct remat_extent *)free)[i].addr;
}

uint64_t remat_range_alloc(struct remat_range *r, uint64_t size, uint64_t align)
{
	if (!size)
		return 0;
	for (size_t i = 0; i < r->nfree; i++) {
		struct remat_extent e = r->free[i];
		uint64_t a = (e.addr + align - 1) & ~(align - 1);
		if (a < e.addr || a - e.addr > e.size || e.size - (a - e.addr) < size)
			continue;
		return carve(r, i, a, size) ? 0 : a;
	}
	return 0;
}

int remat_range_alloc_at(struct remat_range *r, uint64_t addr, uint64_t size)
{
	for (size_t i = 0; i < r->nfree; i++) {
		struct remat_extent e = r->free[i];
		if (addr >= e.addr && addr - e.addr <= e.size && e.size - (addr - e.addr) >= size)
			return carve(r, i, addr, size);
	}
	return -1;
}

int remat_range_free(struct remat_range *r, uint64_t addr, uint64_t size)
{
	if (!size || addr < r->base || addr + size > r->base + r->size || addr + size < addr)
		return -1;
	/* i: first extent after addr. */
	size_t i = remat_search_from(r->free, r->nfree, extent_addr, addr);
	if (i < r->nfree && r->free[i].addr < addr + size)
		return -1;
	if (i > 0 && r->free[i - 1].addr + r->free[i - 1].size > addr)
		return -1;
	int join_prev = i > 0 && r->free[i - 1].addr + r->free[i - 1].size == addr;
	int join_next = i < r->nfree && r->free[i].addr == addr + size;
	if (join_prev && join_next) {
		r->free[i - 1].size += size + r->free[i].size;
		remove_at(r, i);
	} else if (join_prev) {
		r->free[i - 1].size += size;
	} else if (join_next) {
		r->free[i].addr = addr;
		r->free[i].size += size;
	} else {
		return insert_at(r, i, (struct remat_extent){addr, size});
	}
	return 0;
}
