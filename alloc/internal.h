/*
 * internal.h — the allocator's per-device state, shared by the files of
 * alloc/ and nobody else.  All of it is guarded by alloc_lock.
 */
#ifndef REMAT_ALLOC_INTERNAL_H
#define REMAT_ALLOC_INTERNAL_H

#include <pthread.h>
#include "../core/driver.h"
#include "../core/log.h"
#include "../core/map.h"
#include "alloc.h"
#include "range.h"

/* A live allocation, in alloc_state.live. */
struct remat_entry {
	uint64_t addr; /* the key: first */
	uint64_t size;
	int32_t dev;
	int32_t small;
	/* swap.c: when the op checks last saw it used (or it was allocated),
	 * ops in flight that reference it, and its host copy while swapped. */
	uint64_t used;
	int32_t pins;
	void *host;
};

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

/* Pages whose unmap waits for the streams that used them (run mode:
 * evictions, released transients).  Unmapped once every event completed. */
#define REMAT_ZOMBIE_EVENTS 8
struct remat_zombie {
	CUevent ev[REMAT_ZOMBIE_EVENTS];
	int nev;
	size_t pages_left;
	int used;
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
	int32_t *page_zombie;               /* index into zombie[], -1 none */
	uint64_t *page_owner;               /* large allocation covering the page, 0 none */
	struct remat_zombie *zombie;
	size_t nzombie, cap_zombie;
	/* Run mode: large ranges freed in this iteration, handed back to
	 * large_va only at the iteration boundary, so no address is reused
	 * within an iteration (a replay may map a dead buffer at its address). */
	struct remat_extent *quar;
	size_t nquar, cap_quar;
	/* Transient copies (plan SAVE steps) live above the large region. */
	struct remat_range scratch_va;
	struct remat_pending *pending;
	size_t npending, cap_pending;
	CUmemGenericAllocationHandle *pool; /* spare chunks */
	size_t npool, cap_pool;
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
};

#define REMAT_MAX_DEVICES 64

/* The allocator's state, all guarded by its lock except where a field
 * says otherwise.  (What other layers read without the lock on the op
 * path stays apart, in alloc.h: remat_alloc_swap_armed, remat_alloc_nswapped,
 * remat_prog_live.) */
struct alloc_state {
	pthread_mutex_t lock;
	/* alloc.c: every device and the live allocations (swap.c walks them) */
	struct remat_device devs[REMAT_MAX_DEVICES];
	struct remat_map live; /* of struct remat_entry, by address */
	uint64_t live_bytes;
	size_t first_gran;
	/* remat_alloc_follow: the addresses to hand out next, in order */
	CUdeviceptr *follow;
	size_t nfollow, follow_next;
	int quarantining; /* run mode: see remat_device.quar */
	/* pool.c */
	uint64_t physical, peak, small_bytes;
	uint64_t budget;    /* run mode: cap on physical bytes, 0 none */
	uint64_t shortfall; /* bytes missing at the last budget refusal */
	/* pending.c */
	uint64_t gen; /* counts allocations, for ordered_gen */
	/* events are reused: creating one per free would cost a driver call */
	CUevent *spare_ev;
	size_t nspare_ev, cap_spare_ev;
	/* zombie.c */
	int zombies; /* zombie entries on all devices (read unlocked) */
	/* swap.c */
	int swapping; /* swapping allowed now (run mode, no plan applied) */
	/* Use stamps: allocations take one when made, op checks when they
	 * touch them; the smallest is the least recently used. */
	uint64_t clock;
	struct remat_swap_stats swap_stats, swap_reported;
};
extern struct alloc_state alloc_state;

/* alloc.c: device dev's state, initialized at its first use; NULL when it
 * cannot be managed. */
struct remat_device *remat_device_ready(CUdevice dev);
/* One line: an allocation of size bytes needing need more would exceed the
 * budget (alloc_state.shortfall is set). */
void remat_alloc_refused(struct remat_device *d, size_t size, uint64_t need);

/* program.c: physical bytes of the program's handles outside every
 * extent (never evicted: counted like the small chunks). */
uint64_t remat_prog_fixed(void);

/* swap.c */
/* Device d refused a chunk: swaps one allocation out to the host.  0 when
 * it did (chunks are back in the pool or with the driver), -1 when nothing
 * can go. */
int remat_swap_make_room(struct remat_device *d);
/* An allocation leaves the table: drops its host copy if it is swapped. */
void remat_swap_forget(struct remat_entry *e);

/* pool.c */
CUresult remat_pool_get(struct remat_device *d, CUmemGenericAllocationHandle *h);
void remat_pool_put(struct remat_device *d, CUmemGenericAllocationHandle h);
void remat_pool_trim(struct remat_device *d);
/* Maps one chunk at va and makes it accessible. */
CUresult remat_map_chunk(struct remat_device *d, uint64_t va, CUmemGenericAllocationHandle h);

/* pending.c */
CUevent remat_event_get(void);
void remat_event_put(CUevent e);
/* Like remat_pending_reclaim, but waits for every pending free first. */
void remat_pending_reclaim_wait(struct remat_device *d);
int remat_pending_add(struct remat_device *d, uint64_t addr, uint64_t size, CUstream stream,
                      int small, size_t pages);
/* Orders an allocation on stream (async or not) after free p. */
void remat_pending_order(struct remat_device *d, struct remat_pending *p, CUstream stream,
                         int async);
void remat_pending_release(struct remat_device *d, int32_t i);
/* Returns to the pool what completed frees left mapped. */
void remat_pending_reclaim(struct remat_device *d);

/* zombie.c */
/* Defers the unmap of pages [first, first+n) until work issued so far on
 * streams[0..ns) completed.  Pages with no chunk are skipped. */
int remat_zombie_add(struct remat_device *d, size_t first, size_t n, const CUstream *streams,
                     int ns);
/* Unmaps what completed; with wait, waits for all of it first. */
void remat_zombie_reclaim(struct remat_device *d, int wait);
/* Page pg keeps its chunk for a new user on stream s (ordered after the
 * zombie's events): 1, or 0 when pg is not a zombie. */
int remat_zombie_take(struct remat_device *d, size_t pg, CUstream s, int async);
/* Page pg's chunk belongs to a pending free or a zombie: the new user keeps
 * it, ordered after; 1 when so, 0 when the page has no chunk. */
int remat_page_take(struct remat_device *d, size_t pg, CUstream stream, int async);

/* large.c */
CUresult remat_large_alloc(struct remat_device *d, uint64_t *p, size_t size, CUstream stream,
                           int async, uint64_t want);
void remat_large_free(struct remat_device *d, uint64_t p, size_t size, CUstream stream, int async);
void remat_large_unmap_page(struct remat_device *d, size_t pg);
CUresult remat_large_map_pages(struct remat_device *d, size_t first, size_t n, CUstream stream,
                               int async);
/* Hands the quarantined ranges back to large_va. */
void remat_large_unquarantine(struct remat_device *d);

/* small.c */
CUresult remat_small_alloc(struct remat_device *d, uint64_t *p, size_t size, CUstream stream,
                           int async, uint64_t want);
void remat_small_free(struct remat_device *d, uint64_t p, size_t size, CUstream stream, int async);

#define REMAT_SMALL_ALIGN 256

#endif
