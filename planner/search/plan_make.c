/*
 * plan_make.c — from a graph and a budget to a checked plan: build the
 * candidates, run the chosen planner (the ILP starts from the best of the
 * others: the heuristics, the walk, the program over the chain of stages,
 * and keeps it when it cannot beat it), turn the selection into steps,
 * and run the evaluator on the result.  Nothing leaves here that the
 * evaluator rejects or that exceeds the budget.
 *
 * Anytime: the whole of it, the search for the smallest reachable budget
 * included, ends by the time limit, with the best plan found and its gap
 * to the proven bound (bound.c); it stops earlier once the gap is within
 * the tolerance, which is how a loose budget, whose bound is tight, ends
 * quickly.
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
	o->gap_tol = 0.01;
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
	case PL_PLANNER_CHAIN:
		return "chain";
	}
	return "?";
}

int pl_planner_parse(const char *s, enum pl_planner *out)
{
	static const enum pl_planner all[] = {PL_PLANNER_NONE, PL_PLANNER_GREEDY, PL_PLANNER_DTR,
	                                      PL_PLANNER_ILP, PL_PLANNER_CHAIN};
	for (int i = 0; i < 5; i++)
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
	const char *by; /* the planner that made it */
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

/* At -v: every plan a planner produced, kept or not, and why not. */
static void debug(int verbose, const struct outcome *o)
{
	if (verbose)
		fprintf(stderr, "%s: ok %d valid %d peak %lld recompute %lld (%s)\n", o->by, o->ok,
		        o->ev.valid, (long long)o->ev.peak, (long long)o->ev.recompute_ns,
		        o->ev.error);
}

/* Keeps the cheaper of *best and *o that meets the budget (o is freed or
 * taken).  1 when o was taken. */
static int keep_better(struct outcome *best, struct outcome *o)
{
	/* what the plan costs: replays and copies that stick out of compute */
	int better = o->ok && (!best->ok || o->ev.recompute_ns + o->ev.stall_ns <
	                                        best->ev.recompute_ns + best->ev.stall_ns);
	/* neither meets the budget: the lower valid peak */
	better = better || (!o->ok && !best->ok && o->plan && o->ev.valid &&
	                    (!best->ev.valid || o->ev.peak < best->ev.peak));
	if (!best->plan || better) {
		outcome_free(best);
		*best = *o;
		memset(o, 0, sizeof(*o));
		return 1;
	}
	outcome_free(o);
	return 0;
}

/* What planning keeps between budgets (a sweep plans many): the
 * candidates, with the chain's runs appended as they are built, and the
 * chain itself; one set per strictness, made on first use.  And what
 * pl_ctx_plan plans for now: the budget (truth), its bounds, where the
 * result and its message go. */
struct pl_ctx {
	const struct pl_graph *g; /* what the planners plan on: park.view when parking */
	const struct pl_graph *real;
	struct pl_park park; /* with offload: what plans keep on the host (model/park.c) */
	struct pl_options o;
	struct level {
		int built;
		struct pl_cands cs;
		int32_t nbase;        /* candidates before the chain appended its runs */
		struct pl_struct *st; /* NULL: no chain in this graph */
	} lv[2];
	double deadline;
	int64_t bound;    /* the budget's cost bound (res->bound_ns) */
	int64_t stop;     /* the budget's bound for done_by_gap */
	int64_t truth;    /* the budget plans are judged by (the planners' models may differ) */
	int no_ilp;       /* the time-independent planners only */
	int sel_ok;       /* a selection planner met it */
	int64_t sel_over; /* else the least a valid selection went over it by (-1: none) */
	struct pl_result *res;
	int32_t *sel;
	size_t cap_sel;
};

static double left_s(const struct pl_ctx *c)
{
	return c->deadline - pl_now();
}

static int oom(struct pl_ctx *c)
{
	return pl_errf(c->res->error, sizeof(c->res->error), PL_EINTERNAL, "out of memory");
}

