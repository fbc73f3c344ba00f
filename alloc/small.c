/*
 * small.c — allocations under one chunk, packed at 256-byte alignment (what
 * cudaMalloc guarantees) into a region whose chunks are mapped once and
 * never evicted: a bias, a scalar, a step counter.
 */
#include "internal.h"

CUresult remat_small_alloc(struct remat_device *d, uint64_t *p, size_t size, CUstream stream,
                           int async, uint64_t want)
{
	uint64_t bytes = (size + REMAT_SMALL_ALIGN - 1) / REMAT_SMALL_ALIGN * REMAT_SMALL_ALIGN;
	uint64_t va = 0;
	if (want && !remat_range_alloc_at(&d->small_va, want, bytes))
		va = want;
	if (!va)
		va = remat_range_alloc(&d->small_va, bytes, REMAT_SMALL_ALIGN);
	if (!va)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* The region grows by whole chunks, mapped once for good. */
	while (va + bytes > d->small_top) {
		CUmemGenericAllocationHandle h;
		CUresult r = remat_pool_get(d, &h);
		if (r == CUDA_SUCCESS) {
			r = remat_map_chunk(d, d->small_top, h);
			if (r != CUDA_SUCCESS)
				remat_pool_put(d, h);
		}
		if (r != CUDA_SUCCESS) {
			/* The driver's own error: a sticky one must reach the program. */
			remat_range_free(&d->small_va, va, bytes);
			return r;
		}
		d->small_top += d->gran;
		alloc_state.small_bytes += d->gran;
	}
	for (size_t i = 0; i < d->npending; i++) {
		struct remat_pending *pe = &d->pending[i];
		if (pe->used && pe->small && pe->addr < va + bytes && va < pe->addr + pe->size)
			remat_pending_order(d, pe, stream, async);
	}
	*p = va;
	return CUDA_SUCCESS;
}

void remat_small_free(struct remat_device *d, uint64_t p, size_t size, CUstream stream, int async)
{
	uint64_t bytes = (size + REMAT_SMALL_ALIGN - 1) / REMAT_SMALL_ALIGN * REMAT_SMALL_ALIGN;
	if (async)
		remat_pending_add(d, p, bytes, stream, 1, 0);
	remat_range_free(&d->small_va, p, bytes);
}
