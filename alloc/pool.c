/*
 * pool.c — spare physical chunks.  A chunk freed by one allocation is
 * mapped by the next instead of going back to the driver, but only a few
 * are kept: physical usage must follow live bytes, or a budget means
 * nothing.
 */
#include "../core/grow.h"
#include "internal.h"

uint64_t remat_alloc_physical, remat_alloc_peak, remat_alloc_small_bytes;
uint64_t remat_alloc_budget, remat_alloc_shortfall;

CUresult remat_pool_get(struct remat_device *d, CUmemGenericAllocationHandle *h)
{
	if (!d->npool && remat_alloc_budget &&
	    remat_alloc_physical + d->gran > remat_alloc_budget) {
		/* Over budget unless pending frees and evictions give memory
		 * back: wait for them rather than fail. */
		remat_pending_reclaim_wait(d);
		if (!d->npool && remat_alloc_physical + d->gran > remat_alloc_budget) {
			remat_alloc_shortfall = remat_alloc_physical + d->gran - remat_alloc_budget;
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	if (d->npool) {
		*h = d->pool[--d->npool];
		return CUDA_SUCCESS;
	}
	CUresult r = remat_drv.cuMemCreate(h, d->gran, &d->prop, 0);
	/* The device is full before a plan applies: swap allocations out to
	 * the host until a chunk is free (swap.c). */
	while (r == CUDA_ERROR_OUT_OF_MEMORY && remat_alloc_swapping && !remat_swap_make_room(d)) {
		if (d->npool) {
			*h = d->pool[--d->npool];
			return CUDA_SUCCESS;
		}
		r = remat_drv.cuMemCreate(h, d->gran, &d->prop, 0);
	}
	if (r == CUDA_SUCCESS) {
		remat_alloc_physical += d->gran;
		if (remat_alloc_physical > remat_alloc_peak)
			remat_alloc_peak = remat_alloc_physical;
	}
	return r;
}

void remat_pool_put(struct remat_device *d, CUmemGenericAllocationHandle h)
{
	if (REMAT_GROW(d->pool, d->npool, d->cap_pool)) {
		remat_drv.cuMemRelease(h);
		remat_alloc_physical -= d->gran;
		return;
	}
	d->pool[d->npool++] = h;
}

/* Keeps at most max(16 chunks, 1/16 of what is in use) spare. */
void remat_pool_trim(struct remat_device *d)
{
	uint64_t in_use = remat_alloc_physical - (uint64_t)d->npool * d->gran;
	size_t keep = (size_t)(in_use / d->gran / 16);
	if (keep < 16)
		keep = 16;
	while (d->npool > keep ||
	       (d->npool && remat_alloc_budget && remat_alloc_physical > remat_alloc_budget)) {
		remat_drv.cuMemRelease(d->pool[--d->npool]);
		remat_alloc_physical -= d->gran;
	}
}

CUresult remat_map_chunk(struct remat_device *d, uint64_t va, CUmemGenericAllocationHandle h)
{
	CUresult r = remat_drv.cuMemMap(va, d->gran, 0, h, 0);
	if (r != CUDA_SUCCESS)
		return r;
	r = remat_drv.cuMemSetAccess(va, d->gran, &d->access, 1);
	if (r != CUDA_SUCCESS)
		remat_drv.cuMemUnmap(va, d->gran);
	return r;
}