static int level_get(struct pl_ctx *c, int strict, struct level **out)
{
	struct level *lv = &c->lv[strict];
	*out = lv;
	if (lv->built)
		return PL_OK;
	struct pl_options oo = c->o;
	oo.strict = strict;
	int rc = pl_cands_build(c->g, &oo, &lv->cs, c->res->error, sizeof(c->res->error));
	if (rc)
		return rc;
	lv->built = 1;
	lv->nbase = lv->cs.ncands;
	pl_progress(&c->o, "candidates: %d", lv->cs.ncands);
	if (c->o.planner == PL_PLANNER_ILP || c->o.planner == PL_PLANNER_CHAIN) {
		int r = pl_struct_build(c->g, &lv->cs, strict, &lv->st);
		if (r < 0)
			return oom(c);
		int32_t distinct, stages = lv->st ? pl_struct_stages(lv->st, &distinct) : 0;
		if (lv->st)
			pl_progress(&c->o, "structure: a chain of %d stages, %d distinct", stages,
			            distinct);
		else
			pl_progress(&c->o, "structure: no chain of stages, flat model only");
	}
	return PL_OK;
}

/* DTR run offline (planners/sim.c) for budget `walk`, judged by the budget: a plan
 * without a selection. */
static int simulate_at(const struct pl_ctx *c, int64_t walk, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	int r = pl_sim(c->g, walk, c->o.plan_version, c->deadline, &o->plan);
	if (r < 0)
		return -1;
	if (!o->plan)
		return 0; /* no plan: not ok */
	if (pl_evaluate(c->g, o->plan, &o->ev))
		return -1;
	o->ok = o->ev.valid && o->ev.peak <= c->truth;
	return 0;
}

/* The walk; where chunks are shared (its only way below what they hold,
 * and its greedy evictions can end in a rebuild storm close to the
 * smallest peak) also a few chunks under the budget when it fails. */
static int simulate(const struct pl_ctx *c, struct outcome *o)
{
	const struct pl_graph *g = c->g;
	int64_t budget = c->truth;
	if (simulate_at(c, budget, o))
		return -1;
	int64_t step = g->granularity > 1 ? g->granularity : 1;
	for (int k = 1; k <= 4 && !o->ok && g->nshared && budget - k * step > 0; k++) {
		struct outcome t;
		if (simulate_at(c, budget - k * step, &t))
			return -1;
		keep_better(o, &t);
	}
	return 0;
}

/* The chain's program, planned again for a tighter budget while its plan
 * goes over (what it assumed of the memory is an estimate); a bounded
 * number of rounds, so the answer for a budget is always the same. */
static int chain_plan(struct pl_ctx *c, struct level *lv, int64_t budget, struct outcome *best)
{
	const struct pl_graph *g = c->g;
	int64_t slack = 0;
	memset(best, 0, sizeof(*best));
	if (!lv->st)
		return 0;
	for (int round = 0; round < 12; round++) {
		int32_t n = 0;
		int r = pl_struct_plan(lv->st, budget - slack, &c->sel, &n, &c->cap_sel);
		if (r < 0)
			return -1;
		if (r == 1)
			break;
		if (r == 2)
			continue;
		struct pl_selection s;
		if (pl_sel_init(&s, &lv->cs))
			return -1;
		for (int32_t i = 0; i < n; i++)
			if (pl_sel_compatible(&s, c->sel[i]))
				pl_sel_take(&s, &lv->cs, c->sel[i]);
		struct outcome o;
		int rr = realize(g, &lv->cs, s.chosen, c->truth, &o);
		pl_sel_free(&s);
		if (rr)
			return -1;
		o.by = "chain";
		debug(c->o.verbose, &o);
		int ok = o.ok, valid = o.ev.valid;
		int64_t over = o.ev.peak - c->truth;
		keep_better(best, &o);
		if (ok || !valid)
			break;
		slack += over + g->baseline_peak / 400 + 1;
	}
	return 0;
}

static double gap_of(int64_t cost, int64_t bound)
{
	if (bound < 0)
		return -1;
	if (cost <= bound)
		return 0;
	return (double)(cost - bound) / (double)cost;
}

static void progress_best(const struct pl_ctx *c, const char *stage, const struct outcome *b)
{
	double iter = (double)(c->g->iteration_ns > 0 ? c->g->iteration_ns : 1);
	int64_t bound = c->bound;
	if (!b->plan || !b->ok) {
		pl_progress(&c->o, "%s: no plan within the budget yet%s", stage,
		            b->plan && b->ev.valid ? " (closest peak so far below)" : "");
		return;
	}
	char gs[48] = "unknown";
	if (bound >= 0)
		snprintf(gs, sizeof(gs), "%.1f%%", 100 * gap_of(b->ev.recompute_ns, bound));
	pl_progress(&c->o,
	            "%s: best plan %s, peak %lld bytes, recompute %.3f ms (%.2f%% of the "
	            "iteration); bound %.3f ms, gap %s",
	            stage, b->by, (long long)b->ev.peak, b->ev.recompute_ns / 1e6,
	            100.0 * (double)b->ev.recompute_ns / iter, bound >= 0 ? bound / 1e6 : 0.0, gs);
}

