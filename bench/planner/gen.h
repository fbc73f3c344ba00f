/* gen.h — synthetic training graphs for the planner benchmark. */
#ifndef LIBREMAT_BENCH_PLANNER_GEN_H
#define LIBREMAT_BENCH_PLANNER_GEN_H

#include "../../planner/search/search.h"

enum gen_family { GEN_UNIFORM_CHAIN, GEN_HETERO_CHAIN, GEN_RESNET, GEN_TRANSFORMER };

const char *gen_family_name(enum gen_family f);
/* About nops ops (forward, loss, backward); seed picks sizes and durations. */
struct pl_graph *gen_graph(enum gen_family fam, int32_t nops, uint64_t seed);

/* cover_lp.c: the LP optimum (ns) of the relaxation over every position
 * at once, at least the relaxation's (-1: no plan meets the budget, -2:
 * the solver failed); -1 when out of memory. */
int cover_lp(const struct pl_graph *g, int64_t budget, double *lp_ns);

#endif
