/*
 * internal.h — shared between the planner's source files; not part of the
 * public interface (that is planner.h).
 */
#ifndef LIBREMAT_PLANNER_INTERNAL_H
#define LIBREMAT_PLANNER_INTERNAL_H

#include "cands/cands.h"

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
