/*
 * planners.h — planner/planners/: the planners, each from a graph and a
 * budget to a selection of candidates or a plan: greedy (Capuchin's
 * rule), dtr (DTR's rule over the candidates, and the walk of the
 * iteration, sim.c), the chain of stages and its dynamic program
 * (structure.c), and the MILP (ilp*.c), in its own process when the
 * command's time limit must hold.  search/ runs them and keeps the best.
 */
#ifndef LIBREMAT_PLANNER_PLANNERS_H
#define LIBREMAT_PLANNER_PLANNERS_H

#include "../cands/cands.h"

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
/* What the MILP (ilp.c) is asked: over the candidates of g, the
 * cheapest selection within budget, or (minpeak) the lowest model peak
 * any selection reaches (r->peak); from warm (NULL: none), within
 * time_limit seconds. */
struct pl_ilp_sink;
struct pl_ilp_task {
	const struct pl_graph *g;
	const struct pl_cands *cs;
	int64_t budget;
	double time_limit;
	const uint8_t *warm;
	int verbose;
	int minpeak;
	const struct pl_ilp_sink *sink; /* where incumbents go as found (ilp_worker.c); NULL */
};
int pl_ilp(const struct pl_ilp_task *t, uint8_t *chosen, struct pl_ilp_result *r);
/* ilp_worker.c: pl_ilp in a child process, stopped at the time limit
 * with the last incumbent it found: GLPK overruns its own limits, the
 * command's must hold.  pl_ilp_timed solves small models in the process
 * (their overruns are milliseconds). */
int pl_ilp_child(const struct pl_ilp_task *t, uint8_t *chosen, struct pl_ilp_result *r);
int pl_ilp_timed(const struct pl_ilp_task *t, uint8_t *chosen, struct pl_ilp_result *r);

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

#endif
