/*
 * cands.h — planner/cands/: the decisions a planner chooses from.  A
 * candidate drops a buffer version over an idle gap and rebuilds it by
 * replay (candidates.c, segments.c) or offloads it (offload.c); a
 * recipe says how a set of versions is rebuilt at a position (recipe.c);
 * a selection of candidates has a memory curve and stands for a plan
 * (selection.c), which assemble.c puts together.  The planners that make
 * candidates of their own (the chain of stages) append them with
 * pl_set_cand.
 */
#ifndef LIBREMAT_PLANNER_CANDS_H
#define LIBREMAT_PLANNER_CANDS_H

#include "../model/model.h"

/* ---- candidates: (buffer, idle gap, rebuild recipe) decisions ---- */

struct pl_range {
	int32_t lo, hi; /* positions lo..hi inclusive where bytes are saved */
	int64_t bytes;  /* negative: bytes added there (a stash held until the rebuild) */
};

struct pl_cand {
	int32_t at;        /* rebuild position (steps run before op at); -1 = never rebuilt */
	int64_t cost;      /* ns of replayed ops */
	int64_t transient; /* upper bound of extra bytes while the steps at `at` run */
	uint32_t range_off, nranges;
	uint32_t gap_off, ngaps;      /* gaps it takes (pl_cands.gap_list) */
	uint32_t forbid_off, nforbid; /* gaps that must stay resident if chosen */
	uint32_t step_off, nsteps;    /* rebuild steps at `at` */
	int32_t order_key; /* last replayed op: rebuilds at one position run in this order */
	uint8_t segment;
	/* An offload (offload.c) instead of a rebuild: the copy out starts
	 * after the gap's last use, the device copy is evicted after op
	 * evict_at, the prefetch starts before op fetch_at and is awaited
	 * before the next use.  Copy engine e (0 out, 1 in) is busy for
	 * share[e] of the time of ops eng_lo[e] .. eng_hi[e]. */
	uint8_t offload;
	int32_t evict_at, fetch_at;
	int32_t eng_lo[2], eng_hi[2];
	double share[2];
};

struct pl_gap {
	int32_t buf;
	int32_t a, c;     /* last use before, next use (or free_at for a dead gap) */
	int32_t ver;      /* version held over the gap */
	uint8_t dead;     /* no use after it: evicted until freed */
	uint8_t boundary; /* dead across the boundary: from the last use a over the end
	                   * of the iteration to the first use c (c <= a); kept
	                   * unmapped at the boundary, mapped again before c */
	int64_t bytes;    /* physical bytes of the buffer */
};

struct pl_cands {
	int32_t ngaps, ncands;
	struct pl_gap *gaps;
	struct pl_cand *c;
	struct pl_range *ranges;
	int32_t *gap_list, *forbid_list;
	struct pl_step *steps;
	/* reverse index: candidates that take gap q: by_gap[by_gap_off[q] .. by_gap_off[q+1]) */
	uint32_t *by_gap_off;
	int32_t *by_gap;
	/* candidates that forbid gap q */
	uint32_t *forbid_by_off;
	int32_t *forbid_by;
	uint32_t nranges, ngap_list, nforbid_list, nsteps;
	double offload_gbps; /* > 0: offload candidates were made for this bandwidth */
};

int pl_cands_build(const struct pl_graph *g, const struct pl_options *o, struct pl_cands *cs,
                   char *err, size_t errlen);

/* offload.c: the copy engines' load of a selection of offload
 * candidates, per position and direction (each at most 1: copies on one
 * engine run one after another). */
struct pl_engines {
	int32_t nops;
	double *load[2];
};
int pl_eng_init(struct pl_engines *e, int32_t nops);
void pl_eng_free(struct pl_engines *e);
/* Whether candidate j fits beside what is taken (always, for a rebuild). */
int pl_eng_fits(const struct pl_engines *e, const struct pl_cands *cs, int32_t j);
void pl_eng_apply(struct pl_engines *e, const struct pl_cands *cs, int32_t j, int sign);
void pl_cands_free(struct pl_cands *cs);

/* A selection of candidates and its memory curve (without transients
 * overlapping; see selection.c). */
struct pl_selection {
	uint8_t *chosen;    /* per candidate */
	int32_t *conflicts; /* per candidate: clashes with the chosen ones (0: compatible) */
};

