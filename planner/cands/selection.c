/*
 * selection.c — a set of chosen candidates: compatibility (each gap taken
 * once, no gap evicted that a chosen rebuild reads), its upper-bound
 * memory curve, and the executable plan it stands for.
 */
#include "cands.h"

#include <stdlib.h>
#include <string.h>

int pl_sel_init(struct pl_selection *s, const struct pl_cands *cs)
{
	size_t nc = cs->ncands ? (size_t)cs->ncands : 1;
	s->chosen = calloc(nc, 1);
	s->conflicts = calloc(nc, sizeof(int32_t));
	if (!s->chosen || !s->conflicts) {
		pl_sel_free(s);
		return -1;
	}
	return 0;
}

void pl_sel_clear(struct pl_selection *s, const struct pl_cands *cs)
{
	memset(s->chosen, 0, (size_t)cs->ncands);
	memset(s->conflicts, 0, sizeof(int32_t) * (size_t)cs->ncands);
}

void pl_sel_free(struct pl_selection *s)
{
	free(s->chosen);
	free(s->conflicts);
	memset(s, 0, sizeof(*s));
}

/* The heuristics ask this of hundreds of thousands of candidates in
 * score order; reading each one's gap lists there misses the cache at
 * every step, so the answer is kept per candidate instead (conflicts,
 * kept up to date by take and drop through the reverse indexes). */
int pl_sel_compatible(const struct pl_selection *s, int32_t j)
{
	return !s->chosen[j] && !s->conflicts[j];
}

/* Adds d to the conflicts of every candidate that clashes with j:
 * those taking a gap j takes or forbids, and those forbidding a gap j
 * takes.  (The reverse indexes may list candidates past cs->ncands:
 * the heuristics see a prefix of a set the chain appended to.) */
static void clash(struct pl_selection *s, const struct pl_cands *cs, int32_t j, int32_t d)
{
	const struct pl_cand *x = &cs->c[j];
	for (uint32_t i = 0; i < x->ngaps; i++) {
		int32_t q = cs->gap_list[x->gap_off + i];
		for (uint32_t k = cs->by_gap_off[q]; k < cs->by_gap_off[q + 1]; k++)
			if (cs->by_gap[k] < cs->ncands)
				s->conflicts[cs->by_gap[k]] += d;
		for (uint32_t k = cs->forbid_by_off[q]; k < cs->forbid_by_off[q + 1]; k++)
			if (cs->forbid_by[k] < cs->ncands)
				s->conflicts[cs->forbid_by[k]] += d;
	}
	for (uint32_t i = 0; i < x->nforbid; i++) {
		int32_t q = cs->forbid_list[x->forbid_off + i];
		for (uint32_t k = cs->by_gap_off[q]; k < cs->by_gap_off[q + 1]; k++)
			if (cs->by_gap[k] < cs->ncands)
				s->conflicts[cs->by_gap[k]] += d;
	}
}

void pl_sel_take(struct pl_selection *s, const struct pl_cands *cs, int32_t j)
{
	s->chosen[j] = 1;
	clash(s, cs, j, 1);
}

void pl_sel_drop(struct pl_selection *s, const struct pl_cands *cs, int32_t j)
{
	s->chosen[j] = 0;
	clash(s, cs, j, -1);
}

void pl_sel_curve(const struct pl_graph *g, const struct pl_cands *cs, const uint8_t *chosen,
                  int64_t *curve)
{
	int64_t *d = calloc((size_t)g->nops + 1, sizeof(int64_t));
	memcpy(curve, g->live, sizeof(int64_t) * g->nops);
	if (!d)
		return;
	for (int32_t j = 0; j < cs->ncands; j++) {
		if (!chosen[j])
			continue;
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t r = 0; r < x->nranges; r++) {
			const struct pl_range *rg = &cs->ranges[x->range_off + r];
			d[rg->lo] -= rg->bytes;
			d[rg->hi + 1] += rg->bytes;
		}
		if (x->at >= 0)
			curve[x->at] += x->transient;
	}
	int64_t acc = 0;
	for (int32_t p = 0; p < g->nops; p++) {
		acc += d[p];
		curve[p] += acc;
	}
	free(d);
}

