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

/* One variant's run: the memory curve of what it took (t, s, eng), the
 * start time of each op (tm), the ranges bucketed by their first
 * position (ent[off[p - 1] .. off[p])) with their keys, the heap of idle
 * ones, and what it took in order (taken). */
struct run {
	const struct pl_graph *g;
	const struct pl_cands *cs;
	int64_t budget;
	int variant;
	struct pl_segtree t;
	struct pl_selection s;
	struct pl_engines eng;
	int64_t *tm;
	uint32_t *off;
	struct pl_hent *ent;
	struct pl_heap hp;
	int32_t *taken, ntaken;
};

static void run_free(struct run *r)
{
	pl_sel_free(&r->s);
	pl_st_free(&r->t);
	pl_eng_free(&r->eng);
	free(r->tm);
	free(r->off);
	free(r->ent);
	free(r->hp.e);
	free(r->taken);
}

static int run_init(struct run *r)
{
	const struct pl_cands *cs = r->cs;
	int32_t n = r->g->nops;
	r->tm = malloc(sizeof(int64_t) * ((size_t)n + 1));
	r->off = calloc((size_t)n + 2, sizeof(uint32_t));
	r->ent = malloc(sizeof(*r->ent) * (cs->nranges + 1));
	r->hp = (struct pl_heap){malloc(sizeof(struct pl_hent) * (cs->nranges + 1)), 0,
	                         cs->nranges + 1};
	r->taken = malloc(sizeof(int32_t) * (cs->ncands ? cs->ncands : 1));
	return !r->tm || !r->off || !r->ent || !r->hp.e || !r->taken || pl_eng_init(&r->eng, n) ||
	       pl_st_init(&r->t, r->g->live, n) || pl_sel_init(&r->s, cs);
}

/* Ranges bucketed by their first position, each with its key. */
static void bucket(struct run *r)
{
	const struct pl_graph *g = r->g;
	const struct pl_cands *cs = r->cs;
	int32_t n = g->nops;
	int64_t *tm = r->tm;
	uint32_t *off = r->off;
	tm[0] = 0;
	for (int32_t p = 0; p < n; p++)
		tm[p + 1] = tm[p] + g->ops[p].duration_ns;
	/* (a range that adds bytes, a stash, is no reason to evict) */
	for (int32_t j = 0; j < cs->ncands; j++)
		for (uint32_t k = 0; k < cs->c[j].nranges; k++)
			if (cs->ranges[cs->c[j].range_off + k].bytes > 0)
				off[cs->ranges[cs->c[j].range_off + k].lo + 1]++;
	for (int32_t p = 0; p < n; p++)
		off[p + 1] += off[p];
	for (int32_t j = 0; j < cs->ncands; j++) {
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t k = 0; k < x->nranges; k++) {
			const struct pl_range *rg = &cs->ranges[x->range_off + k];
			if (rg->bytes <= 0)
				continue;
			double stale = (double)(tm[rg->hi + 1] - tm[rg->lo]) + 1.0;
			double h = (double)x->cost / (((double)rg->bytes + 1.0) * stale);
			/* Variant 1 also counts what the eviction blocks: the
			 * buffers its rebuild needs resident.  Variant 2 also
			 * prefers segments: one rebuild frees several. */
			if (r->variant)
				h *= 1.0 + (double)pl_forbid_bytes(cs, j) / ((double)rg->bytes + 1);
			if (r->variant == 2)
				h /= x->ngaps;
			r->ent[off[rg->lo]++] = (struct pl_hent){h, j, rg->hi};
		}
	}
}

/* The walk: at each op over the budget, the idle ranges lowest first. */
static void walk(struct run *r)
{
	const struct pl_cands *cs = r->cs;
	for (int32_t p = 0; p < r->g->nops; p++) {
		/* ranges starting at p: their buffers just went idle */
		for (uint32_t k = (p ? r->off[p - 1] : 0); k < r->off[p]; k++)
			if (r->ent[k].hi >= p)
				pl_heap_push(&r->hp, r->ent[k]); /* within its capacity */
		while (r->hp.n && pl_st_max(&r->t, p, p) > r->budget) {
			struct pl_hent x = pl_heap_pop(&r->hp);
			/* Incompatibility only grows during the walk: drop for good. */
			if (x.hi < p || r->s.chosen[x.j] || !pl_sel_compatible(&r->s, x.j) ||
			    !pl_eng_fits(&r->eng, cs, x.j))
				continue;
			pl_sel_apply(&r->t, cs, x.j, -1);
			pl_sel_take(&r->s, cs, x.j);
			pl_eng_apply(&r->eng, cs, x.j, +1);
			r->taken[r->ntaken++] = x.j;
		}
	}
}

/* Gives back what turned out unnecessary, the costliest per byte first. */
static void give_back(struct run *r)
{
	const struct pl_cands *cs = r->cs;
	struct pl_hent *byc = r->hp.e;
	for (int32_t i = 0; i < r->ntaken; i++)
		byc[i] = (struct pl_hent){(double)cs->c[r->taken[i]].cost /
		                              ((double)pl_cand_bytes(cs, r->taken[i]) + 1),
		                          r->taken[i], 0};
	qsort(byc, r->ntaken, sizeof(*byc), cmp_h);
	for (int32_t i = 0; i < r->ntaken; i++)
		r->taken[i] = byc[i].j;
	pl_sel_prune(&r->s, &r->t, cs, (struct pl_ids){r->taken, r->ntaken}, r->budget);
}

/* Variant r->variant into chosen: 0 met, 1 not, -1 out of memory. */
static int run(struct run *r, uint8_t *chosen, int64_t *cost_out, int64_t *peak_out)
{
	const struct pl_cands *cs = r->cs;
	if (run_init(r))
		return -1;
	bucket(r);
	walk(r);
	int ok = r->t.mx[1] <= r->budget;
	if (ok)
		give_back(r);
	*cost_out = 0;
	for (int32_t j = 0; j < cs->ncands; j++) {
		chosen[j] = r->s.chosen[j];
		if (chosen[j])
			*cost_out += cs->c[j].cost;
	}
	*peak_out = r->t.mx[1];
	return ok ? 0 : 1;
}

int pl_dtr(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen)
{
	uint8_t *tmp = malloc(cs->ncands ? cs->ncands : 1);
	if (!tmp)
		return -1;
	struct pl_best best = {-1, 0, 0};
	for (int v = 0; v < 3; v++) {
		int64_t cost, peak;
		struct run r = {.g = g, .cs = cs, .budget = budget, .variant = v};
		int rr = run(&r, tmp, &cost, &peak);
		run_free(&r);
		if (pl_best_take(&best, rr, cost, peak))
			memcpy(chosen, tmp, cs->ncands);
	}
	free(tmp);
	return best.r;
}