int pl_sel_init(struct pl_selection *s, const struct pl_cands *cs);
void pl_sel_clear(struct pl_selection *s, const struct pl_cands *cs); /* none chosen */
void pl_sel_free(struct pl_selection *s);
int pl_sel_compatible(const struct pl_selection *s, int32_t j);
void pl_sel_take(struct pl_selection *s, const struct pl_cands *cs, int32_t j);
void pl_sel_drop(struct pl_selection *s, const struct pl_cands *cs, int32_t j);
struct pl_segtree;
void pl_sel_apply(struct pl_segtree *t, const struct pl_cands *cs, int32_t j, int sign);
/* A list of candidate ids. */
struct pl_ids {
	const int32_t *id;
	int32_t n;
};
/* Drops candidates of order (the ones taken, in the order taken) from
 * the selection, last first, while t stays within the budget. */
void pl_sel_prune(struct pl_selection *s, struct pl_segtree *t, const struct pl_cands *cs,
                  struct pl_ids order, int64_t budget);
int pl_cand_overshoots(struct pl_segtree *t, const struct pl_cands *cs, int32_t j, int64_t budget);
void pl_added_bytes(const struct pl_graph *g, const struct pl_cands *cs, int64_t *add);
int64_t pl_cand_bytes(const struct pl_cands *cs, int32_t j);
int64_t pl_forbid_bytes(const struct pl_cands *cs, int32_t j);
int32_t pl_useful(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget,
                  int32_t *out);

/* Upper-bound memory curve of a selection: baseline minus ranges plus transients. */
void pl_sel_curve(const struct pl_graph *g, const struct pl_cands *cs, const uint8_t *chosen,
                  int64_t *curve);
struct pl_plan *pl_sel_plan(const struct pl_graph *g, const struct pl_cands *cs,
                            const uint8_t *chosen);

/* assemble.c: a plan from decided steps and evictions; stashes are
 * added where the unstashes need them.  pl_asm_finish consumes the
 * builder; pl_asm_free releases the rest either way. */
struct pl_asm {
	const struct pl_graph *g;
	struct pl_plan_builder *b;
	struct pl_step *st; /* steps in plan order, at positions pos */
	int32_t *pos;
	size_t n, cap_st, cap_pos;
	uint8_t *boundary; /* per buffer: kept unmapped at the iteration boundary */
};
int pl_asm_init(struct pl_asm *a, const struct pl_graph *g);
int pl_asm_step(struct pl_asm *a, int32_t pos, int32_t kind, int32_t arg);
int pl_asm_evict(struct pl_asm *a, int32_t pos, int32_t buf);
struct pl_plan *pl_asm_finish(struct pl_asm *a);
void pl_asm_free(struct pl_asm *a);
/* offload.c: a chosen offload candidate's steps and eviction. */
int pl_offload_steps(struct pl_asm *pa, const struct pl_cands *cs, int32_t j);

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
	/* replays may not read buffers rebuilt at the same position (pl_options.strict) */
	int strict;
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
                    const struct pl_cands *cs, int32_t c);
/* After a build on an actual state, for b mapped at c and written by the
 * replays in place (not a target, not saved and restored): 1 when they
 * leave it holding other content than it held there (dead content they
 * write over), 0 when they leave it as it was; -1 for any other b. */
int pl_recipe_overwrites(const struct recipe *rc, int32_t b);

/* Where a buffer's stash is taken: before its first use (pl_stash_pos). */
int32_t pl_stash_at(const struct pl_graph *g, const struct cindex *ix, int32_t b);
int32_t pl_ver_at(const struct pl_graph *g, const struct cindex *ix, int32_t b, int32_t p);
/* Ranges being collected, grown as needed. */
struct pl_ranges {
	struct pl_range *r;
	int32_t n;
	size_t cap;
};
/* Building candidates that rebuild several versions at once (segments.c,
 * the chain's runs): where they go, the graph's index, the recipe and
 * scratch for their ranges.  strict goes to the recipe. */
struct pl_setb {
	struct cbuild *cb;
	const struct pl_graph *g;
	struct cindex *ix;
	struct recipe *rc;
	int strict;
	struct pl_ranges rg;
};
/* A candidate that drops the versions of gaps tg[0..nt) and rebuilds
 * them all before op c, each kept until its own use.  Builds the recipe
 * (rc->forbid holds its forbidden gaps after), adds the candidate when
 * add is set; its index, -3 when built but not added (or it saves
 * nothing), -1 when it cannot be rebuilt at c, -2 out of memory. */
int32_t pl_set_cand(struct pl_setb *sb, const int32_t *tg, int32_t nt, int32_t c, int add);
/* Rebuilds the reverse indexes (by_gap, forbid_by) after candidates were
 * appended; -1 when out of memory. */
int pl_cands_reindex(struct pl_cands *cs);
/* gap_off of ix from the gaps of cs (they are in buffer order). */
int pl_cindex_gaps(const struct pl_graph *g, const struct pl_cands *cs, struct cindex *ix);

#endif
