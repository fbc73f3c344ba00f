/*
 * offload.c — the third choice for a buffer version beside keep and
 * recompute: copy it to page-locked host memory after its last use, drop
 * the device copy once the copy is over, and prefetch it back early
 * enough that the copy hides behind compute.
 *
 * One candidate per idle gap and window size.  Times come from the
 * profiled op durations on one compute stream: the copy out starts when
 * the last use ends (op a + 1 starts) and takes pl_copy_ns at the engines'
 * bandwidth; the device copy is evicted after the first op r by whose end
 * a window of f copy times has passed; the prefetch starts before the
 * latest op q from whose start f copy times pass before the next use c.
 * Memory is saved from r + 1 to q - 1 (the prefetch's destination is
 * mapped from q on).  f = 1 saves the most; f = 2 and 4 leave the engine
 * room for other copies (it is busy 1/f of the window).  Copies on one
 * engine run one after another, so a selection may load each engine at
 * most 1 at every position (pl_eng_*: the greedy rule and the ILP both
 * keep to it); the evaluator then times the plan exactly, and whatever a
 * copy still sticks out costs the stall it causes.  A copy that cannot
 * hide in its gap at all gives no candidate: that buffer is recomputed or
 * kept.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int pl_eng_init(struct pl_engines *e, int32_t nops)
{
	e->nops = nops;
	e->load[0] = calloc((size_t)nops + 1, sizeof(double));
	e->load[1] = calloc((size_t)nops + 1, sizeof(double));
	if (!e->load[0] || !e->load[1]) {
		pl_eng_free(e);
		return -1;
	}
	return 0;
}

void pl_eng_free(struct pl_engines *e)
{
	free(e->load[0]);
	free(e->load[1]);
	e->load[0] = e->load[1] = NULL;
}

int pl_eng_fits(const struct pl_engines *e, const struct pl_cands *cs, int32_t j)
{
	const struct pl_cand *x = &cs->c[j];
	if (!x->offload)
		return 1;
	for (int d = 0; d < 2; d++)
		for (int32_t p = x->eng_lo[d]; p <= x->eng_hi[d]; p++)
			if (e->load[d][p] + x->share[d] > 1.0 + 1e-9)
				return 0;
	return 1;
}

void pl_eng_apply(struct pl_engines *e, const struct pl_cands *cs, int32_t j, int sign)
{
	const struct pl_cand *x = &cs->c[j];
	if (!x->offload)
		return;
	for (int d = 0; d < 2; d++)
		for (int32_t p = x->eng_lo[d]; p <= x->eng_hi[d]; p++)
			e->load[d][p] += sign * x->share[d];
}

int pl_offload_build(const struct pl_graph *g, struct cbuild *cb, double gbps)
{
	struct pl_cands *cs = cb->cs;
	int64_t *start = malloc(sizeof(int64_t) * ((size_t)g->nops + 1));
	if (!start)
		return -1;
	start[0] = 0;
	for (int32_t p = 0; p < g->nops; p++)
		start[p + 1] = start[p] + g->ops[p].duration_ns;
	int32_t ngaps = cs->ngaps;
	for (int32_t q = 0; q < ngaps; q++) {
		const struct pl_gap *gp = &cs->gaps[q];
		const struct pl_buffer *bf = &g->bufs[gp->buf];
		/* Only content written inside the iteration and needed again. */
		/* (gp->bytes: its own whole chunks and its share of those it
		 * shares, as the other candidates count it; a region with no
		 * whole chunk frees shared ones when its neighbours are out) */
		if (gp->dead || gp->boundary || gp->ver < 0 || bf->small || gp->bytes <= 0)
			continue;
		int64_t copy = pl_copy_ns(bf->size, gbps);
		int64_t prev_saved = -1;
		for (int f = 1; f <= 4; f *= 2) {
			int64_t window = copy * f;
			/* first r >= a+1 ending at least `window` after a+1 starts */
			int32_t r = gp->a + 1;
			while (r < gp->c && start[r + 1] - start[gp->a + 1] < window)
				r++;
			/* last q <= c-1 starting at least `window` before c */
			int32_t fq = gp->c - 1;
			while (fq > r && start[gp->c] - start[fq] < window)
				fq--;
			if (r >= gp->c || fq <= r + 1 || start[gp->c] - start[fq] < window)
				break;
			int64_t saved = fq - 1 - r;
			if (saved == prev_saved)
				continue;
			prev_saved = saved;
			struct pl_cand proto = {.at = -1, .order_key = -1, .offload = 1};
			proto.evict_at = r;
			proto.fetch_at = fq;
			proto.eng_lo[0] = gp->a + 1;
			proto.eng_hi[0] = r;
			proto.eng_lo[1] = fq;
			proto.eng_hi[1] = gp->c - 1;
			int64_t tout = start[r + 1] - start[gp->a + 1],
			        tin = start[gp->c] - start[fq];
			proto.share[0] = tout > 0 ? (double)copy / (double)tout : 1.0;
			proto.share[1] = tin > 0 ? (double)copy / (double)tin : 1.0;
			struct pl_range rg = {r + 1, fq - 1, gp->bytes};
			proto.nranges = proto.ngaps = 1;
			if (pl_cands_add(cb, &proto, &rg, &q, NULL) < 0) {
				free(start);
				return -1;
			}
		}
	}
	free(start);
	return 0;
}

/* The plan steps of a chosen offload candidate (selection.c). */
int pl_offload_steps(struct pl_asm *pa, const struct pl_cands *cs, int32_t j)
{
	const struct pl_cand *x = &cs->c[j];
	const struct pl_gap *gp = &cs->gaps[cs->gap_list[x->gap_off]];
	return pl_asm_step(pa, gp->a + 1, PL_STEP_OFFLOAD, gp->buf) ||
	       pl_asm_evict(pa, x->evict_at, gp->buf) ||
	       pl_asm_step(pa, x->fetch_at, PL_STEP_PREFETCH, gp->buf) ||
	       pl_asm_step(pa, gp->c, PL_STEP_AWAIT, gp->buf);
}
