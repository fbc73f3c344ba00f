/*
 * sim_internal.h — the walk of the iteration (sim.c) and the search over
 * walks that makes the dtr planner's plan (sim_search.c).
 */
#ifndef LIBREMAT_PLANNER_SIM_INTERNAL_H
#define LIBREMAT_PLANNER_SIM_INTERNAL_H

#include "internal.h"

#include "../../core/map.h"

/* The cost estimates of an eviction stop after this many ops: a rebuild
 * that long is as good as never worth it (the walk still makes it when
 * nothing else is left). */
#define SIM_ESTIMATE_OPS 64

/* One walk's state, kept across walks: what failed (never), which stashes
 * need memory (reserve), which evictions are forbidden (pins). */
struct walk {
	const struct pl_graph *g;
	struct cindex ix;
	struct recipe rc;
	int64_t budget, mem, peak;
	int64_t *tm;           /* tm[p]: start time of op p (sum of durations before it) */
	uint8_t *mapped;       /* per buffer */
	uint8_t *clobbered;    /* per buffer: a rebuild wrote over its dead content */
	int32_t *share;        /* per shared chunk group: its buffers mapped */
	uint8_t *never;        /* per buffer: its rebuild failed once, keep it */
	uint8_t *reserve;      /* per buffer: hold its stash from its first use on */
	uint8_t *stashed;      /* per buffer: a rebuild took it from its stash (this walk) */
	int32_t *last;         /* per buffer: last position an op or a rebuild touched it */
	uint32_t *seen, epoch; /* per op, for rebuild_cost */
	int32_t *stack, *stack2;
	enum { IDLE_TIME, IDLE_SQRT, IDLE_OPS } variant; /* how idle time weighs */
	/* evictions the walk may not make: records (buffer << 32 | position) + 1
	 * (0 is no key in a map) */
	struct remat_map pins;
	/* what each eviction cost in rebuilds, this walk */
	int32_t *evq; /* per buffer: where its current eviction took effect */
	struct event {
		uint64_t key; /* as pins */
		int64_t cost;
	} * ev;
	size_t nev, cap_ev;
	uint32_t *busy; /* per buffer: == p + 1 while op p or its rebuild uses it */
	uint32_t *aoff, *foff, *soff;
	int32_t *alist, *flist, *slist; /* allocations, frees, stashes by position */
	struct pl_heap heap;
	struct pl_asm pa;
	int failed; /* a recipe did not hold (never[] grew) or a repair pinned: walk again */
	/* Repairs: when a rebuild would take the walk over the budget, pin
	 * the evictions that made it (the evicted buffer stays over that
	 * idle time) and walk again, at most `repair` times per sim_walk_all.
	 * 0: off (each way wins on some graph: pl_sim walks both). */
	int repair, repairs_left;
	/* Evictions whose rebuild costs more than this per byte (the
	 * writer's duration over the buffer's bytes) are not made: a walk
	 * that evicts by idle time takes whatever is idle longest, and on
	 * graphs where the cheap-to-rebuild activations are not the idle
	 * ones (residual blocks: the sums) it pays several times what the
	 * cheap ones would have cost.  < 0: no limit. */
	double max_ratio;
	/* A walk whose rebuilds cost more than this is given up (no plan):
	 * it cannot beat the plan it is weighed against, and a filtered walk
	 * that cannot make room rebuilds from far back at every op (minutes
	 * on 100k ops).  < 0: no limit. */
	int64_t cost_cap, spent;
	int keep; /* keep what a rebuild rebuilds on the way (DTR does) */
	int v2;   /* plan format version 2: stashes, buffers unmapped at the boundary */
};

int sim_walk_init(struct walk *w, const struct pl_graph *g, int64_t budget, int version);
void sim_walk_free(struct walk *w);
/* Walks until it settles: 0 with the plan in *out (*met: within the
 * budget), 1 no plan, -1 out of memory. */
int sim_walk_all(struct walk *w, struct pl_plan **out, int *met);

/* What rebuilding b's version written by op v costs per byte, at least
 * (the walk's filter, max_ratio). */
static inline double sim_ratio(const struct pl_graph *g, int32_t b, int32_t v)
{
	return (double)g->ops[v].duration_ns / (double)(g->bufs[b].rounded + 1);
}

/* Evictions a walk may not make: b idle from position q. */
static inline uint64_t sim_pin_key(int32_t b, int32_t q)
{
	return (uint64_t)(uint32_t)b << 32 | (uint32_t)q;
}
int sim_pin(struct walk *w, uint64_t key); /* -1 when out of memory */
void sim_unpin(struct walk *w, uint64_t key);
void sim_unpin_all(struct walk *w);

#endif