static int cmp_rebuild(const void *a, const void *b, void *arg)
{
	const struct pl_cands *cs = arg;
	const struct pl_cand *x = &cs->c[*(const int32_t *)a];
	const struct pl_cand *y = &cs->c[*(const int32_t *)b];
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	if (x->order_key != y->order_key)
		return x->order_key < y->order_key ? -1 : 1;
	return *(const int32_t *)a < *(const int32_t *)b ? -1 : 1;
}

struct pl_plan *pl_sel_plan(const struct pl_graph *g, const struct pl_cands *cs,
                            const uint8_t *chosen)
{
	struct pl_asm pa;
	int32_t *order = malloc(sizeof(int32_t) * (cs->ncands ? cs->ncands : 1)), n = 0;
	struct pl_plan *p = NULL;
	if (pl_asm_init(&pa, g) || !order)
		goto out;
	for (int32_t j = 0; j < cs->ncands; j++) {
		if (!chosen[j])
			continue;
		const struct pl_cand *x = &cs->c[j];
		/* (first: an await at a position comes before its rebuilds,
		 * which may read the buffer) */
		if (x->offload) {
			if (pl_offload_steps(&pa, cs, j))
				goto out;
			continue;
		}
		for (uint32_t i = 0; i < x->ngaps; i++) {
			const struct pl_gap *q = &cs->gaps[cs->gap_list[x->gap_off + i]];
			if (pl_asm_evict(&pa, q->a, q->buf))
				goto out;
			if (q->boundary)
				pa.boundary[q->buf] = 1;
		}
		if (x->at >= 0)
			order[n++] = j;
	}
	/* Rebuilds at one position run in the order of the ops they end with,
	 * so one that reads a buffer another rebuilds comes after it. */
	qsort_r(order, n, sizeof(int32_t), cmp_rebuild, (void *)cs);
	for (int32_t i = 0; i < n; i++) {
		const struct pl_cand *x = &cs->c[order[i]];
		for (uint32_t k = 0; k < x->nsteps; k++)
			if (pl_asm_step(&pa, x->at, cs->steps[x->step_off + k].kind,
			                cs->steps[x->step_off + k].arg))
				goto out;
	}
	p = pl_asm_finish(&pa);
	if (p)
		p->offload_gbps = cs->offload_gbps;
out:
	pl_asm_free(&pa);
	free(order);
	return p;
}

/* Applies (sign -1) or withdraws (sign +1) candidate j's effect on the curve. */
void pl_sel_apply(struct pl_segtree *t, const struct pl_cands *cs, int32_t j, int sign)
{
	const struct pl_cand *x = &cs->c[j];
	for (uint32_t r = 0; r < x->nranges; r++) {
		const struct pl_range *rg = &cs->ranges[x->range_off + r];
		pl_st_add(t, rg->lo, rg->hi, sign * rg->bytes);
	}
	if (x->at >= 0)
		pl_st_add(t, x->at, x->at, -sign * x->transient);
}

/* After applying candidate j: whether what it adds (transients at its
 * rebuild, stashes held until then) puts a point over the budget. */
int pl_cand_overshoots(struct pl_segtree *t, const struct pl_cands *cs, int32_t j, int64_t budget)
{
	const struct pl_cand *x = &cs->c[j];
	if (x->at >= 0 && x->transient > 0 && pl_st_max(t, x->at, x->at) > budget)
		return 1;
	for (uint32_t r = 0; r < x->nranges; r++) {
		const struct pl_range *rg = &cs->ranges[x->range_off + r];
		if (rg->bytes < 0 && pl_st_max(t, rg->lo, rg->hi) > budget)
			return 1;
	}
	return 0;
}

