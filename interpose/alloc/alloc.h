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

/* ---- run mode ----------------------------------------------------------
 * Addresses handed to these are ranges of the large region (whole
 * allocations, or buffers of the trace at their recorded address). */

/* Maps a chunk at every page of the range that has none, for work on
 * stream (pages still waiting for an unmap keep their chunk, the stream
 * ordered after).  CUDA_ERROR_OUT_OF_MEMORY past the budget. */
CUresult remat_alloc_map(uint64_t addr, uint64_t bytes, CUstream stream);
/* Unmaps the range's chunks once the work issued so far on streams[0..n)
 * completed (an event on each); 0, or -1 when the range is not ours. */
int remat_alloc_unmap_after(uint64_t addr, uint64_t bytes, const CUstream *streams, int n);
/* 1 when every page of the range has a chunk no unmap is waiting on. */
int remat_alloc_mapped(uint64_t addr, uint64_t bytes);
/* Completes deferred unmaps and frees (wait: waits for all of them). */
void remat_alloc_poll(int wait);
/* Transient device memory for a SAVE step, mapped for work on stream. */
CUresult remat_alloc_scratch(uint64_t bytes, uint64_t *addr, CUstream stream);
void remat_alloc_scratch_free(uint64_t addr, uint64_t bytes, CUstream stream);
/* Caps physical bytes (chunks created, pool and small region included;
 * spare chunks over the cap are released at once); 0 lifts the cap.  A refused allocation prints
 * one line with the shortfall and fails with CUDA_ERROR_OUT_OF_MEMORY. */
void remat_alloc_set_budget(uint64_t bytes);
/* Quarantine: a freed large range is not handed out again before the next
 * remat_alloc_boundary, so no address is reused within an iteration. */
void remat_alloc_quarantine(int on);
/* Iteration boundary: (wait: finish deferred unmaps,) release the
 * quarantine, trim the pool. */
void remat_alloc_boundary(int wait);

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
