/*
 * sweep.c — the whole budget curve in one run (remat-plan --sweep): the
 * recompute cost at budgets from the baseline peak down to the smallest
 * the planner meets, so a user sees what each gigabyte costs before
 * choosing.  One planning context serves every budget (candidates, the
 * chain and its runs are built once), and the time limit covers them
 * all, shared out evenly between the budgets still to plan.  The file
 * it makes: formats/sweep_json.c.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Budget k of n, evenly spaced from the baseline down to minb. */
static int64_t point_budget(const struct pl_graph *g, int64_t minb, int32_t k, int32_t n)
{
	if (k == n - 1)
		return minb;
	return n == 1
	           ? g->baseline_peak
	           : g->baseline_peak - (int64_t)((double)(g->baseline_peak - minb) * k / (n - 1));
}

/* A sweep under way: its context and options, the curve, where an
 * error's message goes. */
struct sweep {
	const struct pl_graph *g;
	struct pl_ctx *c;
	const struct pl_options *oo;
	struct pl_sweep *out;
	char *err;
	size_t errlen;
};

/* Plans point k of n: PL_OK or PL_EBUDGET (the point filled), or the
 * error, its message in sw->err. */
static int plan_point(struct sweep *sw, struct pl_sweep_point *pt, int32_t k, int32_t n)
{
	struct pl_ctx *c = sw->c;
	double tp = pl_now();
	struct pl_plan *p = NULL;
	struct pl_result res;
	/* an even share of what is left for each budget still to plan */
	double left = pl_ctx_left(c), until = tp + left;
	pl_ctx_set_deadline(c, tp + (left > 0 ? left / (n - k) : 0));
	int r = pl_ctx_plan(c, pt->budget, left <= 0, &p, &res);
	pl_ctx_set_deadline(c, until);
	pt->solve_s = pl_now() - tp;
	pt->bound_ns = res.bound_ns;
	if (r == PL_OK) {
		pt->peak = res.peak;
		pt->recompute_ns = res.recompute_ns;
		snprintf(pt->planner, sizeof(pt->planner), "%s", res.planner);
	} else if (r == PL_EBUDGET) {
		pt->peak = -1; /* filled from a tighter budget's plan below */
		pt->recompute_ns = -1;
	} else {
		snprintf(sw->err, sw->errlen, "%s", res.error);
	}
	pl_plan_free(p);
	return r;
}

/* A plan for a budget meets every larger one: each point keeps the
 * cheapest plan at or below its budget; then its gap to its bound. */
static void sweep_finish(struct pl_sweep *out)
{
	for (int32_t k = out->npoints - 2; k >= 0; k--) {
		struct pl_sweep_point *pt = &out->points[k], *tight = &out->points[k + 1];
		if (tight->recompute_ns >= 0 &&
		    (pt->recompute_ns < 0 || tight->recompute_ns < pt->recompute_ns)) {
			pt->peak = tight->peak;
			pt->recompute_ns = tight->recompute_ns;
			memcpy(pt->planner, tight->planner, sizeof(pt->planner));
		}
	}
	for (int32_t k = 0; k < out->npoints; k++) {
		struct pl_sweep_point *pt = &out->points[k];
		pt->gap =
		    pt->bound_ns < 0 || pt->recompute_ns < 0 ? -1
		    : pt->recompute_ns <= pt->bound_ns
		        ? 0
		        : (double)(pt->recompute_ns - pt->bound_ns) / (double)pt->recompute_ns;
	}
}

/* The points from the baseline down to the smallest budget met. */
static int sweep_points(struct sweep *sw)
{
	const struct pl_graph *g = sw->g;
	const struct pl_options *oo = sw->oo;
	struct pl_sweep *out = sw->out;
	int32_t npoints = oo->sweep_points < 2 ? 2 : oo->sweep_points;
	int64_t cost_lb, peak_lb;
	if (pl_cost_bound(g, g->baseline_peak, oo->offload_gbps > 0, &cost_lb, &peak_lb))
		return pl_errf(sw->err, sw->errlen, PL_EINTERNAL, "out of memory");
	out->peak_bound = peak_lb;
	pl_progress(oo, "sweep: searching the smallest budget %s meets",
	            pl_planner_name(oo->planner));
	/* the smallest budget the time-independent planners meet: a plan
	 * exists there whatever time the ILP gets */
	int64_t minb =
	    oo->planner == PL_PLANNER_NONE
	        ? g->baseline_peak
	        : pl_ctx_min_budget(sw->c, peak_lb > 0 ? peak_lb - 1 : 0, g->baseline_peak);
	out->min_peak = minb;
	if (minb >= g->baseline_peak)
		npoints = 1;
	for (int32_t k = 0; k < npoints; k++) {
		struct pl_sweep_point *pt = &out->points[k];
		pt->budget = point_budget(g, minb, k, npoints);
		int r = plan_point(sw, pt, k, npoints);
		if (r != PL_OK && r != PL_EBUDGET)
			return r;
		out->npoints = k + 1;
		pl_progress(oo, "sweep: budget %lld bytes: %s", (long long)pt->budget,
		            r == PL_OK ? "planned" : "not met (a tighter budget's plan serves)");
	}
	sweep_finish(out);
	return PL_OK;
}

int pl_sweep_run(const struct pl_graph *g, const struct pl_options *o, struct pl_sweep *out,
                 char *err, size_t errlen)
{
	double t0 = pl_now();
	memset(out, 0, sizeof(*out));
	struct pl_options oo;
	if (o)
		oo = *o;
	else
		pl_options_default(&oo);
	oo.no_min_peak = 1;
	if (oo.started <= 0)
		oo.started = t0;
	struct pl_ctx *c = pl_ctx_new(g, &oo);
	out->points =
	    calloc(oo.sweep_points < 2 ? 2 : (size_t)oo.sweep_points, sizeof(*out->points));
	int rc;
	if (!c || !out->points) {
		rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	} else {
		out->baseline_peak = g->baseline_peak;
		out->iteration_ns = g->iteration_ns;
		struct sweep sw = {g, c, &oo, out, err, errlen};
		rc = sweep_points(&sw);
	}
	out->solve_s = pl_now() - t0;
	pl_ctx_free(c);
	if (rc)
		pl_sweep_free(out);
	return rc;
}
