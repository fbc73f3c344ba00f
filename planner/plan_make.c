/*
 * plan_make.c — from a graph and a budget to a checked plan: build the
 * candidates, run the chosen planner (the ILP starts from the better
 * heuristic and keeps it when it cannot beat it), turn the selection into
 * steps, and run the evaluator on the result.  Nothing leaves here that
 * the evaluator rejects or that exceeds the budget.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl_options_default(struct pl_options *o)
{
	memset(o, 0, sizeof(*o));
	o->planner = PL_PLANNER_ILP;
	o->time_limit_s = 30;
	o->segments = 1;
	o->max_segment = 8;
}

const char *pl_planner_name(enum pl_planner p)
{
	switch (p) {
	case PL_PLANNER_NONE:
		return "none";
	case PL_PLANNER_GREEDY:
		return "greedy";
	case PL_PLANNER_DTR:
		return "dtr";
	case PL_PLANNER_ILP:
		return "ilp";
	}
	return "?";
}

int pl_planner_parse(const char *s, enum pl_planner *out)
{
	static const enum pl_planner all[] = {PL_PLANNER_NONE, PL_PLANNER_GREEDY, PL_PLANNER_DTR,
	                                      PL_PLANNER_ILP};
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, pl_planner_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -1;
}

/* A selection made into a plan and evaluated; ok = valid and within budget. */
struct outcome {
	struct pl_plan *plan;
	struct pl_eval ev;
	int ok;
};

static void outcome_free(struct outcome *o)
{
	pl_plan_free(o->plan);
	pl_eval_free(&o->ev);
	memset(o, 0, sizeof(*o));
}

static int realize(const struct pl_graph *g, const struct pl_cands *cs, const uint8_t *chosen,
                   int64_t budget, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->plan = chosen ? pl_sel_plan(g, cs, chosen) : pl_plan_empty(g->nops);
	if (!o->plan || pl_evaluate(g, o->plan, &o->ev))
		return -1;
	o->ok = o->ev.valid && o->ev.peak <= budget;
	return 0;
}

/* Heuristic run: planner's selection, realized. */
static int heuristic(const struct pl_graph *g, const struct pl_cands *cs, enum pl_planner which,
                     int64_t budget, uint8_t *chosen, struct outcome *o)
{
	int r = which == PL_PLANNER_DTR ? pl_dtr(g, cs, budget, chosen)
	                                : pl_greedy(g, cs, budget, chosen);
	if (r < 0)
		return -1;
	if (realize(g, cs, chosen, budget, o))
		return -1;
	if (getenv("REMAT_PLAN_DEBUG"))
		fprintf(stderr, "%s: met %d valid %d peak %lld recompute %lld (%s)\n",
		        pl_planner_name(which), r == 0, o->ev.valid, (long long)o->ev.peak,
		        (long long)o->ev.recompute_ns, o->ev.error);
	return 0;
}

/* The smallest peak a heuristic reaches: bisection on the budget (the
 * heuristics are not monotone in it, so this is the smallest found).
 * Keeps the selection that reached it in sel. */
static int64_t bisect(const struct pl_graph *g, const struct pl_cands *cs, enum pl_planner which,
                      uint8_t *sel)
{
	uint8_t *chosen = malloc(cs->ncands ? cs->ncands : 1);
	int64_t lo = 0, hi = g->baseline_peak, best = g->baseline_peak;
	if (!chosen)
		return best;
	memset(sel, 0, cs->ncands ? cs->ncands : 1);
	/* to 0.5% of the baseline: a dozen runs even on large graphs */
	while (hi - lo > (g->granularity > 1 ? g->granularity / 2 : 1) &&
	       hi - lo > g->baseline_peak / 200) {
		int64_t mid = lo + (hi - lo) / 2;
		struct outcome o;
		int r = which == PL_PLANNER_DTR ? pl_dtr(g, cs, mid, chosen)
		                                : pl_greedy(g, cs, mid, chosen);
		int ok = 0;
		if (r == 0 && !realize(g, cs, chosen, mid, &o)) {
			ok = o.ok;
			if (ok && o.ev.peak < best) {
				best = o.ev.peak;
				memcpy(sel, chosen, cs->ncands);
			}
			outcome_free(&o);
		}
		if (ok)
			hi = mid;
		else
			lo = mid;
	}
	free(chosen);
	return best;
}

/* The smallest peak found by the heuristics and, for the ILP, by the
 * min-peak MILP started from the best of them. */