/* Planning ends early with a plan within gap_tol of the proven bound.
 * With offload that bound is 0 (a copy to the host frees memory at no
 * recompute cost): it ends instead within gap_tol of what a plan that
 * only recomputes must pay (c->stop), no proof that offload cannot do
 * better, but no longer search than without offload. */
static int done_by_gap(const struct pl_ctx *c, const struct outcome *b)
{
	return b->ok && c->stop >= 0 && gap_of(b->ev.recompute_ns, c->stop) <= c->o.gap_tol;
}

/* keep_better for a selection planner's outcome */
static void keep_sel(struct pl_ctx *c, struct outcome *best, struct outcome *o)
{
	c->sel_ok |= o->ok;
	int64_t over = o->ev.peak - c->truth;
	if (o->plan && o->ev.valid && !o->ok && (c->sel_over < 0 || over < c->sel_over))
		c->sel_over = over;
	keep_better(best, o);
}

/* One planning at one strictness: the planners plan for `model` (the
 * budget, or more where their model counts chunks as mapped that the true
 * curve frees: shifted_passes); every plan is judged by the true budget,
 * c->truth.  Each step below returns -1 out of memory, 1 when planning
 * ends there, 0 to go on. */
struct pass {
	struct pl_ctx *c;
	struct level *lv;
	int64_t model;
	int shifted; /* model is not the budget */
	struct outcome *best;
	struct outcome h;      /* the plan being judged */
	int32_t n;             /* candidates, chain runs included */
	uint8_t *c1, *c2, *c3; /* greedy's and dtr's selections, the ILP's */
	int met1, met2;        /* greedy's and dtr's met the model */
};

/* A heuristic's selection for the model's budget, realized and judged
 * against the true one; *met: it meets the model's. */
static int heuristic(struct pass *ps, enum pl_planner which, const struct pl_cands *cs,
                     uint8_t *chosen, int *met)
{
	const struct pl_graph *g = ps->c->g;
	int r = which == PL_PLANNER_DTR ? pl_dtr(g, cs, ps->model, chosen)
	                                : pl_greedy(g, cs, ps->model, chosen);
	if (r < 0 || realize(g, cs, chosen, ps->c->truth, &ps->h))
		return -1;
	*met = r == 0;
	return 0;
}

/* The chain first: it may add candidates the others then see (it and
 * the walk replay: not when only offload is asked for). */
static int pass_chain(struct pass *ps)
{
	struct pl_ctx *c = ps->c;
	const struct pl_options *o = &c->o;
	int replays_ok = !(o->offload_only && o->offload_gbps > 0);
	if (!replays_ok || (o->planner != PL_PLANNER_ILP && o->planner != PL_PLANNER_CHAIN))
		return 0;
	if (chain_plan(c, ps->lv, ps->model, &ps->h))
		return -1;
	keep_sel(c, ps->best, &ps->h);
	progress_best(c, "chain", ps->best);
	return o->planner == PL_PLANNER_CHAIN && ps->lv->st;
}

/* greedy (also the flat fallback of the chain planner), dtr: the rule on
 * the candidates and the walk. */
