/*
 * large.c — allocations of at least one chunk: a range of their own in the
 * large region, one physical chunk mapped per granularity page, so run
 * mode can later unmap and remap any of them at the same address.
 */
#include "device.h"

void remat_large_unmap_page(struct remat_device *d, size_t pg)
{
	uint64_t va = d->large_base + (uint64_t)pg * d->gran;
	remat_drv.cuMemUnmap(va, d->gran);
	remat_pool_put(d, d->page[pg]);
	d->page[pg] = 0;
	d->page_pending[pg] = -1;
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
	if (!va)
		return CUDA_ERROR_OUT_OF_MEMORY;
	size_t first = (va - d->large_base) / d->gran, n = bytes / d->gran;
	for (size_t k = 0; k < n; k++) {
		size_t pg = first + k;
		int32_t pi = d->page_pending[pg];
		if (d->page[pg] && pi >= 0) {
			/* Still mapped from a free the stream may not have reached:
			 * keep the chunk, order ourselves after that free. */
			struct remat_pending *pe = &d->pending[pi];
			remat_pending_order(d, pe, stream, async);
			d->page_pending[pg] = -1;
			if (--pe->pages_left == 0)
				remat_pending_release(d, pi);
			continue;
		}
		CUmemGenericAllocationHandle h;
		CUresult r = remat_pool_get(d, &h);
		if (r == CUDA_SUCCESS) {
			r = remat_map_chunk(d, va + k * d->gran, h);
			if (r != CUDA_SUCCESS)
				remat_pool_put(d, h);
		}
		if (r != CUDA_SUCCESS) {
			for (size_t j = 0; j < k; j++)
				remat_large_unmap_page(d, first + j);
			remat_range_free(&d->large_va, va, bytes);
			remat_pool_trim(d);
			return r == CUDA_ERROR_OUT_OF_MEMORY ? r : CUDA_ERROR_OUT_OF_MEMORY;
		}
		d->page[pg] = h;
	}
	*p = va;
	return CUDA_SUCCESS;
}

void remat_large_free(struct remat_device *d, uint64_t p, size_t size, CUstream stream, int async)
{
	uint64_t bytes = (size + d->gran - 1) / d->gran * d->gran;
	size_t first = (p - d->large_base) / d->gran, n = bytes / d->gran;
	int pi = async ? remat_pending_add(d, p, bytes, stream, 0, n) : -1;
	for (size_t k = 0; k < n; k++) {
		if (pi >= 0)
			d->page_pending[first + k] = pi;
		else
			remat_large_unmap_page(d, first + k);
	}
	remat_range_free(&d->large_va, p, bytes);
}
