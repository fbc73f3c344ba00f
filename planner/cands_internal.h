/*
 * cands_internal.h — candidate generation internals shared by
 * candidates.c, recipe.c and segments.c.
 */
#ifndef LIBREMAT_PLANNER_CANDS_INTERNAL_H
#define LIBREMAT_PLANNER_CANDS_INTERNAL_H

#include "internal.h"

struct cindex {
	uint32_t *wr_off; /* writers of b: writers[wr_off[b] .. wr_off[b+1]), ascending */
	int32_t *writers;
	uint32_t *use_off; /* ops referencing b, ascending */
	int32_t *uses;
	uint32_t *gap_off; /* gaps of b: cs->gaps[gap_off[b] .. gap_off[b+1]) */
	int32_t *single;   /* per gap: its single candidate, or -1 */
	/* per op: a lower bound of what replaying it costs: itself and, for
	 * each buffer it updates in place, the chain that rebuilds the version
	 * it read (never current once the op has run) */
	int64_t *chain;
	/* coll[p]: collectives among ops 0 .. p-1 (nops + 1 entries) */
	int32_t *coll;
};

/* Writers and uses of every buffer (gap_off and single are filled by
 * pl_cands_build); -1 when out of memory.  Free with pl_cindex_free. */
int pl_cindex_build(const struct pl_graph *g, struct cindex *ix);

/* The flags of b's reference in op k (0 if none) and the version it sees. */
static inline uint32_t pl_ref_flags(const struct pl_graph *g, int32_t k, int32_t b, int32_t *ver)
{
	const struct pl_op *op = &g->ops[k];
	for (uint32_t i = 0; i < op->nrefs; i++)
		if (g->refs[op->ref_off + i].buf == b) {
			*ver = g->refs[op->ref_off + i].ver;
			return g->refs[op->ref_off + i].flags;
		}
	return 0;
}
void pl_cindex_free(struct cindex *ix);
/* Whether a buffer idle between its uses at a < c (ops a+1 .. c-1) would
 * be rebuilt across a collective: no such gap is evicted, since a rank
 * rebuilding around a collective would hold up every rank. */
int pl_idle_spans_collective(const struct cindex *ix, int32_t a, int32_t c);

/* Scratch and result of building one rebuild recipe.  Every list grows
 * as needed: no recipe is refused for its length. */
struct recipe {
	/* input: the buffers to rebuild and keep, with the versions they must end with */
	int32_t nt;
	int32_t *tb, *tv;
	/* when set, the actual state at c: an alive buffer is resident iff mapped */
	const uint8_t *mapped;
	/* with mapped: per buffer, an earlier rebuild wrote over its content
	 * (dead there) since the program last wrote it.  Without an actual
	 * state, content the program overwrites before reading it again is
	 * never a replay's input (it is rebuilt). */
	const uint8_t *clobbered;
	/* with mapped: keep evicted buffers rebuilt on the way mapped (listed
	 * in kept) rather than releasing them, those needed soonest first,
	 * up to keep_limit bytes */
	int keep;
	int64_t keep_limit;
	int no_stash; /* plan format version 1: content from before the iteration is not at hand */
	/* > 0: give up on a recipe whose replays cost more (ns) */
	int64_t cost_limit;
	const struct cindex *ix; /* of the current build */
	/* > 0: the candidate saves this many bytes from position save_from
	 * on; a stash that would cancel that makes the recipe fail early */
	int64_t save_bytes;
	int32_t save_from;
	/* result */
	int32_t nops; /* ops replayed, ascending */
	int32_t *ops;
	int32_t nsteps;
	struct pl_step *steps;
	int32_t nforbid; /* gaps of other buffers that must stay resident */
	int32_t *forbid;
	int32_t nstash; /* buffers whose pre-iteration content comes from their stash */
	int32_t *stash;
	int32_t nkept; /* with keep: rebuilt on the way and left mapped */
	int32_t *kept;
	int64_t cost, transient;
	int32_t last_op;
	/* scratch */
	int32_t ntouched, nwork;
	int32_t *touched, *work, *order;
	size_t cap_t, cap_tv, cap_ops, cap_steps, cap_forbid, cap_stash, cap_kept, cap_touched,
	    cap_work, cap_order;
	/* per buffer, valid where stamp == epoch; per op, in the set where opstamp == epoch */
	uint32_t epoch;
	int32_t nbufs_, nops_; /* sizes of the per-buffer and per-op arrays */
	uint32_t *stamp, *opstamp;
	int32_t *lver, *first, *last;
	int32_t *vat; /* per touched buffer alive at c: its version there */
	uint8_t *bflag, *bflag2;
};

struct cbuild {
	struct pl_cands *cs;
	size_t cap_c, cap_r, cap_g, cap_f, cap_s, cap_gaps;
};

int pl_recipe_init(struct recipe *rc, const struct pl_graph *g);
void pl_recipe_free(struct recipe *rc);
/* Room for n targets in tb/tv; -1 when out of memory. */
int pl_recipe_targets(struct recipe *rc, int32_t n);
/* Builds the recipe for the targets at position c: 0, or -1 when they
 * cannot be rebuilt there (a non-replayable op, content no replay gives). */
int pl_recipe_build(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                    const struct pl_cands *cs, int32_t c, int strict);
/* After a build on an actual state, for b mapped at c and written by the
 * replays in place (not a target, not saved and restored): 1 when they
 * leave it holding other content than it held there (dead content they
 * write over), 0 when they leave it as it was; -1 for any other b. */
int pl_recipe_overwrites(const struct recipe *rc, int32_t b);
/* The memory ranges a recipe adds at c besides its targets: each stash,
 * held from the first use of its buffer to c (negative saved bytes).
 * Appends to *rg (grown as needed); -1 when out of memory. */
int pl_recipe_stash_ranges(const struct recipe *rc, const struct pl_graph *g,
                           const struct cindex *ix, int32_t c, struct pl_range **rg, int32_t *nr,
                           size_t *cap);

/* Where a buffer's stash is taken: before its first use (pl_stash_pos). */
int32_t pl_stash_at(const struct pl_graph *g, const struct cindex *ix, int32_t b);
int32_t pl_ver_at(const struct pl_graph *g, const struct cindex *ix, int32_t b, int32_t p);
int32_t pl_gap_at(const struct pl_cands *cs, const struct cindex *ix, int32_t b, int32_t p,
                  int end_ok);
int pl_cands_add(struct cbuild *cb, const struct pl_cand *proto, const struct pl_range *ranges,
                 int nranges, const int32_t *gaps, int ngaps, const struct recipe *rc);
int32_t pl_set_cand(struct cbuild *cb, const struct pl_graph *g, const struct cindex *ix,
                    struct recipe *rc, const int32_t *tg, int32_t nt, int32_t c, int strict,
                    int add, struct pl_range **rg, size_t *cap_rg);
/* Rebuilds the reverse indexes (by_gap, forbid_by) after candidates were
 * appended; -1 when out of memory. */
int pl_cands_reindex(struct pl_cands *cs);
/* gap_off of ix from the gaps of cs (they are in buffer order). */
int pl_cindex_gaps(const struct pl_graph *g, const struct pl_cands *cs, struct cindex *ix);
/* offload.c: offload candidates for the gaps built so far, at gbps. */
int pl_offload_build(const struct pl_graph *g, struct cbuild *cb, double gbps);
int pl_segments_build(const struct pl_graph *g, const struct cindex *ix, struct cbuild *cb,
                      struct recipe *rc, int strict, int max_segment);

#endif
