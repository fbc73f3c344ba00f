/*
 * dtr.c — a DTR-style rule run offline: walk the ops in order; whenever
 * memory at an op exceeds the budget, evict among the buffers idle at
 * that point the ones with the lowest cost / (size x staleness), where
 * staleness is the time since the buffer's last use.  Then give back the
 * evictions that turned out unnecessary.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct entry {
	int32_t j, lo, hi;
	int64_t bytes;
	double h;
};

static int cmp_h(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

static int run(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen,
               int variant, int64_t *cost_out, int64_t *peak_out)
{
	int32_t n = g->nops;
	struct pl_segtree t;
	struct pl_selection s;
	int64_t *tm = malloc(sizeof(int64_t) * ((size_t)n + 1));
	uint32_t *off = calloc((size_t)n + 2, sizeof(uint32_t));
	struct entry *ent = malloc(sizeof(*ent) * (cs->nranges + 1));
	struct entry *act = malloc(sizeof(*act) * (cs->nranges + 1));
	int32_t *taken = malloc(sizeof(int32_t) * (cs->ncands ? cs->ncands : 1));
	int rc = -1;
	if (!tm || !off || !ent || !act || !taken)
		goto out0;
	if (pl_st_init(&t, g->live, n))
		goto out0;
	if (pl_sel_init(&s, cs)) {
		pl_st_free(&t);
		goto out0;
	}
	tm[0] = 0;
	for (int32_t p = 0; p < n; p++)
		tm[p + 1] = tm[p] + g->ops[p].duration_ns;
	/* Ranges bucketed by their first position. */
	for (int32_t j = 0; j < cs->ncands; j++)
		for (uint32_t r = 0; r < cs->c[j].nranges; r++)
			off[cs->ranges[cs->c[j].range_off + r].lo + 1]++;
	for (int32_t p = 0; p < n; p++)
		off[p + 1] += off[p];
	for (int32_t j = 0; j < cs->ncands; j++)
		for (uint32_t r = 0; r < cs->c[j].nranges; r++) {
			const struct pl_range *rg = &cs->ranges[cs->c[j].range_off + r];
			ent[off[rg->lo]++] = (struct entry){j, rg->lo, rg->hi, rg->bytes, 0};
		}
	uint32_t e = 0, nact = 0;
	int32_t ntaken = 0;
	for (int32_t p = 0; p < n; p++) {
		for (; e < cs->nranges && ent[e].lo == p; e++)
			act[nact++] = ent[e];
		if (pl_st_max(&t, p, p) <= budget)
			continue;
		uint32_t k = 0;
		for (uint32_t i = 0; i < nact; i++) {
			struct entry *x = &act[i];
			if (x->hi < p || s.chosen[x->j] || x->bytes <= 0)
				continue;
			double stale = (double)(tm[p] - tm[x->lo]) + 1.0;
			x->h = (double)cs->c[x->j].cost / ((double)x->bytes * stale);
			/* Variant 1 also counts what the eviction blocks: the
			 * buffers its rebuild needs resident. */
			if (variant)
				x->h *= 1.0 +
				        (double)pl_forbid_bytes(cs, x->j) / ((double)x->bytes + 1);
			act[k++] = *x;
		}
		nact = k;
		qsort(act, nact, sizeof(*act), cmp_h);
		for (uint32_t i = 0; i < nact && pl_st_max(&t, p, p) > budget; i++) {
			int32_t j = act[i].j;
			if (!pl_sel_compatible(&s, cs, j))
				continue;
			pl_sel_apply(&t, cs, j, -1);
			pl_sel_take(&s, cs, j);
			taken[ntaken++] = j;
		}
	}
	int ok = t.mx[1] <= budget;
	if (ok) {
		/* Give back the costliest first: the reverse of cheapest-first. */
		struct entry *byc = act;
		for (int32_t i = 0; i < ntaken; i++)
			byc[i] = (struct entry){taken[i], 0, 0, 0,
			                        (double)cs->c[taken[i]].cost /
			                            ((double)pl_cand_bytes(cs, taken[i]) + 1)};
		qsort(byc, ntaken, sizeof(*byc), cmp_h);
		for (int32_t i = 0; i < ntaken; i++)
			taken[i] = byc[i].j;
		pl_sel_prune(&s, &t, cs, taken, ntaken, budget);
	}
	*cost_out = 0;
	for (int32_t j = 0; j < cs->ncands; j++) {
		chosen[j] = s.chosen[j];
		if (chosen[j])
			*cost_out += cs->c[j].cost;
	}
	*peak_out = t.mx[1];
	rc = ok ? 0 : 1;
	pl_sel_free(&s);
	pl_st_free(&t);
out0:
	free(tm);
	free(off);
	free(ent);
	free(act);
	free(taken);
	return rc;
}

int pl_dtr(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen)
{
	uint8_t *tmp = malloc(cs->ncands ? cs->ncands : 1);
	if (!tmp)
		return -1;
	int best = -1;
	int64_t best_cost = 0, best_peak = 0;
	for (int v = 0; v < 3; v++) {
		int64_t cost, peak;
		int r = run(g, cs, budget, tmp, v, &cost, &peak);
		if (r < 0)
			continue;
		int better = best < 0 || (r == 0 && best != 0) ||
		             (r == best && (r == 0 ? cost < best_cost : peak < best_peak));
		if (better) {
			best = r;
			best_cost = cost;
			best_peak = peak;
			memcpy(chosen, tmp, cs->ncands);
		}
	}
	free(tmp);
	return best;
}
