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
	o->plan_version = 2;
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

static void debug(const char *what, const struct outcome *o)
{
	if (getenv("REMAT_PLAN_DEBUG"))
		fprintf(stderr, "%s: ok %d valid %d peak %lld recompute %lld (%s)\n", what, o->ok,
		        o->ev.valid, (long long)o->ev.peak, (long long)o->ev.recompute_ns,
		        o->ev.error);
}

/* Heuristic run: planner's selection, realized. */
static int heuristic(const struct pl_graph *g, const struct pl_cands *cs, enum pl_planner which,
                     int64_t budget, uint8_t *chosen, struct outcome *o)
{
	int r = which == PL_PLANNER_DTR ? pl_dtr(g, cs, budget, chosen)
	                                : pl_greedy(g, cs, budget, chosen);
	if (r < 0 || realize(g, cs, chosen, budget, o))
		return -1;
	debug(pl_planner_name(which), o);
	return 0;
}

/* DTR run offline (sim.c): a plan without a selection. */
static int simulate(const struct pl_graph *g, int64_t budget, int version, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	int r = pl_sim(g, budget, version, &o->plan);
	if (r < 0)
		return -1;
	if (!o->plan)
		return 0; /* no plan: not ok */
	if (pl_evaluate(g, o->plan, &o->ev))
		return -1;
	o->ok = o->ev.valid && o->ev.peak <= budget;
	debug("dtr (walk)", o);
	return 0;
}

/* Keeps the cheaper of *best and *o that meets the budget (o is freed or
 * taken).  1 when o was taken. */
static int keep_better(struct outcome *best, struct outcome *o)
{
	int better = o->ok && (!best->ok || o->ev.recompute_ns < best->ev.recompute_ns);
	if (!best->plan || better) {
		outcome_free(best);
		*best = *o;
		memset(o, 0, sizeof(*o));
		return 1;
	}
	outcome_free(o);
	return 0;
}

/* The smallest budget a planner meets: bisection on the budget (they are
 * not monotone in it, so this is the smallest found).  which: greedy or
 * dtr on the candidates, or (cs NULL) the walk.  Keeps the selection that
 * reached it in sel. */
static int64_t bisect(const struct pl_graph *g, const struct pl_cands *cs, enum pl_planner which,
                      int version, uint8_t *sel)
{
	uint8_t *chosen = cs ? malloc(cs->ncands ? cs->ncands : 1) : NULL;
	int64_t lo = 0, hi = g->baseline_peak, best = g->baseline_peak;
	if (cs && !chosen)
		return best;
	if (cs)
		memset(sel, 0, cs->ncands ? cs->ncands : 1);
	/* to 0.1% of the baseline: a dozen runs even on large graphs */
	while (hi - lo > (g->granularity > 1 ? g->granularity / 2 : 1) &&
	       hi - lo > g->baseline_peak / 1000) {
		int64_t mid = lo + (hi - lo) / 2;
		struct outcome o = {0};
		int ok = 0, r = 0;
		if (!cs)
			r = simulate(g, mid, version, &o);
		else if ((r = which == PL_PLANNER_DTR ? pl_dtr(g, cs, mid, chosen)
		                                      : pl_greedy(g, cs, mid, chosen)) == 0)
			r = realize(g, cs, chosen, mid, &o);
		if (r == 0) {
			ok = o.ok;
			/* The budget that worked, not the peak reached: planning
			 * for it again makes the same plan (the planners are
			 * deterministic, not monotone in the budget). */
			if (ok && mid < best) {
				best = mid;
				if (cs)
					memcpy(sel, chosen, cs->ncands);
			}
		}
		outcome_free(&o);
		if (ok)
			hi = mid;
		else
			lo = mid;
	}
	free(chosen);
	return best;
}

/* The smallest peak found by the planner's heuristics and, for the ILP,
 * by the min-peak MILP started from the best of them. */