static int pass_heuristics(struct pass *ps)
{
	struct pl_ctx *c = ps->c;
	const struct pl_options *o = &c->o;
	/* The heuristics see the candidates as built, not the runs other
	 * budgets appended: their plan for a budget is always the same. */
	struct pl_cands base = ps->lv->cs;
	base.ncands = ps->lv->nbase;
	if (o->planner != PL_PLANNER_DTR) {
		if (heuristic(ps, PL_PLANNER_GREEDY, &base, ps->c1, &ps->met1))
			return -1;
		ps->h.by = "greedy";
		debug(o->verbose, &ps->h);
		keep_sel(c, ps->best, &ps->h);
		if (o->planner != PL_PLANNER_ILP)
			return 1;
	}
	if (heuristic(ps, PL_PLANNER_DTR, &base, ps->c2, &ps->met2))
		return -1;
	ps->h.by = "dtr";
	debug(o->verbose, &ps->h);
	keep_sel(c, ps->best, &ps->h);
	int replays_ok = !(o->offload_only && o->offload_gbps > 0);
	if (replays_ok && !ps->shifted) { /* (the walk counts shared chunks itself) */
		if (simulate(c, &ps->h))
			return -1;
		ps->h.by = "dtr (walk)";
		debug(o->verbose, &ps->h);
		ps->h.by = "dtr";
		keep_better(ps->best, &ps->h);
	}
	if (o->planner == PL_PLANNER_DTR)
		return 1;
	progress_best(c, "heuristics", ps->best);
	return c->no_ilp || done_by_gap(c, ps->best) || c->bound < 0;
}

/* The chain's selection, again (it is cheap), as the ILP's warm start
 * when it beats wcost: into c1, *warm set. */
static void chain_warm(struct pass *ps, int64_t wcost, const uint8_t **warm)
{
	struct pl_ctx *c = ps->c;
	const struct pl_cands *cs = &ps->lv->cs;
	int32_t N = ps->n, n = 0;
	struct outcome t3;
	struct pl_selection s;
	memset(ps->c3, 0, N);
	if (pl_struct_plan(ps->lv->st, c->truth, &c->sel, &n, &c->cap_sel) != 0 ||
	    pl_sel_init(&s, cs))
		return;
	for (int32_t i = 0; i < n; i++)
		if (c->sel[i] < N && pl_sel_compatible(&s, c->sel[i]))
			pl_sel_take(&s, cs, c->sel[i]);
	memcpy(ps->c3, s.chosen, N);
	pl_sel_free(&s);
	if (!realize(c->g, cs, ps->c3, c->truth, &t3) && t3.ok && t3.ev.recompute_ns < wcost) {
		memcpy(ps->c1, ps->c3, N);
		*warm = ps->c1;
	}
	outcome_free(&t3);
}

/* The ILP's warm start: the cheapest selection so far that meets the
 * budget (and the ILP's model); the walk's plan has none.  *t_realize:
 * what judging one selection takes. */
static int warm_start(struct pass *ps, const uint8_t **warm, double *t_realize)
{
	struct pl_ctx *c = ps->c;
	const struct pl_cands *cs = &ps->lv->cs;
	struct outcome t1 = {0}, t2 = {0}, *best = ps->best;
	*warm = NULL;
	*t_realize = pl_now();
	if (realize(c->g, cs, ps->c1, c->truth, &t1) || realize(c->g, cs, ps->c2, c->truth, &t2)) {
		outcome_free(&t1);
		outcome_free(&t2);
		return -1;
	}
	/* What judging the ILP's selection will take after it (two of them
	 * took this) and 0.1 s to stop its worker and write the plan are
	 * kept out of its time: the deadline is the command's. */
	*t_realize = pl_now() - *t_realize;
	int64_t wcost = INT64_MAX;
	/* a warm start must meet the ILP's model too */
	if (t1.ok && (!ps->shifted || ps->met1)) {
		*warm = ps->c1;
		wcost = t1.ev.recompute_ns;
	}
	if (t2.ok && (!ps->shifted || ps->met2) && t2.ev.recompute_ns < wcost) {
		*warm = ps->c2;
		wcost = t2.ev.recompute_ns;
	}
	if (ps->lv->st && best->ok && !ps->shifted && !strcmp(best->by, "chain") &&
	    best->ev.recompute_ns < wcost)
		chain_warm(ps, wcost, warm);
	outcome_free(&t1);
	outcome_free(&t2);
	return 0;
}

