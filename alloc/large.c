/*
 * large.c — allocations of at least one chunk: a range of their own in the
 * large region, one physical chunk mapped per granularity page, so run
 * mode can later unmap and remap any of them at the same address.
 */
#include "../core/grow.h"
#include "internal.h"

void remat_large_unmap_page(struct remat_device *d, size_t pg)
{
	uint64_t va = d->large_base + (uint64_t)pg * d->gran;
	remat_drv.cuMemUnmap(va, d->gran);
	remat_pool_put(d, d->page[pg]);
	d->page[pg] = 0;
	d->page_pending[pg] = -1;
	d->page_zombie[pg] = -1;
}

/* Maps a chunk at every page of [first, first+n) that has none; pages
 * still holding one (a free or an eviction the stream has not reached)
 * keep it, their new user ordered after.  On failure, what this call
 * mapped is unmapped again. */
CUresult remat_large_map_pages(struct remat_device *d, size_t first, size_t n, CUstream stream,
                               int async)
{
	for (size_t k = 0; k < n; k++) {
		size_t pg = first + k;
		if (remat_page_take(d, pg, stream, async))
			continue;
		CUmemGenericAllocationHandle h;
		CUresult r = remat_pool_get(d, &h);
		if (r == CUDA_SUCCESS) {
			r = remat_map_chunk(d, d->large_base + pg * d->gran, h);
			if (r != CUDA_SUCCESS)
				remat_pool_put(d, h);
		}
		if (r != CUDA_SUCCESS) {
			for (size_t j = 0; j < k; j++)
				remat_large_unmap_page(d, first + j);
			remat_pool_trim(d);
			return r; /* the driver's own error: a sticky one must reach the program */
		}
		d->page[pg] = h;
	}
	return CUDA_SUCCESS;
}

CUresult remat_large_alloc(struct remat_device *d, uint64_t *p, size_t size, CUstream stream,
                           int async, uint64_t want)
{
	uint64_t bytes = (size + d->gran - 1) / d->gran * d->gran;
	uint64_t va = 0;
	if (want && !remat_range_alloc_at(&d->large_va, want, bytes))
		va = want;
	if (!va)
		va = remat_range_alloc(&d->large_va, bytes, d->gran);
	if (!va && d->nquar) {
		/* Out of address space: give quarantined ranges back early. */
		remat_log(REMAT_LOG_INFO, "address space exhausted: releasing freed ranges early");
		remat_large_unquarantine(d);
		va = remat_range_alloc(&d->large_va, bytes, d->gran);
	}
	if (!va)
		return CUDA_ERROR_OUT_OF_MEMORY;
	size_t first = (va - d->large_base) / d->gran, n = bytes / d->gran;
	CUresult r = remat_large_map_pages(d, first, n, stream, async);
	if (r != CUDA_SUCCESS) {
		remat_range_free(&d->large_va, va, bytes);
		return r;
	}
	*p = va;
	return CUDA_SUCCESS;
}

static void quarantine(struct remat_device *d, uint64_t p, uint64_t bytes)
{
	if (REMAT_GROW(d->quar, d->nquar, d->cap_quar)) {
		remat_range_free(&d->large_va, p, bytes);
		return;
	}
	d->quar[d->nquar++] = (struct remat_extent){p, bytes};
}

void remat_large_unquarantine(struct remat_device *d)
{
	for (size_t i = 0; i < d->nquar; i++)
		remat_range_free(&d->large_va, d->quar[i].addr, d->quar[i].size);
	d->nquar = 0;
}

void remat_large_free(struct remat_device *d, uint64_t p, size_t size, CUstream stream, int async)
{
	uint64_t bytes = (size + d->gran - 1) / d->gran * d->gran;
	size_t first = (p - d->large_base) / d->gran, n = bytes / d->gran;
	/* Evicted pages have no chunk, or one already waiting to be unmapped. */
	size_t held = 0;
	for (size_t k = 0; k < n; k++)
		held += d->page[first + k] && d->page_zombie[first + k] < 0;
	int pi = async && held ? remat_pending_add(d, p, bytes, stream, 0, held) : -1;
	for (size_t k = 0; k < n; k++) {
		size_t pg = first + k;
		if (!d->page[pg] || d->page_zombie[pg] >= 0)
			continue;
		if (pi >= 0)
			d->page_pending[pg] = pi;
		else
			remat_large_unmap_page(d, pg);
	}
	if (alloc_state.quarantining)
		quarantine(d, p, bytes);
	else
		remat_range_free(&d->large_va, p, bytes);
}
