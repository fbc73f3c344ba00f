/*
 * device.h — the allocator's per-device state, shared by the files of
 * interpose/alloc/ and nobody else.  All of it is guarded by alloc_lock.
 */
#ifndef REMAT_ALLOC_DEVICE_H
#define REMAT_ALLOC_DEVICE_H

#include <pthread.h>
#include "../remat.h"
#include "range.h"

/* A free that the stream has not reached yet.  Memory under it may be
 * handed out again at once (addresses stay deterministic), but the new
 * owner is ordered after the free's event first. */
struct remat_pending {
	uint64_t addr, size;
	CUevent ev;
	CUstream stream;
	size_t pages_left; /* large ranges: pages still mapped under this free */
	int small;
	int used;
	uint64_t ordered_gen; /* last allocation already ordered after it */
};

struct remat_device {
	int ready; /* 1 usable, -1 unusable, 0 not tried */
	CUdevice dev;
	size_t gran;
	uint64_t base, size; /* the reservation */
	struct remat_range small_va, large_va;
	uint64_t small_top; /* end of the mapped part of the small region */
	uint64_t large_base;
	size_t npages;
	CUmemGenericAllocationHandle *page; /* large region: chunk mapped at each page, 0 none */
	int32_t *page_pending;              /* index into pending[], -1 none */
	struct remat_pending *pending;
	size_t npending, cap_pending;
	CUmemGenericAllocationHandle *pool; /* spare chunks */
	size_t npool, cap_pool;
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
};

extern pthread_mutex_t remat_alloc_lock;
extern uint64_t remat_alloc_physical, remat_alloc_peak, remat_alloc_small_bytes;
extern uint64_t remat_alloc_gen; /* counts allocations, for ordered_gen */

/* pool.c */
CUresult remat_pool_get(struct remat_device *d, CUmemGenericAllocationHandle *h);
void remat_pool_put(struct remat_device *d, CUmemGenericAllocationHandle h);
void remat_pool_trim(struct remat_device *d);
/* Maps one chunk at va and makes it accessible. */
CUresult remat_map_chunk(struct remat_device *d, uint64_t va, CUmemGenericAllocationHandle h);

/* pending.c */
int remat_pending_add(struct remat_device *d, uint64_t addr, uint64_t size, CUstream stream,
                      int small, size_t pages);
/* Orders an allocation on stream (async or not) after free p. */
void remat_pending_order(struct remat_device *d, struct remat_pending *p, CUstream stream,
                         int async);
void remat_pending_release(struct remat_device *d, int32_t i);
/* Returns to the pool what completed frees left mapped. */
void remat_pending_reclaim(struct remat_device *d);

/* large.c */
CUresult remat_large_alloc(struct remat_device *d, uint64_t *p, size_t size, CUstream stream,
                           int async, uint64_t want);
void remat_large_free(struct remat_device *d, uint64_t p, size_t size, CUstream stream, int async);
void remat_large_unmap_page(struct remat_device *d, size_t pg);

/* small.c */
CUresult remat_small_alloc(struct remat_device *d, uint64_t *p, size_t size, CUstream stream,
                           int async, uint64_t want);
void remat_small_free(struct remat_device *d, uint64_t p, size_t size, CUstream stream, int async);

#define REMAT_SMALL_ALIGN 256

#endif
