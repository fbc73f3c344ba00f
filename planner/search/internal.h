/*
 * internal.h — between plan_make.c and sweep.c: one planning context
 * serves every budget of a sweep.
 */
#ifndef LIBREMAT_PLANNER_SEARCH_INTERNAL_H
#define LIBREMAT_PLANNER_SEARCH_INTERNAL_H

#include "search.h"

/* plan_make.c: planning that keeps its candidates and chain between
 * budgets, all within one deadline (o->started + o->time_limit_s). */
struct pl_ctx;
struct pl_ctx *pl_ctx_new(const struct pl_graph *g, const struct pl_options *o);
void pl_ctx_free(struct pl_ctx *c);
double pl_ctx_left(const struct pl_ctx *c);
void pl_ctx_set_deadline(struct pl_ctx *c, double t); /* pl_now() time */
/* One budget: PL_OK with *out, PL_EBUDGET (res->peak: the closest valid
 * peak, -1 none), PL_EINTERNAL.  no_ilp: the time-independent planners
 * only.  No search for the smallest budget.  A message in res->error. */
int pl_ctx_plan(struct pl_ctx *c, int64_t budget, int no_ilp, struct pl_plan **out,
                struct pl_result *res);
int64_t pl_ctx_min_budget(struct pl_ctx *c, int64_t lo, int64_t hi);

#endif
