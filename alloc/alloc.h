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

/* ---- swapping: run mode's safety net before a plan applies -----------
 * While allowed, a chunk the device refuses makes the least recently used
 * large allocation go to the host (copied out, its chunks unmapped, its
 * address kept).  Every op is then checked first: what it touches is
 * marked used, pinned until the op is issued, and brought back (mapped at
 * the same address, copied in) before it runs.  Bit-exact by construction. */
void remat_alloc_swap_enable(int on);
/* Set at the first swap and kept: ops must be checked (read unlocked). */
extern int remat_alloc_swap_armed;
/* Allocations on the host now (read unlocked). */
extern int remat_alloc_nswapped;
/* A stamp for the op being checked (newer stamps are more recent uses). */
uint64_t remat_alloc_touch_begin(void);
/* Marks the large allocations overlapping each range [lohi[2i],
 * lohi[2i+1]) as used at stamp and pins them; their addresses are added to
 * pinned[*npinned..cap).  Returns how many of them are swapped out, or -1
 * when pinned[] is full (the caller then brings back everything). */
int remat_alloc_touch(uint64_t stamp, const uint64_t *lohi, size_t n, uint64_t *pinned,
                      size_t *npinned, size_t cap);
/* Brings back the swapped allocations among addrs[0..n) (addrs NULL: all
 * of them), synchronously.  CUDA_ERROR_OUT_OF_MEMORY (one message) when
 * the device cannot hold them. */
CUresult remat_alloc_swap_in(const uint64_t *addrs, size_t n);
void remat_alloc_unpin(const uint64_t *addrs, size_t n);
struct remat_swap_stats {
	uint64_t outs, ins, out_bytes, in_bytes;
	uint64_t ns;             /* spent synchronizing and copying */
	uint64_t host, host_max; /* bytes on the host now, at most */
};
void remat_alloc_swap_stats(struct remat_swap_stats *s);
/* One line (REMAT_LOG=1) with the swaps since the last report, if any:
 * called at iteration boundaries (iteration -1: unknown). */
void remat_alloc_swap_report(long long iteration);
/* One line at exit (REMAT_LOG=1) with every swap of the run, if any. */
void remat_alloc_swap_summary(void);

struct remat_alloc_stats {
	uint64_t physical;   /* bytes of chunks mapped now, all devices */
	uint64_t peak;       /* highest physical since the last reset */
	uint64_t small_pool; /* bytes of the small-allocation chunks */
	uint64_t live;       /* requested bytes of live allocations */
	uint64_t pooled;     /* spare chunks kept for reuse */
	size_t granularity;  /* of the first device initialized */
	/* physical bytes of the program's own handles outside its extents */
	uint64_t program_fixed;
};
void remat_alloc_stats(struct remat_alloc_stats *s);
void remat_alloc_reset_peak(void);

/* ---- the program's own VMM (program.c) -----------------------------------
 * cuMemAddressReserve, cuMemCreate, cuMemMap and the rest, called by the
 * program itself (PyTorch's expandable segments).  A handle libremat
 * backs is "ours": a value only libremat knows, whose memory is chunks of
 * the granularity from the pool (the budget counts them).  A range the
 * program reserves is carved from the large region, so run mode can unmap
 * any chunk of it and map a fresh one at the same address, as it does for
 * the allocator's own allocations.  What the program maps there of one of
 * our handles, exclusively, readable and writable by that device alone,
 * forms extents (maximal contiguous runs): the long-lived allocations the
 * profiler sees.  Each call answers CUDA_ERROR_NOT_SUPPORTED when it is
 * not for libremat (a driver handle, an exportable or unusual kind of
 * memory, a range not carved): the caller makes the real call.  Other
 * errors are the driver's, for what the driver would refuse. */
CUresult remat_prog_reserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                            unsigned long long flags);
CUresult remat_prog_address_free(CUdeviceptr p, size_t size);
CUresult remat_prog_create(CUmemGenericAllocationHandle *h, size_t size,
                           const CUmemAllocationProp *prop, unsigned long long flags);
/* Its memory goes once it is released and unmapped everywhere. */
CUresult remat_prog_release(CUmemGenericAllocationHandle h);
/* Mapping a handle that is mapped already makes it whole: its mappings
 * leave the extents for good. */
CUresult remat_prog_map(CUdeviceptr va, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                        unsigned long long flags);
/* Only whole mappings, as the driver.  The handle takes its chunks back
 * (none for a page an eviction left empty: its content was dead). */
CUresult remat_prog_unmap(CUdeviceptr va, size_t size);
/* Whole mappings; memory readable and writable by the handle's device
 * alone is what extents are made of. */
CUresult remat_prog_set_access(CUdeviceptr va, size_t size, const CUmemAccessDesc *desc,
                               size_t count);
CUresult remat_prog_retain(CUmemGenericAllocationHandle *h, void *addr);
CUresult remat_prog_props(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h);
/* h is ours and mapped (mapping it again changes the extents). */
int remat_prog_mapped_handle(CUmemGenericAllocationHandle h);
/* [va, va+size) overlaps a mapping that may be part of an extent. */
int remat_prog_touches(uint64_t va, uint64_t size);
/* Extents that appeared (added) or went since the last call, oldest
 * first: up to cap of them into out; how many. */
struct remat_prog_change {
	uint64_t addr, size;
	int added;
};
size_t remat_prog_changes(struct remat_prog_change *out, size_t cap);
/* A handle or a reservation of ours exists (read unlocked): the calls
 * taking one must come here even when libremat is otherwise idle. */
extern int remat_prog_live;

#endif