static int64_t min_peak(const struct pl_graph *g, const struct pl_cands *cs,
                        const struct pl_options *o)
{
	int32_t n = cs->ncands ? cs->ncands : 1;
	uint8_t *s1 = malloc(n), *s2 = malloc(n), *s3 = malloc(n);
	int64_t best = g->baseline_peak;
	if (s1 && s2 && s3) {
		if (o->planner == PL_PLANNER_GREEDY || o->planner == PL_PLANNER_DTR) {
			best = bisect(g, cs, o->planner, s1);
		} else {
			int64_t p1 = bisect(g, cs, PL_PLANNER_GREEDY, s1);
			int64_t p2 = bisect(g, cs, PL_PLANNER_DTR, s2);
			best = p1 < p2 ? p1 : p2;
			struct pl_ilp_result r;
			double lim =
			    o->time_limit_s > 0 && o->time_limit_s < 10 ? o->time_limit_s : 10;
			struct outcome oc;
			if (!pl_ilp_min_peak(g, cs, lim, p1 <= p2 ? s1 : s2, s3, &r, o->verbose) &&
			    r.status == 0 && !realize(g, cs, s3, INT64_MAX, &oc)) {
				if (oc.ev.valid && oc.ev.peak < best)
					best = oc.ev.peak;
				outcome_free(&oc);
			}
		}
	}
	free(s1);
	free(s2);
	free(s3);
	return best;
}

static int plan_once(const struct pl_graph *g, int64_t budget, const struct pl_options *o,
                     struct pl_cands *cs, struct outcome *best, struct pl_result *res, char *err,
                     size_t errlen)
{
	int32_t N = cs->ncands;
	uint8_t *c1 = calloc(N ? N : 1, 1), *c2 = calloc(N ? N : 1, 1), *c3 = calloc(N ? N : 1, 1);
	struct outcome h1 = {0}, h2 = {0};
	int rc = PL_OK;
	memset(best, 0, sizeof(*best));
	if (!c1 || !c2 || !c3) {
		rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
		goto out;
	}
	if (o->planner == PL_PLANNER_GREEDY || o->planner == PL_PLANNER_DTR) {
		if (heuristic(g, cs, o->planner, budget, c1, best)) {
			rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
			goto out;
		}
		snprintf(res->planner, sizeof(res->planner), "%s", pl_planner_name(o->planner));
		goto out;
	}
	/* ILP: both heuristics first; the better valid one is the warm start. */
	if (heuristic(g, cs, PL_PLANNER_GREEDY, budget, c1, &h1) ||
	    heuristic(g, cs, PL_PLANNER_DTR, budget, c2, &h2)) {
		rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
		goto out;
	}
	struct outcome *warm = NULL;
	const uint8_t *warm_sel = NULL;
	const char *warm_name = NULL;
	if (h1.ok) {
		warm = &h1;
		warm_sel = c1;
		warm_name = "greedy";
	}
	if (h2.ok && (!warm || h2.ev.recompute_ns < warm->ev.recompute_ns)) {
		warm = &h2;
		warm_sel = c2;
		warm_name = "dtr";
	}
	struct pl_ilp_result ir;
	double lim = o->time_limit_s > 0 ? o->time_limit_s : 30;
	if (warm)
		pl_progress(o,
		            "heuristics: best plan so far %s, peak %lld bytes, recompute %.3f ms "
		            "(%.1f%% of the iteration)",
		            warm_name, (long long)warm->ev.peak, warm->ev.recompute_ns / 1e6,
		            100.0 * (double)warm->ev.recompute_ns /
		                (double)(g->iteration_ns > 0 ? g->iteration_ns : 1));
	else
		pl_progress(o, "heuristics: no plan within the budget yet");
	pl_progress(o, "ilp: solving (time limit %g s)", lim);
	if (pl_ilp(g, cs, budget, lim, warm_sel, c3, &ir, o->verbose)) {
		rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory building the ILP");
		goto out;
	}
	res->gap = ir.gap;
	res->lp_bound = ir.lp_bound;
	struct outcome il = {0};
	if (ir.status == 0 && realize(g, cs, c3, budget, &il)) {
		rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
		goto out;
	}
	if (ir.status == 0 && il.ok && (!warm || il.ev.recompute_ns <= warm->ev.recompute_ns)) {
		*best = il;
		snprintf(res->planner, sizeof(res->planner), "ilp");
	} else {
		outcome_free(&il);
		if (warm) {
			*best = *warm;
			memset(warm, 0, sizeof(*warm));
			/* The ILP could not improve on its start: say which rule gave it. */
			snprintf(res->planner, sizeof(res->planner), "ilp:%s", warm_name);
		} else {
			snprintf(res->planner, sizeof(res->planner), "ilp");
			realize(g, cs, c3, budget, best);
		}
	}
out:
	outcome_free(&h1);
	outcome_free(&h2);
	free(c1);
	free(c2);
	free(c3);
	return rc;
}

