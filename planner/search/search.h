/*
 * search.h — planner/search/: from a graph and a budget to a checked
 * plan (plan_make.c: every planner within the time limit, the best kept,
 * the smallest reachable budget when the asked one is not), the whole
 * budget curve (sweep.c), the bound the gap of every plan is measured
 * against (bound.c), the progress lines (progress.c).  Most of it is
 * declared in planner.h; here is the bound, which the tests and
 * plan_bench read on their own.
 */
#ifndef LIBREMAT_PLANNER_SEARCH_H
#define LIBREMAT_PLANNER_SEARCH_H

#include "../planners/planners.h"

/* bound.c: the lowest peak no plan goes below (*peak_lb) and a lower
 * bound of the recompute cost of any plan within budget (*cost_lb, -1
 * when no plan meets it); -1 when out of memory.  offload: plans may
 * also copy buffers to the host (which frees them at no recompute cost:
 * the cost bound is then 0). */
int pl_cost_bound(const struct pl_graph *g, int64_t budget, int offload, int64_t *cost_lb,
                  int64_t *peak_lb);

#endif
