/*
 * pool.c — spare physical chunks.  A chunk freed by one allocation is
 * mapped by the next instead of going back to the driver, but only a few
 * are kept: physical usage must follow live bytes, or a budget means
 * nothing.
 */
#include "../core/grow.h"
#include "internal.h"

CUresult remat_pool_get(struct remat_device *d, CUmemGenericAllocationHandle *h)
{
	if (!d->npool && alloc_state.budget &&
	    alloc_state.physical + d->gran > alloc_state.budget) {
		/* Over budget unless pending frees and evictions give memory
		 * back: wait for them rather than fail. */
		remat_pending_reclaim_wait(d);
		if (!d->npool && alloc_state.physical + d->gran > alloc_state.budget) {
			alloc_state.shortfall = alloc_state.physical + d->gran - alloc_state.budget;
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
	while (r == CUDA_ERROR_OUT_OF_MEMORY && alloc_state.swapping && !remat_swap_make_room(d)) {
		if (d->npool) {
			*h = d->pool[--d->npool];
			return CUDA_SUCCESS;
		}
		r = remat_drv.cuMemCreate(h, d->gran, &d->prop, 0);
	}
	if (r == CUDA_SUCCESS) {
		alloc_state.physical += d->gran;
		if (alloc_state.physical > alloc_state.peak)
			alloc_state.peak = alloc_state.physical;
	}
	return r;
}

void remat_pool_put(struct remat_device *d, CUmemGenericAllocationHandle h)
{
	if (REMAT_GROW(d->pool, d->npool, d->cap_pool)) {
		remat_drv.cuMemRelease(h);
		alloc_state.physical -= d->gran;
		return;
	}
	d->pool[d->npool++] = h;
}

/* Keeps at most max(16 chunks, 1/16 of what is in use) spare. */
void remat_pool_trim(struct remat_device *d)
{
	uint64_t in_use = alloc_state.physical - (uint64_t)d->npool * d->gran;
	size_t keep = (size_t)(in_use / d->gran / 16);
	if (keep < 16)
		keep = 16;
	while (d->npool > keep ||
	       (d->npool && alloc_state.budget && alloc_state.physical > alloc_state.budget)) {
		remat_drv.cuMemRelease(d->pool[--d->npool]);
		alloc_state.physical -= d->gran;
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
