/*
 * model.h — planner/model/: the op-graph model of one iteration and what
 * every part of the planner computes on it: building and deriving a
 * graph (graph.c), the chunks buffers share (shared.c), the view with the
 * parked buffers left out (park.c), the evaluator (evaluate.c, declared in
 * planner.h), and the small containers the other folders share (sort.c,
 * segtree.c; growable arrays and binary searches are core/'s).
 */
#ifndef LIBREMAT_PLANNER_MODEL_H
#define LIBREMAT_PLANNER_MODEL_H

#include "../planner.h"
#include "../../core/grow.h"
#include "../../core/search.h"

#include <stdarg.h>
#include <stdio.h>

#define PL_FNV_OFFSET 0xcbf29ce484222325ull
#define PL_FNV_PRIME  0x100000001b3ull

/* The largest size (bytes), duration (ns) or count the loaders take from
 * a file, and the largest sum of them a graph may reach (the buffers'
 * bytes with const_bytes, the ops' durations): 2^53, exact in a double.
 * Whatever the planners add up (a buffer counted a few times over, a
 * curve, a saving) then stays far inside int64_t. */
#define PL_MAX_AMOUNT (INT64_C(1) << 53)

int pl_errf(char *err, size_t errlen, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
uint64_t pl_fnv(uint64_t h, const void *data, size_t n);

/* Graph construction, shared by the loaders. */
struct pl_graph *pl_graph_new(void);
const char *pl_graph_strdup(struct pl_graph *g, const char *s);
/* Allocates ops, buffers and refs; loaders fill refs with raw flags
 * (PL_REF_READ = listed in reads, PL_REF_WRITE = listed in writes). */
int pl_graph_reserve(struct pl_graph *g, int32_t nops, int32_t nbufs, uint32_t nrefs);
/* Checks references and lifetimes, derives versions, real reads, baseline
 * curve and the content hash when none was given (has_hash = 0). */
int pl_graph_finish(struct pl_graph *g, int has_hash, const char *src, char *err, size_t errlen);

/* g->live (nops entries, allocated) and g->baseline_peak from the
 * buffers' bytes by position (diff[p]: what changes before op p) and the
 * shared chunks, which this adds to diff; -1 out of memory. */
int pl_graph_baseline(struct pl_graph *g, int64_t *diff);

/* Buffers by alloc_at (use_free 0) or free_at (1), as a CSR list over
 * positions: list[off[p] .. off[p+1]).  NULL when out of memory. */
int32_t *pl_bufs_by_pos(const struct pl_graph *g, int use_free, uint32_t **off);

/* v and g within 0..PL_MAX_AMOUNT (the loaders see to it): no overflow. */
static inline int64_t pl_round_up(int64_t v, int64_t g)
{
	return g > 1 ? (v + g - 1) / g * g : v;
}

/* Any buffer with physical bytes of its own: the versions of a
 * persistent one written inside the iteration are evicted like
 * activations; what lives across the boundary stays (see cands/candidates.c). */
static inline int pl_buf_evictable(const struct pl_buffer *b)
{
	/* (a region with no whole chunk frees the chunks it shares) */
	return !b->small && !b->excluded && (b->rounded > 0 || b->shared[0]);
}

/* Position whose steps take a buffer's stash (its content from before
 * the iteration): its first use, when that content is still there and
 * mapped (it is never evicted before its first write).  Plans and
 * candidates must agree on it. */
static inline int32_t pl_stash_pos(int32_t first_use)
{
	return first_use >= 0 ? first_use : 0;
}

/* Simulated ns of one host <-> device copy of `bytes` at gbps GB/s (one
 * byte per ns per GB/s), as the simulated device's copy engines take
 * (sim/driver/clock.c): 1000 ns plus the transfer. */
static inline int64_t pl_copy_ns(int64_t bytes, double gbps)
{
	return 1000 + (int64_t)((double)bytes / gbps + 0.5);
}

/* ns of one copy of a buffer inside device memory (save, restore, stash,
 * unstash): the graph's measured model, 0 when it has none. */
static inline int64_t pl_dev_copy_ns(const struct pl_graph *g, const struct pl_buffer *b)
{
	if (g->copy_bytes_per_us <= 0)
		return 0;
	return g->copy_fixed_ns +
	       (int64_t)((double)b->size * 1000.0 / (double)g->copy_bytes_per_us + 0.5);
}

/* Bytes of a saved copy of a buffer: whole chunks, small ones too.  A
 * copy holds all of the buffer's bytes, so a region of a long-lived
 * allocation that starts and ends inside chunks needs more of them than
 * it holds whole (rounded): libremat's copy takes the size rounded up. */
static inline int64_t pl_save_bytes(const struct pl_graph *g, const struct pl_buffer *b)
{
	int64_t whole = pl_round_up(b->size, g->granularity);
	return b->rounded > whole ? b->rounded : whole;
}

/* The version a buffer holds when the iteration starts: content from
 * before it, or nothing anyone reads (allocated inside, or dead across
 * the boundary). */
static inline int32_t pl_ver_initial(const struct pl_buffer *b)
{
	return b->alloc_at < 0 && !b->dead_across ? PL_VER_PRE : PL_VER_FRESH;
}

static inline int pl_buf_alive(const struct pl_buffer *b, int32_t p, int32_t nops)
{
	int32_t lo = b->alloc_at < 0 ? 0 : b->alloc_at;
	int32_t hi = b->free_at < 0 ? nops : b->free_at;
	return p >= lo && p < hi;
}

/* shared.c: the chunks buffers share.  count[s] is how many buffers of
 * group s are mapped (g->nshared entries, zero to start with): mapping
 * buffer b adds its own bytes and the groups nobody held; unmapping it
 * frees its own and those it was the last to hold.  need: what mapping b
 * would add now, count unchanged. */
int64_t pl_map_bytes(const struct pl_graph *g, int32_t *count, int32_t b);
int64_t pl_unmap_bytes(const struct pl_graph *g, int32_t *count, int32_t b);
int64_t pl_map_need(const struct pl_graph *g, const int32_t *count, int32_t b);
/* What the candidates' model counts evicting b saves: its own bytes and
 * an equal share of each group it is in whose buffers can all be out
 * (none lives across the boundary).  Exact when all of a group's buffers
 * are out together, optimistic when not: plans are judged by the
 * evaluator, and search/plan_make.c plans again for less where the shares were
 * too much.  (The ILP takes the shares back out and counts the groups
 * exactly: planners/ilp_shared.c.) */
int64_t pl_model_bytes(const struct pl_graph *g, int32_t b);
/* The walk's measure of evicting b now: its own bytes and, of each group
 * all of whose buffers can be out, the bytes over how many still hold it
 * (all of them when b is the last). */
int64_t pl_evict_gain(const struct pl_graph *g, const int32_t *count, int32_t b);
/* Whether every buffer of group s can be out over the middle of the
 * iteration: evictable, and nothing of it lives across the boundary (a
 * weight next to an activation keeps their chunk). */
int pl_shared_freeable(const struct pl_graph *g, int32_t s);

/* Adds to diff[p] (nops + 1 entries) the bytes of every group over the
 * positions where one of its buffers is allocated: the baseline.  -1 out
 * of memory. */
int pl_shared_baseline(const struct pl_graph *g, int64_t *diff);

/* sort.c: pl_radix_sort, a stable sort by key (ties keep their order),
 * -1 when out of memory; pl_key_desc, the key that sorts doubles
 * largest first (not NaN).  pl_sort_i32 sorts ascending; pl_sort_ids
 * sorts ids by (key[id], id). */
struct pl_keyed {
	uint64_t key;
	int32_t i;
};
int pl_radix_sort(struct pl_keyed *a, size_t n);
uint64_t pl_key_desc(double v);
void pl_sort_i32(int32_t *a, int32_t n);
void pl_sort_ids(int32_t *ids, int32_t n, const int32_t *key);

/* Max segment tree with range add, for the heuristics. */
struct pl_segtree {
	int32_t n, size, height;
	int64_t *mx, *add;
};
int pl_st_init(struct pl_segtree *t, const int64_t *v, int32_t n);
void pl_st_free(struct pl_segtree *t);
void pl_st_add(struct pl_segtree *t, int32_t lo, int32_t hi, int64_t d);
int64_t pl_st_max(struct pl_segtree *t, int32_t lo, int32_t hi);

/* park.c: the buffers a plan parks on the host (live across the
 * boundary, referenced by no op) and the view of the graph without them,
 * on which the planners plan when offload is allowed.  n = 0 (nothing
 * allocated) when there are none; -1 out of memory. */
struct pl_park {
	int32_t n, *bufs;   /* parked buffers, ascending */
	int64_t host_bytes; /* their bytes */
	struct pl_graph view;
	struct pl_buffer *view_bufs;
	struct pl_shared *view_shared;
	int32_t *view_shared_bufs;
	int64_t *view_live;
};
int pl_park_view(const struct pl_graph *g, struct pl_park *pk);
void pl_park_free(struct pl_park *pk);

#endif
