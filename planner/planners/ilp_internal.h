/*
 * ilp_internal.h — between ilp.c (the model, and the order of the
 * search) and ilp_search.c (the searches run on it with GLPK).
 */
#ifndef LIBREMAT_PLANNER_ILP_INTERNAL_H
#define LIBREMAT_PLANNER_ILP_INTERNAL_H

#include "internal.h"

#include <glpk.h>

/* GLPK aborts the process on an internal assertion (it has, deep in its
 * primal simplex, on a badly scaled LP).  Its error hook lets us leave
 * instead: the solve then simply has no answer and the heuristic plan
 * stands.  After the hook fires GLPK's whole environment is gone, the
 * problem object included. */
#define PL_GLPK_FAILED (-1000)
int pl_glpk_simplex(glp_prob *lp, const glp_smcp *sp);

/* GLPK's tm_lim (ms) for `seconds` left, at least 50 ms.  GLPK 5.0's
 * glp_intopt with its presolver on gives the root LP and then the
 * search each the whole limit (and the presolver checks no clock):
 * those calls pass half of what is left. */
static inline int pl_tm_ms(double seconds)
{
	return seconds > 0.05 ? (int)(seconds * 1000) : 50;
}

/* Where the search sends each incumbent as it finds one (ilp_worker.c:
 * the pipe to the process waiting for it), so what it found survives
 * the search being stopped; put is NULL for none. */
struct pl_ilp_sink {
	void (*put)(void *arg, const uint8_t *chosen, int32_t n, double obj, double lp_bound);
	void *arg;
};

/* What branch and bound is told and reports back. */
struct ilp_ctx {
	const double *warm; /* 1-based, NULL when none */
	int warm_given;
	double bound;
	int have_bound;
	/* > 0: stop after this many nodes (work, not time: the same answer
	 * on a loaded machine) */
	int node_limit, nodes;
};

/* Branch and bound on lp from c->warm if any (then on our formulation,
 * whose relaxation is solved; presolve only without it), for at most
 * `seconds`.  glp_intopt's code, or PL_GLPK_FAILED; c->bound gets the
 * best open node's bound. */
int pl_ilp_branch(glp_prob *lp, struct ilp_ctx *c, int presolve, double seconds, int verbose);
/* A selection and its cost (-1: none yet). */
struct ilp_sel {
	uint8_t *x;
	double obj;
};
/* The solution branch and bound left in lp, into inc when cheaper than
 * what it holds.  Whether it is proven optimal. */
int pl_ilp_take(glp_prob *lp, int ret, int32_t N, struct ilp_sel *inc);
/* The dives from the solved LP relaxation in lp (wide: also the one
 * that frees what the relaxation leaves out, for small models): 0 with
 * the better selection in out, 1 none, PL_GLPK_FAILED. */
#define PL_DIVE_WIDE_NZ 1000000 /* non-zeros up to which a model is small */
int pl_ilp_dive(glp_prob *lp, int32_t N, double time_limit, int wide, struct ilp_sel *out);
/* Neighbourhoods of an incumbent over the memory positions rows[0 ..
 * nmem) of task t's model in lp, until `until` (pl_now() time), each
 * better one sent to t->sink with lp_bound. */
struct ilp_lns {
	glp_prob *lp;
	const struct pl_ilp_task *t;
	const int32_t *rows;
	int32_t nmem;
	double until, lp_bound;
};
/* -1 if GLPK failed (lp is gone), else 0; inc holds the best selection. */
int pl_ilp_lns(const struct ilp_lns *in, struct ilp_sel *inc);

/* ilp_shared.c: chunks regions share, exactly (see there).  fix: per
 * candidate j, fix[fix_off[j] .. fix_off[j+1]) ranges that take the
 * shares pl_model_bytes counted back out; ev: where each candidate keeps
 * a buffer in a freeable group out, by buffer (ev_off, nbufs + 1
 * entries); z: the columns, one per group and run of memory rows where
 * all of the group can be out and no candidate starts or stops keeping
 * one of them out. */
struct ilp_evict {
	int32_t buf, cand, lo, hi;
};
struct ilp_z {
	int32_t group, row, last; /* memory rows row .. last, where nothing changes */
};
struct ilp_shared {
	struct pl_range *fix;
	uint32_t *fix_off;
	size_t nfix;
	struct ilp_evict *ev;
	uint32_t *ev_off;
	size_t nev, cap_ev;
	struct ilp_z *z;
	size_t nz;
};
/* All empty when the graph has no shared chunks; -1 out of memory. */
int pl_ilp_shared_build(const struct pl_graph *g, const struct pl_cands *cs, const int32_t *rows,
                        int32_t nmem, struct ilp_shared *sh);
/* The z columns' values for selection sel, into z[0 .. nz). */
void pl_ilp_shared_warm(const struct pl_graph *g, const struct ilp_shared *sh, const int32_t *rows,
                        const uint8_t *sel, double *z);
void pl_ilp_shared_free(struct ilp_shared *sh);

#endif