/* The ILP from the warm start, with what time is left. */
static int pass_ilp(struct pass *ps)
{
	struct pl_ctx *c = ps->c;
	const struct pl_options *o = &c->o;
	const struct pl_graph *g = c->g;
	struct pl_cands *cs = &ps->lv->cs;
	const uint8_t *warm;
	double t_realize;
	struct pl_ilp_result ir;
	if (warm_start(ps, &warm, &t_realize))
		return -1;
	/* When nothing meets the budget, the min-peak MILP may find a
	 * selection that does (spending up to a third of the time left). */
	if (!warm && left_s(c) > 1) {
		struct pl_ilp_task t = {
		    .g = g, .cs = cs, .time_limit = left_s(c) / 3, .minpeak = 1};
		t.verbose = o->verbose;
		if (pl_ilp_timed(&t, ps->c3, &ir))
			return -1;
		if (ir.status == 0 && ir.peak <= ps->model) {
			memcpy(ps->c1, ps->c3, ps->n ? ps->n : 1);
			warm = ps->c1;
		}
	}
	double lim = left_s(c) - t_realize - 0.1;
	if (lim < 0.5)
		return 1;
	pl_progress(o, "ilp: solving (%.1f s left)", lim);
	struct pl_ilp_task t = {
	    .g = g, .cs = cs, .budget = ps->model, .time_limit = lim, .warm = warm};
	t.verbose = o->verbose;
	if (pl_ilp_timed(&t, ps->c3, &ir))
		return -1;
	if (ir.status == 0) {
		if (realize(g, cs, ps->c3, c->truth, &ps->h))
			return -1;
		ps->h.by = "ilp";
		debug(o->verbose, &ps->h);
		keep_sel(c, ps->best, &ps->h);
	}
	if (o->verbose && ir.status == 0)
		fprintf(stderr, "ilp: %s in its candidate model (model gap %.2f%%)\n",
		        ir.optimal ? "optimal" : "not proven optimal",
		        ir.gap >= 0 ? 100 * ir.gap : -1);
	progress_best(c, "ilp", ps->best);
	return 1;
}

static int plan_level(struct pl_ctx *c, struct level *lv, int64_t model, struct outcome *best)
{
	struct pass ps = {.c = c, .lv = lv, .model = model, .best = best};
	ps.shifted = model != c->truth;
	memset(best, 0, sizeof(*best));
	c->res->candidates = lv->cs.ncands;
	int r = pass_chain(&ps);
	if (!r) {
		int32_t N = ps.n = lv->cs.ncands;
		c->res->candidates = N;
		ps.c1 = calloc(N ? N : 1, 1);
		ps.c2 = calloc(N ? N : 1, 1);
		ps.c3 = calloc(N ? N : 1, 1);
		r = !ps.c1 || !ps.c2 || !ps.c3 ? -1 : pass_heuristics(&ps);
	}
	if (!r)
		r = pass_ilp(&ps);
	outcome_free(&ps.h);
	free(ps.c1);
	free(ps.c2);
	free(ps.c3);
	return r < 0 ? oom(c) : PL_OK;
}

struct pl_ctx *pl_ctx_new(const struct pl_graph *g, const struct pl_options *o)
{
	struct pl_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->g = c->real = g;
	if (o)
		c->o = *o;
	else
		pl_options_default(&c->o);
	if (c->o.offload_gbps > 0 && c->o.planner != PL_PLANNER_NONE) {
		if (pl_park_view(g, &c->park)) {
			free(c);
			return NULL;
		}
		if (c->park.n)
			c->g = &c->park.view;
	}
	double start = c->o.started > 0 ? c->o.started : pl_now();
	c->deadline = start + (c->o.time_limit_s > 0 ? c->o.time_limit_s : 30);
	return c;
}

void pl_ctx_free(struct pl_ctx *c)
{
	if (!c)
		return;
	for (int i = 0; i < 2; i++) {
		pl_struct_free(c->lv[i].st);
		pl_cands_free(&c->lv[i].cs);
	}
	free(c->sel);
	pl_park_free(&c->park);
	free(c);
}

double pl_ctx_left(const struct pl_ctx *c)
{
	return left_s(c);
}

void pl_ctx_set_deadline(struct pl_ctx *c, double t)
{
	c->deadline = t;
}

/* Chunks regions share (model/shared.c) are freed once all their buffers are
 * out, which a selection's sum of savings cannot say: the candidates'
 * model counts each buffer's share of them (pl_model_bytes), which is
 * too much where a selection evicts one buffer of a group and not the
 * other (the ILP's own model is exact: planners/ilp_shared.c, but its candidates
 * may not reach the budget).  What a planner makes is judged by the
 * evaluator's true curve;
 * when no selection met the budget, the selection planners plan again
 * for less: the budget minus what the closest one went over by, more
 * each round it still does (as chain_plan does for its own estimate),
 * then less again while the rounds left can find a smaller slack that
 * meets it (the smaller, the cheaper); each round with an equal share of
 * the time left. */
