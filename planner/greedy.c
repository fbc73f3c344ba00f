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

/* sc in score order, the best first; ties by candidate (as cmp_score
 * orders them; qsort is the fallback). */
static void sort_scores(struct score *sc, int32_t n)
{
	struct pl_keyed *k = malloc(sizeof(*k) * (n ? (size_t)n : 1));
	struct score *out = malloc(sizeof(*out) * (n ? (size_t)n : 1));
	int nan = 0;
	for (int32_t i = 0; k && i < n; i++) {
		nan |= sc[i].v != sc[i].v;
		k[i] = (struct pl_keyed){pl_key_desc(sc[i].v), i};
	}
	if (!k || !out || nan || pl_radix_sort(k, (size_t)n)) {
		/* (no key orders a NaN as the comparison does) */
		free(k);
		free(out);
		qsort(sc, n, sizeof(*sc), cmp_score);
		return;
	}
	/* sc comes by candidate (pl_useful lists them in order), so the
	 * stable sort keeps ties that way */
	for (int32_t i = 0; i < n; i++)
		out[i] = sc[k[i].i];
	memcpy(sc, out, sizeof(*sc) * (size_t)n);
	free(k);
	free(out);
}

static int run(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen,
               int variant, const int32_t *useful, int32_t nuseful, const double *bytes,
               const double *fbytes, int64_t *cost_out, int64_t *peak_out)
{
	struct pl_segtree t;
	struct pl_selection s;
	struct pl_engines eng;
	struct score *sc = malloc(sizeof(*sc) * (cs->ncands ? cs->ncands : 1));
	if (!sc || pl_st_init(&t, g->live, g->nops)) {
		free(sc);
		return -1;
	}
	if (pl_eng_init(&eng, g->nops)) {
		pl_st_free(&t);
		free(sc);
		return -1;
	}
	if (pl_sel_init(&s, cs)) {
		pl_eng_free(&eng);
		pl_st_free(&t);
		free(sc);
		return -1;
	}
	for (int32_t i = 0; i < nuseful; i++) {
		/* bytes per ns; free candidates first, the larger the better */
		const struct pl_cand *x = &cs->c[useful[i]];
		const struct pl_range *r0 = &cs->ranges[x->range_off];
		sc[i] = (struct score){score(cs, useful[i], variant, bytes[i], fbytes[i]),
		                       useful[i],
		                       r0->lo,
		                       r0->hi,
		                       (int32_t)x->nranges,
		                       r0->bytes};
	}
	sort_scores(sc, nuseful);
	int32_t ntaken = 0;
	int32_t *taken = malloc(sizeof(int32_t) * (cs->ncands ? cs->ncands : 1));
	/* Two passes: a rebuild refused because its own position was still
	 * over the budget may fit once others have lowered it. */
	for (int pass = 0; pass < 2 && taken; pass++) {
		for (int32_t i = 0; i < nuseful; i++) {
			if (t.mx[1] <= budget)
				break;
			int32_t j = sc[i].j;
			/* (first what costs least to ask) */
			if (!pl_sel_compatible(&s, j))
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
			pl_sel_take(&s, cs, j);
			if (cs->offload_gbps > 0)
				pl_eng_apply(&eng, cs, j, +1);
			taken[ntaken++] = j;
		}
	}
	int ok = t.mx[1] <= budget;
	if (ok && taken)
		pl_sel_prune(&s, &t, cs, taken, ntaken, budget);
	*cost_out = 0;
	for (int32_t j = 0; j < cs->ncands; j++) {
		chosen[j] = s.chosen[j];
		if (chosen[j])
			*cost_out += cs->c[j].cost;
	}
	*peak_out = t.mx[1];
	free(taken);
	pl_eng_free(&eng);
	pl_sel_free(&s);
	pl_st_free(&t);
	free(sc);
	return ok ? 0 : 1;
}

int pl_greedy(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, uint8_t *chosen)
{
	uint8_t *tmp = malloc(cs->ncands ? cs->ncands : 1);
	int32_t *useful = malloc(sizeof(int32_t) * (cs->ncands ? cs->ncands : 1));
	int32_t nuseful = useful ? pl_useful(g, cs, budget, useful) : -1;
	if (!tmp || nuseful < 0) {
		free(tmp);
		free(useful);
		return -1;
	}
	double *bytes = malloc(sizeof(double) * (nuseful ? nuseful : 1));
	double *fbytes = malloc(sizeof(double) * (nuseful ? nuseful : 1));
	struct pl_best best = {-1, 0, 0};
	for (int32_t i = 0; bytes && fbytes && i < nuseful; i++) {
		bytes[i] = (double)pl_cand_bytes(cs, useful[i]);
		fbytes[i] = (double)pl_forbid_bytes(cs, useful[i]);
	}
	for (int v = 0; v < 3 && bytes && fbytes; v++) {
		int64_t cost, peak;
		int r = run(g, cs, budget, tmp, v, useful, nuseful, bytes, fbytes, &cost, &peak);
		if (pl_best_take(&best, r, cost, peak))
			memcpy(chosen, tmp, cs->ncands);
	}
	free(tmp);
	free(useful);
	free(bytes);
	free(fbytes);
	return best.r;
}
