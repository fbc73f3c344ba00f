/*
 * dtr.c — a DTR-style rule run offline: walk the ops in order; whenever
 * memory at an op exceeds the budget, evict, among the buffers idle at
 * that point, the ones with the lowest cost / (size x staleness).  Online
 * DTR measures staleness as the time since the last use; offline we know
 * the whole idle gap, so staleness is the gap's length in time, which
 * makes the key fixed and lets a heap hold the idle buffers: O(n log n).
 * Then the evictions that turned out unnecessary are given back.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static int cmp_h(const void *a, const void *b)
{
	const struct pl_hent *x = a, *y = b;
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
	struct pl_engines eng = {0};
	int64_t *tm = malloc(sizeof(int64_t) * ((size_t)n + 1));
	uint32_t *off = calloc((size_t)n + 2, sizeof(uint32_t));
	struct pl_hent *ent = malloc(sizeof(*ent) * (cs->nranges + 1));
	struct pl_heap hp = {malloc(sizeof(struct pl_hent) * (cs->nranges + 1)), 0,
	                     cs->nranges + 1};
	int32_t *taken = malloc(sizeof(int32_t) * (cs->ncands ? cs->ncands : 1));
	int rc = -1;
	if (!tm || !off || !ent || !hp.e || !taken || pl_eng_init(&eng, n))
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
	/* Ranges bucketed by their first position, each with its key. */
	/* (a range that adds bytes, a stash, is no reason to evict) */
	for (int32_t j = 0; j < cs->ncands; j++)
		for (uint32_t r = 0; r < cs->c[j].nranges; r++)
			if (cs->ranges[cs->c[j].range_off + r].bytes > 0)
				off[cs->ranges[cs->c[j].range_off + r].lo + 1]++;
	for (int32_t p = 0; p < n; p++)
		off[p + 1] += off[p];
	for (int32_t j = 0; j < cs->ncands; j++) {
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t r = 0; r < x->nranges; r++) {
			const struct pl_range *rg = &cs->ranges[x->range_off + r];
			if (rg->bytes <= 0)
				continue;
			double stale = (double)(tm[rg->hi + 1] - tm[rg->lo]) + 1.0;
			double h = (double)x->cost / (((double)rg->bytes + 1.0) * stale);
			/* Variant 1 also counts what the eviction blocks: the
			 * buffers its rebuild needs resident.  Variant 2 also
			 * prefers segments: one rebuild frees several. */
			if (variant)
				h *= 1.0 + (double)pl_forbid_bytes(cs, j) / ((double)rg->bytes + 1);
			if (variant == 2)
				h /= x->ngaps;
			ent[off[rg->lo]++] = (struct pl_hent){h, j, rg->hi};
		}
	}
	int32_t ntaken = 0;
	for (int32_t p = 0; p < n; p++) {
		/* ranges starting at p: their buffers just went idle */
		for (uint32_t k = (p ? off[p - 1] : 0); k < off[p]; k++)
			if (ent[k].hi >= p)
				pl_heap_push(&hp, ent[k]); /* within its capacity */
		while (hp.n && pl_st_max(&t, p, p) > budget) {
			struct pl_hent x = pl_heap_pop(&hp);
			/* Incompatibility only grows during the walk: drop for good. */
			if (x.hi < p || s.chosen[x.j] || !pl_sel_compatible(&s, x.j) ||
			    !pl_eng_fits(&eng, cs, x.j))
				continue;
			pl_sel_apply(&t, cs, x.j, -1);
			pl_sel_take(&s, cs, x.j);
			pl_eng_apply(&eng, cs, x.j, +1);
			taken[ntaken++] = x.j;
		}
	}
	int ok = t.mx[1] <= budget;
	if (ok) {
		/* Give back the costliest per byte first. */
		struct pl_hent *byc = hp.e;
		for (int32_t i = 0; i < ntaken; i++)
			byc[i] = (struct pl_hent){(double)cs->c[taken[i]].cost /
			                              ((double)pl_cand_bytes(cs, taken[i]) + 1),
			                          taken[i], 0};
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
	pl_eng_free(&eng);
	free(tm);
	free(off);
	free(ent);
	free(hp.e);
	free(taken);
	return rc;
}

int pl_dtr(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen)
{
	uint8_t *tmp = malloc(cs->ncands ? cs->ncands : 1);
	if (!tmp)
		return -1;
	struct pl_best best = {-1, 0, 0};
	for (int v = 0; v < 3; v++) {
		int64_t cost, peak;
		int r = run(g, cs, budget, tmp, v, &cost, &peak);
		if (pl_best_take(&best, r, cost, peak))
			memcpy(chosen, tmp, cs->ncands);
	}
	free(tmp);
	return best.r;
}