/* Drops chosen candidates, costliest per byte first, while the curve
 * stays within the budget without them. */
void pl_sel_prune(struct pl_selection *s, struct pl_segtree *t, const struct pl_cands *cs,
                  struct pl_ids order, int64_t budget)
{
	for (int32_t i = order.n - 1; i >= 0; i--) {
		int32_t j = order.id[i];
		if (!s->chosen[j] || cs->c[j].cost == 0)
			continue;
		pl_sel_apply(t, cs, j, +1);
		const struct pl_cand *x = &cs->c[j];
		int ok = 1;
		for (uint32_t r = 0; r < x->nranges && ok; r++) {
			const struct pl_range *rg = &cs->ranges[x->range_off + r];
			ok = pl_st_max(t, rg->lo, rg->hi) <= budget;
		}
		if (ok)
			pl_sel_drop(s, cs, j);
		else
			pl_sel_apply(t, cs, j, -1);
	}
}

int64_t pl_cand_bytes(const struct pl_cands *cs, int32_t j)
{
	const struct pl_cand *x = &cs->c[j];
	int64_t b = 0;
	for (uint32_t r = 0; r < x->nranges; r++)
		b += cs->ranges[x->range_off + r].bytes;
	return b;
}

int64_t pl_forbid_bytes(const struct pl_cands *cs, int32_t j)
{
	const struct pl_cand *x = &cs->c[j];
	int64_t b = 0;
	for (uint32_t i = 0; i < x->nforbid; i++) {
		const struct pl_gap *q = &cs->gaps[cs->forbid_list[x->forbid_off + i]];
		b += q->bytes;
	}
	return b;
}

/* Upper bound of the bytes all candidates together may add at each
 * position: every transient and every stash. */
void pl_added_bytes(const struct pl_graph *g, const struct pl_cands *cs, int64_t *add)
{
	int64_t acc = 0;
	memset(add, 0, sizeof(int64_t) * g->nops);
	for (int32_t j = 0; j < cs->ncands; j++) {
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t r = 0; r < x->nranges; r++) {
			const struct pl_range *rg = &cs->ranges[x->range_off + r];
			if (rg->bytes < 0) {
				add[rg->lo] -= rg->bytes;
				if (rg->hi + 1 < g->nops)
					add[rg->hi + 1] += rg->bytes;
			}
		}
	}
	for (int32_t p = 0; p < g->nops; p++) {
		acc += add[p];
		add[p] = acc;
	}
	for (int32_t j = 0; j < cs->ncands; j++)
		if (cs->c[j].at >= 0)
			add[cs->c[j].at] += cs->c[j].transient;
}

/* Candidates that can ever lower a point over the budget: some position
 * of their ranges exceeds it even with every transient added there.  The
 * others are left out of the heuristics' loops.  (over[p]: positions
 * before p that exceed it, so a range holds one when the count grows.) */
int32_t pl_useful(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, int32_t *out)
{
	int64_t *u = malloc(sizeof(int64_t) * g->nops);
	int32_t *over = malloc(sizeof(int32_t) * ((size_t)g->nops + 1));
	if (!u || !over) {
		free(u);
		free(over);
		return -1;
	}
	pl_added_bytes(g, cs, u);
	over[0] = 0;
	for (int32_t p = 0; p < g->nops; p++)
		over[p + 1] = over[p] + (u[p] + g->live[p] > budget);
	free(u);
	int32_t n = 0;
	for (int32_t j = 0; j < cs->ncands; j++) {
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t r = 0; r < x->nranges; r++) {
			const struct pl_range *rg = &cs->ranges[x->range_off + r];
			int32_t lo = rg->lo < 0 ? 0 : rg->lo,
			        hi = rg->hi < g->nops ? rg->hi : g->nops - 1;
			if (rg->bytes > 0 && lo <= hi && over[hi + 1] > over[lo]) {
				out[n++] = j;
				break;
			}
		}
	}
	free(over);
	return n;
}