static int64_t min_peak(const struct pl_graph *g, const struct pl_cands *cs,
                        const struct pl_options *o)
{
	int32_t n = cs->ncands ? cs->ncands : 1;
	uint8_t *s1 = malloc(n), *s2 = malloc(n), *s3 = malloc(n);
	int64_t best = g->baseline_peak;
	if (s1 && s2 && s3) {
		if (o->planner == PL_PLANNER_GREEDY) {
			best = bisect(g, cs, o->planner, o->plan_version, s1);
		} else {
			int64_t p1 = o->planner == PL_PLANNER_ILP
			                 ? bisect(g, cs, PL_PLANNER_GREEDY, o->plan_version, s1)
			                 : g->baseline_peak;
			int64_t p2 = bisect(g, cs, PL_PLANNER_DTR, o->plan_version, s2);
			int64_t p3 = bisect(g, NULL, PL_PLANNER_DTR, o->plan_version, NULL);
			best = p1 < p2 ? p1 : p2;
			best = p3 < best ? p3 : best;
			struct pl_ilp_result r;
			double lim =
			    o->time_limit_s > 0 && o->time_limit_s < 10 ? o->time_limit_s : 10;
			struct outcome oc;
			if (o->planner == PL_PLANNER_ILP &&
			    !pl_ilp_min_peak(g, cs, lim, p1 <= p2 ? s1 : s2, s3, &r, o->verbose) &&
			    r.status == 0 && !realize(g, cs, s3, INT64_MAX, &oc)) {
				/* the model's peak: a budget the MILP meets again */
				if (oc.ev.valid && r.peak < best)
					best = r.peak;
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
	struct outcome h1 = {0}, h2 = {0}, h3 = {0};
	int rc = PL_OK;
	memset(best, 0, sizeof(*best));
	snprintf(res->planner, sizeof(res->planner), "%s", pl_planner_name(o->planner));
	if (!c1 || !c2 || !c3)
		goto oom;
	if (o->planner == PL_PLANNER_GREEDY) {
		if (heuristic(g, cs, o->planner, budget, c1, best))
			goto oom;
		goto out;
	}
	/* dtr: the rule on the candidates and the walk, the better of them */
	if (heuristic(g, cs, PL_PLANNER_DTR, budget, c2, &h2) ||
	    simulate(g, budget, o->plan_version, &h3))
		goto oom;
	if (o->planner == PL_PLANNER_DTR) {
		keep_better(best, &h2);
		keep_better(best, &h3);
		goto out;
	}
	/* ILP: the heuristics first; the better valid selection is the warm
	 * start.  When none meets the budget, the min-peak MILP may find one
	 * that does (spending up to a third of the time limit). */
	if (heuristic(g, cs, PL_PLANNER_GREEDY, budget, c1, &h1))
		goto oom;
	double lim = o->time_limit_s > 0 ? o->time_limit_s : 30, t0 = pl_now();
	const uint8_t *warm_sel = NULL;
	if (h1.ok)
		warm_sel = c1;
	if (h2.ok && (!warm_sel || h2.ev.recompute_ns < h1.ev.recompute_ns))
		warm_sel = c2;
	const struct outcome *warm = warm_sel == c1 ? &h1 : warm_sel == c2 ? &h2 : NULL;
	if (warm)
		pl_progress(o,
		            "heuristics: best plan so far %s, peak %lld bytes, recompute %.3f ms "
		            "(%.1f%% of the iteration)",
		            warm == &h1 ? "greedy" : "dtr", (long long)warm->ev.peak,
		            warm->ev.recompute_ns / 1e6,
		            100.0 * (double)warm->ev.recompute_ns /
		                (double)(g->iteration_ns > 0 ? g->iteration_ns : 1));
	else
		pl_progress(o, "heuristics: no plan within the budget yet");
	struct pl_ilp_result ir;
	if (!warm_sel) {
		const uint8_t *from = h1.ev.valid && (!h2.ev.valid || h1.ev.peak <= h2.ev.peak) ? c1
		                      : h2.ev.valid                                             ? c2
		                                    : NULL;
		if (pl_ilp_min_peak(g, cs, lim / 3, from, c3, &ir, o->verbose))
			goto oom;
		if (ir.status == 0 && ir.peak <= budget) {
			memcpy(c1, c3, N ? N : 1);
			warm_sel = c1;
		}
	}
	double left = lim - (pl_now() - t0);
	pl_progress(o, "ilp: solving (time limit %g s)", left > 1 ? left : 1);
	if (pl_ilp(g, cs, budget, left > 1 ? left : 1, warm_sel, c3, &ir, o->verbose))
		goto oom;
	res->gap = ir.gap;
	res->lp_bound = ir.lp_bound;
	struct outcome il = {0};
	if (ir.status == 0 && realize(g, cs, c3, budget, &il))
		goto oom;
	debug("ilp", &il);
	/* The cheapest plan within the budget; the name says which rule gave
	 * it when the ILP could not improve on it. */
	const char *name = "ilp";
	if (ir.status == 0)
		keep_better(best, &il);
	if (keep_better(best, &h1) && best->ok)
		name = "ilp:greedy";
	if (keep_better(best, &h2) && best->ok)
		name = "ilp:dtr";
	if (keep_better(best, &h3) && best->ok)
		name = "ilp:dtr";
	snprintf(res->planner, sizeof(res->planner), "%s", name);
	goto out;
oom:
	rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
out:
	outcome_free(&h1);
	outcome_free(&h2);
	outcome_free(&h3);
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