static int shifted_passes(struct pl_ctx *c, int strict, struct outcome *best)
{
	const struct pl_graph *g = c->g;
	int64_t step = g->granularity > 1 ? g->granularity : 1, budget = c->truth;
	if (c->sel_ok || !g->nshared || c->sel_over < 0 ||
	    (c->o.offload_only && c->o.offload_gbps > 0))
		return PL_OK;
	double deadline = c->deadline;
	struct level *lv;
	int rc = level_get(c, strict, &lv);
	int64_t lo = 0, hi = -1; /* slacks that went over, and that met it (-1: none yet) */
	for (int pass = 0; !rc && pass < 5 && left_s(c) > 0.1; pass++) {
		int64_t slack;
		if (hi < 0) {
			if (c->sel_over < 0)
				break;
			slack = lo + c->sel_over + step;
		} else {
			slack = (lo + hi) / 2 / step * step;
			if (slack <= lo || slack >= hi)
				break;
		}
		if (budget - slack <= 0)
			break;
		c->sel_ok = 0;
		c->sel_over = -1;
		c->deadline = pl_now() + (deadline - pl_now()) / (5 - pass);
		struct outcome o;
		rc = plan_level(c, lv, budget - slack, &o);
		c->deadline = deadline;
		if (rc)
			break;
		if (c->o.verbose)
			fprintf(stderr, "shared chunks: planned for %lld bytes less: %s\n",
			        (long long)slack, c->sel_ok ? "within the budget" : "over it");
		if (c->sel_ok)
			hi = slack;
		else
			lo = slack;
		keep_better(best, &o);
	}
	return rc;
}

/* Plans for c->truth, nothing more: on a miss, best holds the closest
 * plan (none: best->plan NULL).  PL_OK either way, or PL_EINTERNAL. */
static int ctx_plan(struct pl_ctx *c, struct outcome *best)
{
	const struct pl_graph *g = c->g;
	int64_t budget = c->truth;
	memset(best, 0, sizeof(*best));
	int64_t bound = -1, peak_lb = 0;
	if (pl_cost_bound(g, budget, c->o.offload_gbps > 0, &bound, &peak_lb))
		return oom(c);
	c->res->bound_ns = c->bound = bound;
	c->res->peak_bound = peak_lb;
	c->stop = bound;
	int64_t recompute_peak_lb;
	if (c->o.offload_gbps > 0 && bound >= 0 &&
	    pl_cost_bound(g, budget, 0, &c->stop, &recompute_peak_lb))
		return oom(c);
	if (c->o.planner == PL_PLANNER_NONE || budget >= c->real->baseline_peak) {
		/* nothing to do: nothing parked either */
		if (realize(c->real, NULL, NULL, budget, best))
			return oom(c);
		best->by = pl_planner_name(c->o.planner);
		return PL_OK;
	}
	if (bound < 0) { /* below what any plan reaches: nothing to try */
		return PL_OK;
	}
	c->sel_ok = 0;
	c->sel_over = -1;
	int strict = c->o.strict ? 1 : 0;
	for (; strict < 2; strict++) {
		struct level *lv;
		int rc = level_get(c, strict, &lv);
		if (!rc)
			rc = plan_level(c, lv, budget, best);
		if (rc)
			return rc;
		/* Rebuilds at one position that step on each other: again with
		 * candidates that never read what another rebuilds. */
		if (best->plan && !best->ev.valid && strict == 0) {
			outcome_free(best);
			continue;
		}
		break;
	}
	return strict < 2 ? shifted_passes(c, strict, best) : PL_OK;
}

/* A plan made on the view without the parked buffers (model/park.c) lists them
 * and is judged again on the graph itself: the same curve, their bytes
 * on the host.  0, or -1 (out of memory, or the evaluator disagrees:
 * err says so). */