int pl_plan_make(const struct pl_graph *g, int64_t budget, const struct pl_options *o,
                 struct pl_plan **out, struct pl_result *res, char *err, size_t errlen)
{
	struct pl_options def;
	if (!o) {
		pl_options_default(&def);
		o = &def;
	}
	*out = NULL;
	memset(res, 0, sizeof(*res));
	res->baseline_peak = g->baseline_peak;
	res->budget = budget;
	res->iteration_ns = g->iteration_ns;
	res->gap = res->lp_bound = -1;
	res->min_peak = -1;
	snprintf(res->planner, sizeof(res->planner), "%s", pl_planner_name(o->planner));
	double t0 = pl_now();
	struct outcome best = {0};
	struct pl_cands cs = {0};
	int rc = PL_OK;
	if (budget <= 0)
		return pl_errf(err, errlen, PL_EINPUT, "budget must be positive");
	if (o->planner == PL_PLANNER_NONE || budget >= g->baseline_peak) {
		if (realize(g, NULL, NULL, budget, &best))
			return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
		if (budget >= g->baseline_peak)
			res->gap = 0;
	} else {
		struct pl_options oo = *o;
		for (int attempt = 0; attempt < 2; attempt++) {
			oo.strict = o->strict || attempt == 1;
			if ((rc = pl_cands_build(g, &oo, &cs, err, errlen)))
				return rc;
			res->candidates = cs.ncands;
			pl_progress(o, "candidates: %d", cs.ncands);
			if ((rc = plan_once(g, budget, &oo, &cs, &best, res, err, errlen))) {
				pl_cands_free(&cs);
				return rc;
			}
			/* Rebuilds at one position that step on each other: retry
			 * with candidates that never read what another rebuilds. */
			if (best.plan && !best.ev.valid && attempt == 0) {
				outcome_free(&best);
				pl_cands_free(&cs);
				continue;
			}
			break;
		}
	}
	res->solve_s = pl_now() - t0;
	if (!best.plan) {
		pl_cands_free(&cs);
		return pl_errf(err, errlen, PL_EINTERNAL, "planning failed");
	}
	if (!best.ev.valid) {
		rc = pl_errf(err, errlen, PL_EINTERNAL,
		             "internal error: the plan fails evaluation: %s", best.ev.error);
	} else if (!best.ok) {
		res->peak = best.ev.peak;
		res->min_peak = g->baseline_peak;
		if (o->planner == PL_PLANNER_NONE) {
			rc =
			    pl_errf(err, errlen, PL_EBUDGET,
			            "budget %lld bytes cannot be met by planner none: the smallest "
			            "peak without evictions is the baseline, %lld bytes",
			            (long long)budget, (long long)g->baseline_peak);
		} else if (o->no_min_peak) {
			res->min_peak = -1;
			rc = pl_errf(err, errlen, PL_EBUDGET,
			             "budget %lld bytes cannot be met by planner %s (smallest peak "
			             "not searched)",
			             (long long)budget, pl_planner_name(o->planner));
		} else {
			struct pl_cands c2 = {0};
			struct pl_options oo = *o;
			oo.strict = 1;
			pl_progress(o, "budget not met: searching the smallest reachable peak");
			if (!pl_cands_build(g, &oo, &c2, NULL, 0)) {
				res->min_peak = min_peak(g, &c2, o);
				pl_cands_free(&c2);
			}
			if (res->min_peak > budget)
				rc = pl_errf(
				    err, errlen, PL_EBUDGET,
				    "budget %lld bytes cannot be met: the smallest peak found "
				    "is %lld bytes (baseline %lld)",
				    (long long)budget, (long long)res->min_peak,
				    (long long)g->baseline_peak);
			else
				rc = pl_errf(
				    err, errlen, PL_EBUDGET,
				    "budget %lld bytes cannot be met by planner %s; the "
				    "smallest peak found is %lld bytes (another planner may "
				    "reach the budget: try --planner ilp)",
				    (long long)budget, pl_planner_name(o->planner),
				    (long long)res->min_peak);
		}
	}
	if (rc) {
		outcome_free(&best);
		pl_cands_free(&cs);
		return rc;
	}
	struct pl_plan *p = best.plan;
	best.plan = NULL;
	p->graph_hash = g->hash;
	p->budget = budget;
	p->baseline_peak = g->baseline_peak;
	p->peak = best.ev.peak;
	p->recompute_ns = best.ev.recompute_ns;
	snprintf(p->planner, sizeof(p->planner), "%s", res->planner);
	res->peak = best.ev.peak;
	res->recompute_ns = best.ev.recompute_ns;
	res->evicted_buffers = best.ev.evicted_buffers;
	res->replays = best.ev.replays;
	outcome_free(&best);
	pl_cands_free(&cs);
	*out = p;
	return PL_OK;
}
