/*
 * greedy.c — Capuchin's rule: take candidates in order of memory saved
 * per second of recompute, each only if it lowers a point of the curve
 * that is still over the budget; then give back the ones that turned out
 * unnecessary.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The first range rides along: the loop below walks candidates in score
 * order, and fetching each from the pool would miss the cache. */
struct score {
	double v;
	int32_t j, lo, hi, nranges;
	int64_t bytes;
};

static int cmp_score(const void *a, const void *b)
{
	const struct score *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

/* Score variants: plain bytes per ns; discounted by the bytes a
 * candidate forbids evicting (a single in a chain blocks its neighbour,
 * a segment blocks one buffer for several); and favouring long segments. */
static double score(const struct pl_cands *cs, int32_t j, int variant, double bytes, double fb)
{
	const struct pl_cand *x = &cs->c[j];
	double s = bytes / ((double)x->cost + 1e-3);
	if (variant >= 1)
		s /= 1.0 + fb / (bytes + 1.0);
	if (variant == 2)
		s *= x->ngaps;
	return s;
}

/* What the three variants share (allocated once: fresh pages for each
 * would cost as much as a fifth of greedy on 100k ops). */
struct work {
	const struct pl_graph *g;
	const struct pl_cands *cs;
	int64_t budget;
	int32_t nuseful;
	const int32_t *useful;
	const double *bytes, *fbytes;
	struct score *sc, *sorted;
	struct pl_keyed *keys;
	int32_t *taken;
	struct pl_selection s;
};

/* w->sc in score order, the best first, ties by candidate (as cmp_score
 * orders them; qsort is the fallback).  Returns the sorted array. */
static struct score *sort_scores(struct work *w)
{
	int32_t n = w->nuseful;
	int nan = 0;
	for (int32_t i = 0; i < n; i++) {
		nan |= w->sc[i].v != w->sc[i].v;
		w->keys[i] = (struct pl_keyed){pl_key_desc(w->sc[i].v), i};
	}
	if (nan || pl_radix_sort(w->keys, (size_t)n)) {
		/* (no key orders a NaN as the comparison does) */
		qsort(w->sc, n, sizeof(*w->sc), cmp_score);
		return w->sc;
	}
	/* sc comes by candidate (pl_useful lists them in order), so the
	 * stable sort keeps ties that way */
	for (int32_t i = 0; i < n; i++)
		w->sorted[i] = w->sc[w->keys[i].i];
	return w->sorted;
}

static int run(struct work *w, int variant, uint8_t *chosen, int64_t *cost_out, int64_t *peak_out)
{
	const struct pl_graph *g = w->g;
	const struct pl_cands *cs = w->cs;
	int64_t budget = w->budget;
	struct pl_segtree t;
	struct pl_engines eng;
	struct pl_selection *s = &w->s;
	if (pl_st_init(&t, g->live, g->nops))
		return -1;
	if (pl_eng_init(&eng, g->nops)) {
		pl_st_free(&t);
		return -1;
	}
	pl_sel_clear(s, cs);
	for (int32_t i = 0; i < w->nuseful; i++) {
		/* bytes per ns; free candidates first, the larger the better */
		int32_t j = w->useful[i];
		const struct pl_cand *x = &cs->c[j];
		const struct pl_range *r0 = &cs->ranges[x->range_off];
		w->sc[i] = (struct score){score(cs, j, variant, w->bytes[i], w->fbytes[i]),
		                          j,
		                          r0->lo,
		                          r0->hi,
		                          (int32_t)x->nranges,
		                          r0->bytes};
	}
	const struct score *sc = sort_scores(w);
	int32_t ntaken = 0, *taken = w->taken;
	/* Two passes: a rebuild refused because its own position was still
	 * over the budget may fit once others have lowered it. */
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t i = 0; i < w->nuseful; i++) {
			if (t.mx[1] <= budget)
				break;
			int32_t j = sc[i].j;
			/* (first what costs least to ask) */
			if (!pl_sel_compatible(s, j))
				continue;
			int helps = sc[i].bytes > 0 && pl_st_max(&t, sc[i].lo, sc[i].hi) > budget;
			if (!helps && sc[i].nranges == 1)
				continue;
			const struct pl_cand *x = &cs->c[j];
			for (uint32_t r = 1; r < x->nranges && !helps; r++) {
				const struct pl_range *rg = &cs->ranges[x->range_off + r];
				helps = rg->bytes > 0 && pl_st_max(&t, rg->lo, rg->hi) > budget;
			}
			if (!helps)
				continue;
			/* (copy engines only matter with offload candidates) */
			if (cs->offload_gbps > 0 && !pl_eng_fits(&eng, cs, j))
				continue;
			pl_sel_apply(&t, cs, j, -1);
			if (pl_cand_overshoots(&t, cs, j, budget)) {
				pl_sel_apply(&t, cs, j, +1);
				continue;
			}
			pl_sel_take(s, cs, j);
			if (cs->offload_gbps > 0)
				pl_eng_apply(&eng, cs, j, +1);
			taken[ntaken++] = j;
		}
	}
	int ok = t.mx[1] <= budget;
	if (ok)
		pl_sel_prune(s, &t, cs, (struct pl_ids){taken, ntaken}, budget);
	*cost_out = 0;
	for (int32_t j = 0; j < cs->ncands; j++) {
		chosen[j] = s->chosen[j];
		if (chosen[j])
			*cost_out += cs->c[j].cost;
	}
	*peak_out = t.mx[1];
	pl_eng_free(&eng);
	pl_st_free(&t);
	return ok ? 0 : 1;
}

int pl_greedy(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen)
{
	size_t nc = cs->ncands ? (size_t)cs->ncands : 1;
	struct work w = {.g = g, .cs = cs, .budget = budget};
	uint8_t *tmp = malloc(nc);
	int32_t *useful = malloc(sizeof(int32_t) * nc);
	double *bytes = malloc(sizeof(double) * nc), *fbytes = malloc(sizeof(double) * nc);
	w.sc = malloc(sizeof(*w.sc) * nc);
	w.sorted = malloc(sizeof(*w.sorted) * nc);
	w.keys = malloc(sizeof(*w.keys) * nc);
	w.taken = malloc(sizeof(int32_t) * nc);
	struct pl_best best = {-1, 0, 0};
	w.nuseful = useful ? pl_useful(g, cs, budget, useful) : -1;
	if (!tmp || !bytes || !fbytes || !w.sc || !w.sorted || !w.keys || !w.taken ||
	    w.nuseful < 0 || pl_sel_init(&w.s, cs))
		goto out;
	w.useful = useful;
	w.bytes = bytes;
	w.fbytes = fbytes;
	for (int32_t i = 0; i < w.nuseful; i++) {
		bytes[i] = (double)pl_cand_bytes(cs, useful[i]);
		fbytes[i] = (double)pl_forbid_bytes(cs, useful[i]);
	}
	for (int v = 0; v < 3; v++) {
		int64_t cost, peak;
		int r = run(&w, v, tmp, &cost, &peak);
		if (pl_best_take(&best, r, cost, peak))
			memcpy(chosen, tmp, cs->ncands);
	}
out:
	pl_sel_free(&w.s);
	free(tmp);
	free(useful);
	free(bytes);
	free(fbytes);
	free(w.sc);
	free(w.sorted);
	free(w.keys);
	free(w.taken);
	return best.r;
}