static int park_attach(struct pl_ctx *c, struct outcome *best)
{
	char *err = c->res->error;
	size_t errlen = sizeof(c->res->error);
	struct pl_plan *p = best->plan;
	if (!c->park.n || c->truth >= c->real->baseline_peak)
		return 0;
	if (!(p->parked = malloc(sizeof(int32_t) * (size_t)c->park.n)))
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	memcpy(p->parked, c->park.bufs, sizeof(int32_t) * (size_t)c->park.n);
	p->nparked = c->park.n;
	p->offload_gbps = c->o.offload_gbps;
	struct pl_eval ev;
	if (pl_evaluate(c->real, p, &ev))
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	if (!ev.valid || ev.peak != best->ev.peak) {
		int rc = pl_errf(err, errlen, PL_EINTERNAL,
		                 "internal error: the plan with parked buffers %s (%s)",
		                 ev.valid ? "peaks elsewhere" : "fails evaluation", ev.error);
		pl_eval_free(&ev);
		return rc;
	}
	pl_eval_free(&best->ev);
	best->ev = ev;
	return 0;
}

/* Fills the plan's and the result's figures from a plan within the budget. */
static struct pl_plan *finish_plan(const struct pl_graph *g, int64_t budget, struct outcome *best,
                                   struct pl_result *res)
{
	struct pl_plan *p = best->plan;
	best->plan = NULL;
	p->graph_hash = g->hash;
	p->budget = budget;
	p->baseline_peak = g->baseline_peak;
	p->peak = best->ev.peak;
	p->recompute_ns = best->ev.recompute_ns;
	p->stall_ns = best->ev.stall_ns;
	p->host_bytes = best->ev.host_peak;
	const char *by = best->by ? best->by : res->planner;
	/* "ilp:greedy": the ILP ran and kept another planner's plan */
	char name[32];
	if (!strcmp(res->planner, "ilp") && strcmp(by, "ilp"))
		snprintf(name, sizeof(name), "ilp:%.8s", by);
	else
		snprintf(name, sizeof(name), "%.12s", by);
	memcpy(p->planner, name, sizeof(p->planner) - 1);
	p->planner[sizeof(p->planner) - 1] = '\0';
	snprintf(res->planner, sizeof(res->planner), "%s", p->planner);
	res->peak = best->ev.peak;
	res->recompute_ns = best->ev.recompute_ns;
	res->evicted_buffers = best->ev.evicted_buffers;
	res->replays = best->ev.replays;
	res->stall_ns = best->ev.stall_ns;
	res->offloads = best->ev.offloads;
	res->gap = gap_of(res->recompute_ns, res->bound_ns);
	return p;
}

int pl_ctx_plan(struct pl_ctx *c, int64_t budget, int no_ilp, struct pl_plan **out,
                struct pl_result *res)
{
	struct outcome best;
	*out = NULL;
	memset(res, 0, sizeof(*res));
	res->baseline_peak = c->real->baseline_peak;
	res->budget = budget;
	res->iteration_ns = c->g->iteration_ns;
	res->gap = -1;
	res->bound_ns = -1;
	res->min_peak = -1;
	res->peak = -1;
	snprintf(res->planner, sizeof(res->planner), "%s", pl_planner_name(c->o.planner));
	c->res = res;
	c->truth = budget;
	c->no_ilp = no_ilp;
	int rc = ctx_plan(c, &best);
	if (rc) {
		outcome_free(&best);
		return rc;
	}
	if (best.plan && !best.ev.valid) {
		rc = pl_errf(res->error, sizeof(res->error), PL_EINTERNAL,
		             "internal error: the plan fails evaluation: %s", best.ev.error);
		outcome_free(&best);
		return rc;
	}
	if (!best.ok) {
		res->peak = best.plan ? best.ev.peak : -1;
		outcome_free(&best);
		return PL_EBUDGET;
	}
	if ((rc = park_attach(c, &best))) {
		outcome_free(&best);
		return rc;
	}
	*out = finish_plan(c->real, budget, &best, res);
	outcome_free(&best);
	return PL_OK;
}

/* The smallest budget in (lo, hi] the time-independent part of this
 * planner meets, by bisection (it is not monotone in the budget: the
 * smallest found), while time is left.  Every answer is a budget it met,
 * so planning for it again makes a plan; hi is taken as met. */
int64_t pl_ctx_min_budget(struct pl_ctx *c, int64_t lo, int64_t hi)
{
	const struct pl_graph *g = c->g;
	int64_t step = g->granularity > 1 ? g->granularity / 2 : 1;
	while (hi - lo > step && hi - lo > g->baseline_peak / 1000 && left_s(c) > 0) {
		int64_t mid = lo + (hi - lo) / 2;
		struct pl_plan *p = NULL;
		struct pl_result r;
		int rc = pl_ctx_plan(c, mid, 1, &p, &r);
		pl_plan_free(p);
		if (rc == PL_OK)
			hi = mid;
		else if (rc == PL_EBUDGET)
			lo = mid;
		else
			break;
	}
	return hi;
}

