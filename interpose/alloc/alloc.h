/*
 * alloc.h — the public face of the VMM allocator.  Every managed
 * allocation gets its own virtual range inside one reservation per device,
 * backed by granularity-sized physical chunks; allocations under the
 * granularity are packed into shared chunks that are never evicted.
 * Addresses are deterministic (first fit in call order) so the n-th
 * allocation of a repeated iteration lands where it did before.
 */
#ifndef REMAT_ALLOC_H
#define REMAT_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

struct remat_alloc_info {
	size_t size;    /* requested */
	size_t rounded; /* physical bytes of its own (0 when packed small) */
	int small;
};

/* CUDA_ERROR_NOT_SUPPORTED: the device cannot be managed (no VMM, no
 * reservation): the caller falls back to the real allocator. */
CUresult remat_alloc(CUdeviceptr *p, size_t size, CUstream stream, int async,
                     struct remat_alloc_info *info);
/* 0 when p is not ours (the caller frees it for real).  A synchronous free
 * assumes the caller has synchronized the context, as the real ones do. */
int remat_free(CUdeviceptr p, CUstream stream, int async, CUresult *rc);
int remat_alloc_owns(CUdeviceptr p, struct remat_alloc_info *info);

/* Run mode: the next n allocations take these addresses when they fit. */
void remat_alloc_follow(const CUdeviceptr *addrs, size_t n);

struct remat_alloc_stats {
	uint64_t physical;   /* bytes of chunks mapped now, all devices */
	uint64_t peak;       /* highest physical since the last reset */
	uint64_t small_pool; /* bytes of the small-allocation chunks */
	uint64_t live;       /* requested bytes of live allocations */
	uint64_t pooled;     /* spare chunks kept for reuse */
	size_t granularity;  /* of the first device initialized */
};
void remat_alloc_stats(struct remat_alloc_stats *s);
void remat_alloc_reset_peak(void);

#endif
