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
/* Walks of the filtered search (bisection, then the other ways), in ops
 * walked: all of them up to 10k-op graphs, a coarse bisection on 100k. */
#define SIM_FILTER_OPS 400000

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

static int consider(const struct pl_graph *g, int64_t budget, struct best *b, struct pl_plan *p,
                    int *met_out)
{
	struct pl_eval e;
	*met_out = 0;
	if (!p)
		return 0;
	if (pl_evaluate(g, p, &e)) {
		pl_plan_free(p);
		return -1;
	}
	int met = e.valid && e.peak <= budget, better = 0;
	*met_out = met;
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

/* One way of walking: how idle time weighs, the repairs, the filter. */
struct way {
	int variant, repair;
	double max_ratio;
};

/* A walk the given way from a clean state (no pins, no reserves),
 * weighed against the best plan so far.  *met: its plan is valid and
 * within the budget.  1 when it is the new best, 0 not, -1 out of memory. */
static int walk_way(const struct pl_graph *g, int64_t budget, struct walk *w, struct way way,
                    struct best *best, struct way *best_way, struct event **events, size_t *nevents,
                    int *met)
{
	w->variant = way.variant;
	w->repair = way.repair;
	w->max_ratio = way.max_ratio;
	w->cost_cap = best->met ? 2 * best->cost : -1;
	memset(w->reserve, 0, g->nbufs ? (size_t)g->nbufs : 1);
	memset(w->never, 0, g->nbufs ? (size_t)g->nbufs : 1);
	sim_unpin_all(w);
	struct pl_plan *p;
	int walked = 0;
	if (sim_walk_all(w, &p, &walked) < 0)
		return -1;
	int r = consider(g, budget, best, p, met);
	if (r < 0 || (r > 0 && keep_events(w, events, nevents)))
		return -1;
	if (r > 0)
		*best_way = way;
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The rebuild costs per byte a filter can stop at: every evictable
 * buffer's, by each of its writers, ascending and distinct.  *n = 0
 * when there are none; -1 out of memory. */
static int filter_ratios(const struct walk *w, double **out, int32_t *n)
{
	const struct pl_graph *g = w->g;
	uint32_t nw = w->ix.wr_off[g->nbufs];
	double *r = malloc(sizeof(double) * (nw ? nw : 1));
	if (!r)
		return -1;
	int32_t k = 0;
	for (int32_t b = 0; b < g->nbufs; b++)
		if (pl_buf_evictable(&g->bufs[b]))
			for (uint32_t i = w->ix.wr_off[b]; i < w->ix.wr_off[b + 1]; i++)
				r[k++] = sim_ratio(g, b, w->ix.writers[i]);
	qsort(r, (size_t)k, sizeof(double), cmp_double);
	int32_t m = 0;
	for (int32_t i = 0; i < k; i++)
		if (!m || r[i] != r[m - 1])
			r[m++] = r[i];
	*out = r;
	*n = m;
	return 0;
}

/* A local search from the best plan, made `way`: forbid the evictions
 * whose rebuilds cost most, one at a time, and keep each that leaves a
 * cheaper plan within the budget.  (The way's repair pins are made
 * again as its walks need them.)  0, or -1 out of memory. */
static int local_search(const struct pl_graph *g, int64_t budget, struct walk *w, struct best *best,
                        struct way way, struct event **events, size_t *nevents)
{
	w->variant = way.variant;
	w->repair = way.repair;
	w->max_ratio = way.max_ratio;
	w->cost_cap = best->met ? 2 * best->cost : -1;
	memset(w->reserve, 0, g->nbufs ? (size_t)g->nbufs : 1);
	sim_unpin_all(w);
	/* (fewer on large graphs: each try is a walk) */
	int tries_max =
	    SIM_TRIES < SIM_TRY_OPS / (g->nops + 1) ? SIM_TRIES : SIM_TRY_OPS / (g->nops + 1);
	for (int tries = 0; best->met && tries < tries_max && *nevents; tries++) {
		struct event *ev = *events;
		size_t top = 0;
		for (size_t i = 1; i < *nevents; i++)
			if (ev[i].cost > ev[top].cost)
				top = i;
		if (ev[top].cost <= 0)
			break;
		uint64_t key = ev[top].key;
		ev[top].cost = -1; /* tried */
		if (sim_pin(w, key))
			return -1;
		struct pl_plan *p;
		int met = 0;
		if (sim_walk_all(w, &p, &met) < 0)
			return -1;
		int r = consider(g, budget, best, p, &met);
		if (r < 0)
			return -1;
		if (r > 0 && best->met) {
			if (keep_events(w, events, nevents))
				return -1;
		} else {
			sim_unpin(w, key);
		}
	}
	return 0;
}

int pl_sim(const struct pl_graph *g, int64_t budget, int version, struct pl_plan **out)
{
	struct walk w;
	struct best best = {0};
	int rc = -1;
	*out = NULL;
	if (sim_walk_init(&w, g, budget, version))
		goto out;
	/* How much the idle time weighs against the rebuild cost, and
	 * whether a rebuild that breaks the budget pins what led to it: each
	 * way wins somewhere, and a walk costs little.  (Repairs pay on
	 * pools, where a region evicted early takes a rebuild from far back
	 * with all it replays on the way; elsewhere the pins keep what
	 * other evictions would have freed.) */
	static const int idles[] = {IDLE_TIME, IDLE_SQRT, IDLE_OPS};
	int nidle = (int)(sizeof(idles) / sizeof(idles[0]));
	struct way best_way = {IDLE_TIME, 0, -1};
	struct event *events = NULL;
	size_t nevents = 0;
	double *ratios = NULL;
	int met = 0;
	for (int v = 0; v < 2 * nidle; v++) {
		struct way way = {idles[v % nidle], v < nidle ? 0 : SIM_REPAIRS, -1};
		if (walk_way(g, budget, &w, way, &best, &best_way, &events, &nevents, &met) < 0)
			goto out2;
	}
	struct way base = best_way;
	if (local_search(g, budget, &w, &best, base, &events, &nevents))
		goto out2;
	/* Then the same walks limited to the evictions that cost least to
	 * rebuild per byte: the smallest limit at which the best way still
	 * meets the budget, found by bisection (meeting it is close enough
	 * to monotone in the limit), and the other ways at that limit.  On
	 * the generated ResNet at 75% and 35% of its peak this takes the
	 * walk's plan from 12-25% above the proven bound to under 5%. */
	int32_t nratio = 0;
	if (best.met && filter_ratios(&w, &ratios, &nratio))
		goto out2;
	int probes = SIM_FILTER_OPS / (g->nops + 1);
	int32_t lo = 0, hi = nratio - 1;
	while (lo < hi && probes-- > 0) {
		int32_t mid = lo + (hi - lo) / 2;
		struct way way = {base.variant, base.repair, ratios[mid]};
		if (walk_way(g, budget, &w, way, &best, &best_way, &events, &nevents, &met) < 0)
			goto out2;
		if (met)
			hi = mid;
		else
			lo = mid + 1;
	}
	for (int v = 0; nratio && hi < nratio - 1 && v < 2 * nidle && probes-- > 0; v++) {
		struct way way = {idles[v % nidle], v < nidle ? 0 : SIM_REPAIRS, ratios[hi]};
		if ((way.variant != base.variant || way.repair != base.repair) &&
		    walk_way(g, budget, &w, way, &best, &best_way, &events, &nevents, &met) < 0)
			goto out2;
	}
	/* (and from a filtered plan if one won) */
	if (best_way.max_ratio >= 0 &&
	    local_search(g, budget, &w, &best, best_way, &events, &nevents))
		goto out2;
	if (best.plan) {
		*out = best.plan;
		best.plan = NULL;
		rc = best.met ? 0 : 1;
	} else {
		rc = 2; /* no walk settled */
	}
out2:
	free(ratios);
	free(events);
out:
	pl_plan_free(best.plan);
	sim_walk_free(&w);
	return rc;
}