/* Whether version 2 could do more on this graph: content dead across the
 * boundary, or content from before the iteration updated in place. */
static int v2_helps(const struct pl_graph *g)
{
	for (int32_t b = 0; b < g->nbufs; b++)
		if (g->bufs[b].dead_across)
			return 1;
	for (uint32_t r = 0; r < g->nrefs; r++)
		if ((g->refs[r].flags & PL_REF_WRITE) && (g->refs[r].flags & PL_REF_READ) &&
		    g->refs[r].ver == PL_VER_PRE)
			return 1;
	return 0;
}

int pl_plan_make(const struct pl_graph *g, int64_t budget, const struct pl_options *o,
                 struct pl_plan **out, struct pl_result *res)
{
	*out = NULL;
	memset(res, 0, sizeof(*res));
	char *err = res->error;
	size_t errlen = sizeof(res->error);
	if (budget <= 0)
		return pl_errf(err, errlen, PL_EINPUT, "budget must be positive");
	double t0 = pl_now();
	struct pl_ctx *c = pl_ctx_new(g, o);
	if (!c)
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	const char *name = pl_planner_name(c->o.planner);
	int rc = pl_ctx_plan(c, budget, 0, out, res);
	res->solve_s = pl_now() - t0;
	if (rc != PL_EBUDGET) {
		pl_ctx_free(c);
		return rc;
	}
	char reached[96] = "";
	if (res->peak >= 0)
		snprintf(reached, sizeof(reached), "; its closest plan peaks at %lld bytes",
		         (long long)res->peak);
	if (c->o.planner == PL_PLANNER_NONE) {
		res->min_peak = g->baseline_peak;
		rc = pl_errf(err, errlen, PL_EBUDGET,
		             "budget %lld bytes cannot be met by planner none: without evictions "
		             "the peak is the baseline, %lld bytes; try --planner ilp",
		             (long long)budget, (long long)g->baseline_peak);
	} else if (c->o.no_min_peak) {
		res->min_peak = -1;
		rc = pl_errf(err, errlen, PL_EBUDGET,
		             "budget %lld bytes cannot be met by planner %s%s (smallest "
		             "reachable budget not searched)",
		             (long long)budget, name, reached);
	} else {
		pl_progress(&c->o, "budget not met: searching the smallest budget %s meets", name);
		/* both unreachable: the larger */
		int64_t lo = budget > res->peak_bound - 1 ? budget : res->peak_bound - 1;
		res->min_peak = pl_ctx_min_budget(c, lo, g->baseline_peak);
		char tries[256];
		int n = snprintf(tries, sizeof(tries), "a budget of at least %lld bytes",
		                 (long long)res->min_peak);
		if (c->o.planner != PL_PLANNER_ILP && c->o.planner != PL_PLANNER_DTR)
			n += snprintf(tries + n, sizeof(tries) - (size_t)n,
			              ", --planner dtr (its walk rebuilds without limits)");
		if (c->o.planner != PL_PLANNER_ILP)
			n += snprintf(tries + n, sizeof(tries) - (size_t)n,
			              ", --planner ilp (every planner, then the ILP)");
		if (c->o.plan_version < 2 && v2_helps(g))
			n += snprintf(tries + n, sizeof(tries) - (size_t)n,
			              ", --plan-version 2 (stashes, buffers unmapped at the "
			              "boundary)");
		if (left_s(c) <= 0)
			snprintf(tries + n, sizeof(tries) - (size_t)n,
			         ", a longer --time-limit (the search ran out of time)");
		rc = pl_errf(err, errlen, PL_EBUDGET,
		             "budget %lld bytes cannot be met by planner %s%s%s; the smallest "
		             "budget it meets is %lld bytes (no plan goes below %lld); try %s",
		             (long long)budget, name,
		             budget < res->peak_bound ? " nor by any other" : "", reached,
		             (long long)res->min_peak, (long long)res->peak_bound, tries);
	}
	res->solve_s = pl_now() - t0;
	pl_ctx_free(c);
	return rc;
}
