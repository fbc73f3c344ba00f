/*
 * sim_search.c — the dtr planner's walk of the iteration (sim.c), made a
 * few ways and improved: each way of weighing idle time against rebuild
 * cost wins on some graph, so all are walked and the best plan kept;
 * then a local search forbids, one at a time, the evictions whose
 * rebuilds cost most, and keeps each that leaves a cheaper plan within
 * the budget.  Every plan compared here has been through the evaluator.
 */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

/* Local search steps after the variants: walks, each a few ms on
 * thousands of ops. */
#define SIM_TRIES   64
#define SIM_TRY_OPS 200000
/* Repairs per settled walk (sim_internal.h): sim_walk_all gives up after
 * 64 rounds, so this leaves rounds for what else makes it walk again. */
#define SIM_REPAIRS 32

/* A copy of the walk's eviction costs, for the local search. */
static int keep_events(const struct walk *w, struct event **ev, size_t *n)
{
	struct event *e = realloc(*ev, (w->nev ? w->nev : 1) * sizeof(*e));
	if (!e)
		return -1;
	if (w->nev)
		memcpy(e, w->ev, w->nev * sizeof(*e));
	*ev = e;
	*n = w->nev;
	return 0;
}

/* The best plan so far: within the budget first, then cheaper; among
 * those over it, the lower peak. */
struct best {
	struct pl_plan *plan;
	int met;
	int64_t cost, peak;
};

static int consider(const struct pl_graph *g, int64_t budget, struct best *b, struct pl_plan *p)
{
	struct pl_eval e;
	if (!p)
		return 0;
	if (pl_evaluate(g, p, &e)) {
		pl_plan_free(p);
		return -1;
	}
	int met = e.valid && e.peak <= budget, better = 0;
	if (e.valid)
		better = !b->plan || (met && !b->met) ||
		         (met == b->met && (met ? e.recompute_ns < b->cost : e.peak < b->peak));
	if (better) {
		pl_plan_free(b->plan);
		*b = (struct best){p, met, e.recompute_ns, e.peak};
	} else {
		pl_plan_free(p);
	}
	pl_eval_free(&e);
	return better;
}

int pl_sim(const struct pl_graph *g, int64_t budget, int version, struct pl_plan **out)
{
	struct walk w;
	struct best best = {0};
	int rc = -1;
	*out = NULL;
	if (sim_walk_init(&w, g, budget, version))
		goto out;
	size_t nb = g->nbufs ? (size_t)g->nbufs : 1;
	/* How much the idle time weighs against the rebuild cost, and
	 * whether a rebuild that breaks the budget pins what led to it: each
	 * way wins somewhere, and a walk costs little.  (Repairs pay on
	 * pools, where a region evicted early takes a rebuild from far back
	 * with all it replays on the way; elsewhere the pins keep what
	 * other evictions would have freed.) */
	static const int idles[] = {IDLE_TIME, IDLE_SQRT, IDLE_OPS};
	int nidle = (int)(sizeof(idles) / sizeof(idles[0]));
	int best_variant = 0, best_repair = 0;
	struct event *events = NULL;
	size_t nevents = 0;
	for (int v = 0; v < 2 * nidle; v++) {
		int met = 0;
		w.variant = idles[v % nidle];
		w.repair = v < nidle ? 0 : SIM_REPAIRS;
		memset(w.reserve, 0, nb);
		sim_unpin_all(&w);
		struct pl_plan *p;
		if (sim_walk_all(&w, &p, &met) < 0)
			goto out2;
		int r = consider(g, budget, &best, p);
		if (r < 0 || (r > 0 && keep_events(&w, &events, &nevents)))
			goto out2;
		if (r > 0) {
			best_variant = w.variant;
			best_repair = w.repair;
		}
	}
	/* Then a local search: forbid the evictions whose rebuilds cost most,
	 * one at a time, and keep each that leaves a cheaper plan within the
	 * budget.  (The best variant's repair pins are made again as its
	 * walks need them.) */
	w.variant = best_variant;
	w.repair = best_repair;
	memset(w.reserve, 0, nb);
	sim_unpin_all(&w);
	/* (fewer on large graphs: each try is a walk) */
	int tries_max =
	    SIM_TRIES < SIM_TRY_OPS / (g->nops + 1) ? SIM_TRIES : SIM_TRY_OPS / (g->nops + 1);
	for (int tries = 0; best.met && tries < tries_max && nevents; tries++) {
		size_t top = 0;
		for (size_t i = 1; i < nevents; i++)
			if (events[i].cost > events[top].cost)
				top = i;
		if (events[top].cost <= 0)
			break;
		uint64_t key = events[top].key;
		events[top].cost = -1; /* tried */
		if (sim_pin(&w, key))
			goto out2;
		int met = 0;
		struct pl_plan *p;
		if (sim_walk_all(&w, &p, &met) < 0)
			goto out2;
		int r = consider(g, budget, &best, p);
		if (r < 0)
			goto out2;
		if (r > 0 && best.met) {
			if (keep_events(&w, &events, &nevents))
				goto out2;
		} else {
			sim_unpin(&w, key);
		}
	}
	if (best.plan) {
		*out = best.plan;
		best.plan = NULL;
		rc = best.met ? 0 : 1;
	} else {
		rc = 2; /* no walk settled */
	}
out2:
	free(events);
out:
	pl_plan_free(best.plan);
	sim_walk_free(&w);
	return rc;
}
