/*
 * internal.h — shared between the planner's source files; not part of the
 * public interface (that is planner.h).
 */
#ifndef LIBREMAT_PLANNER_INTERNAL_H
#define LIBREMAT_PLANNER_INTERNAL_H

#include "model/model.h"

/* greedy and dtr each try a few variants and keep the best: one that
 * meets the budget (r == 0), then lower recompute cost; among those that
 * miss it (r > 0), the lower peak.  r < 0: the variant failed. */
struct pl_best {
	int r; /* -1 until a variant is taken */
	int64_t cost, peak;
};

static inline int pl_best_take(struct pl_best *b, int r, int64_t cost, int64_t peak)
{
	if (r < 0)
		return 0;
	int better = b->r < 0 || (r == 0 && b->r != 0) ||
	             (r == b->r && (r == 0 ? cost < b->cost : peak < b->peak));
	if (better)
		*b = (struct pl_best){r, cost, peak};
	return better;
}

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
void pl_sel_prune(struct pl_selection *s, struct pl_segtree *t, const struct pl_cands *cs,
                  const int32_t *order, int32_t n, int64_t budget);
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
	size_t n, cap;
	uint8_t *boundary; /* per buffer: kept unmapped at the iteration boundary */
};
int pl_asm_init(struct pl_asm *a, const struct pl_graph *g);
int pl_asm_step(struct pl_asm *a, int32_t pos, int32_t kind, int32_t arg);
int pl_asm_evict(struct pl_asm *a, int32_t pos, int32_t buf);
struct pl_plan *pl_asm_finish(struct pl_asm *a);
void pl_asm_free(struct pl_asm *a);
/* offload.c: a chosen offload candidate's steps and eviction. */
int pl_offload_steps(struct pl_asm *pa, const struct pl_cands *cs, int32_t j);

/* heap.c: binary min-heap on h; j and hi are the user's. */
struct pl_hent {
	double h;
	int32_t j, hi;
};
struct pl_heap {
	struct pl_hent *e;
	uint32_t n, cap;
};
int pl_heap_push(struct pl_heap *hp, struct pl_hent x); /* -1 when out of memory */
struct pl_hent pl_heap_pop(struct pl_heap *hp);         /* hp->n > 0 */

/* Heuristics fill chosen[]; return 0 if the budget is met by their curve. */
int pl_greedy(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen);
int pl_dtr(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen);
/* DTR run offline (sim.c): a plan straight from a walk of the
 * iteration.  0 met, 1 the walk went over the budget (*out is still a
 * plan), 2 no plan (*out NULL), -1 out of memory.  version: of the plan
 * format the plan may use (1: no stash, nothing unmapped at the boundary).
 * deadline (pl_now()'s clock, 0: none): no search beyond the first walks
 * starts after it. */
int pl_sim(const struct pl_graph *g, int64_t budget, int version, double deadline,
           struct pl_plan **out);
struct pl_ilp_result {
	int status; /* 0 = incumbent found */
	double gap, lp_bound;
	int optimal;
	int64_t peak; /* min-peak mode: model peak of the solution */
};
int pl_ilp(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, double time_limit,
           const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r, int verbose);
/* The lowest model peak any selection reaches (r->peak). */
int pl_ilp_min_peak(const struct pl_graph *g, const struct pl_cands *cs, double time_limit,
                    const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r, int verbose);
/* ilp_worker.c: pl_ilp (pl_ilp_min_peak when minpeak) in a child
 * process, stopped at time_limit with the last incumbent it found:
 * GLPK overruns its own limits, the command's must hold.  pl_ilp_timed
 * solves small models in the process (their overruns are milliseconds). */
int pl_ilp_child(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget,
                 double time_limit, const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r,
                 int verbose, int minpeak);
int pl_ilp_timed(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget,
                 double time_limit, const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r,
                 int verbose, int minpeak);

/* bound.c: the lowest peak no plan goes below (*peak_lb) and a lower
 * bound of the recompute cost of any plan within budget (*cost_lb, -1
 * when no plan meets it); -1 when out of memory.  offload: plans may
 * also copy buffers to the host (which frees them at no recompute cost:
 * the cost bound is then 0). */
int pl_cost_bound(const struct pl_graph *g, int64_t budget, int offload, int64_t *cost_lb,
                  int64_t *peak_lb);

/* structure.c: the chain of stages and the program over it.  build: 1
 * when the graph has no chain (fewer than three stages), -1 out of
 * memory.  The candidates it makes are appended to cs (kept for later
 * budgets); cs must outlive it. */
struct pl_struct;
int pl_struct_build(const struct pl_graph *g, struct pl_cands *cs, int strict,
                    struct pl_struct **out);
int pl_struct_plan(struct pl_struct *s, int64_t budget, int32_t **sel, int32_t *nsel, size_t *cap);
int32_t pl_struct_stages(const struct pl_struct *s, int32_t *distinct);
void pl_struct_free(struct pl_struct *s);

/* plan_make.c: planning that keeps its candidates and chain between
 * budgets, all within one deadline (o->started + o->time_limit_s). */
struct pl_ctx;
struct pl_ctx *pl_ctx_new(const struct pl_graph *g, const struct pl_options *o);
void pl_ctx_free(struct pl_ctx *c);
double pl_ctx_left(const struct pl_ctx *c);
void pl_ctx_set_deadline(struct pl_ctx *c, double t); /* pl_now() time */
/* One budget: PL_OK with *out, PL_EBUDGET (res->peak: the closest valid
 * peak, -1 none), PL_EINTERNAL.  no_ilp: the time-independent planners
 * only.  No search for the smallest budget. */
int pl_ctx_plan(struct pl_ctx *c, int64_t budget, int no_ilp, struct pl_plan **out,
                struct pl_result *res, char *err, size_t errlen);
int64_t pl_ctx_min_budget(struct pl_ctx *c, int64_t lo, int64_t hi);

#endif
