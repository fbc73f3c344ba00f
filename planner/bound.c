/*
 * bound.c — what no plan can beat, whichever planner makes it: the
 * lowest peak any plan reaches and a lower bound of the recompute cost of
 * any plan within a budget.  The gap every planner reports is to this
 * bound, so it means the same whichever planner produced the plan.
 *
 * At a position p, a plan keeps mapped what op p references and what
 * holds content nothing can rebuild (content from before the iteration
 * that is read later: a stash of it costs as much as keeping it).  Every
 * other buffer may be unmapped at p: for free when its content is never
 * read again, else at the price of replaying the op that wrote that
 * content at least once after p (one replay gives back every buffer the
 * op wrote).  The cheapest way to bring p under the budget is at most
 * what any plan pays, and so is the largest of these over positions.
 * This is a fractional knapsack: cheap, valid for every plan the
 * evaluator accepts, and weak where rebuilds need long chains (low
 * budgets); the gap is then large, honestly.
 */
#include "cands_internal.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

/* Positions examined: the fullest and an even spread of the others over
 * the budget. */
#define BOUND_POSITIONS 48

struct item {
	double ratio; /* ns per byte */
	int64_t bytes, cost;
	int32_t seq; /* ties go in the order the items were listed */
};

static int item_before(const struct item *x, const struct item *y)
{
	return x->ratio < y->ratio || (x->ratio == y->ratio && x->seq < y->seq);
}

/* The fractional knapsack: the cheapest cost of `over` bytes, items
 * taken whole in ascending ratio and the last one in part.  Positions
 * have tens of thousands of items and few are taken whole before the
 * part, so instead of sorting them all this partitions around a pivot
 * and goes on into the side that holds the last item taken (quickselect,
 * linear on average; the pivot, from a fixed sequence, only sets the
 * work, never the answer).  Whole items add up exactly in integers: the
 * same figure as summing them one by one in doubles, since they stay
 * below 2^53 (PL_MAX_AMOUNT). */
static double knapsack(struct item *it, int32_t n, int64_t over, double *rate)
{
	int64_t whole = 0;
	int32_t lo = 0, hi = n;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	while (lo < hi && over > 0) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		int32_t k = lo + (int32_t)((seed >> 33) % (uint64_t)(hi - lo));
		struct item pivot = it[k], tmp;
		it[k] = it[hi - 1];
		it[hi - 1] = pivot;
		int32_t m = lo;
		int64_t bytes = 0, cost = 0;
		for (int32_t i = lo; i < hi - 1; i++)
			if (item_before(&it[i], &pivot)) {
				bytes += it[i].bytes;
				cost += it[i].cost;
				tmp = it[m];
				it[m++] = it[i];
				it[i] = tmp;
			}
		it[hi - 1] = it[m];
		it[m] = pivot;
		if (bytes >= over) { /* the last one taken is before the pivot */
			hi = m;
			continue;
		}
		whole += cost;
		over -= bytes;
		*rate = pivot.ratio;
		if (pivot.bytes > over)
			return (double)whole +
			       (double)pivot.cost * (double)over / (double)pivot.bytes;
		whole += pivot.cost;
		over -= pivot.bytes;
		lo = m + 1;
	}
	return (double)whole;
}

static int cmp_desc(const void *a, const void *b, void *arg)
{
	const int64_t *live = arg;
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	if (live[x] != live[y])
		return live[x] > live[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* What a buffer's content is worth at a position, by its next use (the
 * same for every position up to it): -1 free to drop, -2 must stay,
 * else the op whose replay gives it back.  next[k]: when uses[k] of
 * its buffer is the first use at or after p (and not p itself);
 * last[b]: when none is.  Worked out once, not at each of the
 * positions examined; so is the list of buffers with bytes, in buffer
 * order, holding only what the positions ask of them (each position
 * reads it all). */
struct span {
	int32_t buf, lo, hi; /* alive at lo .. hi - 1 */
	int32_t stays;       /* small or excluded: never dropped */
	int64_t rounded;
};

struct worth {
	int32_t *next, *last;
	struct span *span;
	int32_t nspan;
};

static int worth_build(const struct pl_graph *g, const struct cindex *ix, struct worth *w)
{
	uint32_t nuses = ix->use_off[g->nbufs];
	w->next = malloc(sizeof(int32_t) * (nuses ? nuses : 1));
	w->last = malloc(sizeof(int32_t) * (g->nbufs ? (size_t)g->nbufs : 1));
	w->span = malloc(sizeof(*w->span) * (g->nbufs ? (size_t)g->nbufs : 1));
	if (!w->next || !w->last || !w->span)
		return -1;
	w->nspan = 0;
	for (int32_t b = 0; b < g->nbufs; b++) {
		const struct pl_buffer *bf = &g->bufs[b];
		if (bf->rounded > 0)
			w->span[w->nspan++] = (struct span){b, bf->alloc_at < 0 ? 0 : bf->alloc_at,
			                                    bf->free_at < 0 ? g->nops : bf->free_at,
			                                    bf->small || bf->excluded, bf->rounded};
		/* never used again: only content that outlives the iteration
		 * matters (every writer, a use, is before p) */
		int32_t v = ix->wr_off[b + 1] > ix->wr_off[b] ? ix->writers[ix->wr_off[b + 1] - 1]
		                                              : pl_ver_initial(bf);
		int32_t after = bf->free_at >= 0 || bf->dead_across ? -1
		                : v == PL_VER_PRE                   ? -2
		                : v >= 0                            ? v
		                                                    : -1;
		w->last[b] = after;
		for (uint32_t k = ix->use_off[b + 1]; k-- > ix->use_off[b];) {
			int32_t ver = 0;
			uint32_t f = pl_ref_flags(g, ix->uses[k], b, &ver);
			if (f & PL_REF_READ)
				after = ver == PL_VER_PRE ? -2 : ver >= 0 ? ver : -1;
			else if (f & PL_REF_WRITE)
				after = -1; /* overwritten whole before anyone reads it */
			w->next[k] = after;
		}
	}
	return 0;
}

static void worth_free(struct worth *w)
{
	free(w->next);
	free(w->last);
	free(w->span);
}

/* The content b holds at p (as struct worth says). */
static int32_t content_at(const struct cindex *ix, const struct worth *w, int32_t b, int32_t p)
{
	uint32_t lo = ix->use_off[b], hi = ix->use_off[b + 1];
	while (lo < hi) { /* first use >= p */
		uint32_t mid = lo + (hi - lo) / 2;
		if (ix->uses[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ix->use_off[b + 1])
		return w->last[b];
	return ix->uses[lo] == p ? -2 /* op p references it */ : w->next[lo];
}

/* Cheapest replays bringing position p under the budget; -1 when even
 * dropping all that may go leaves it over (*fixed: what must stay).
 * When that cost cannot exceed `beat` (the largest found so far; INT64_MAX
 * when nothing matters any more), beat: the knapsack is then not worked
 * out. */
static int64_t at_position(const struct pl_graph *g, const struct cindex *ix,
                           const struct worth *wt, int32_t p, int64_t budget, int64_t beat,
                           struct item *items, int64_t *per_op, uint32_t *stamp, uint32_t epoch,
                           int32_t *ops, int64_t *fixed, double *rate)
{
	int64_t keep = g->const_bytes, droppable = 0;
	int32_t nops = 0;
	for (int32_t i = 0; i < wt->nspan; i++) {
		const struct span *sp = &wt->span[i];
		if (p < sp->lo || p >= sp->hi)
			continue;
		int32_t w = sp->stays ? -2 : content_at(ix, wt, sp->buf, p);
		if (w == -2) {
			keep += sp->rounded;
			continue;
		}
		droppable += sp->rounded;
		if (w < 0)
			continue;
		if (stamp[w] != epoch) {
			stamp[w] = epoch;
			per_op[w] = 0;
			ops[nops++] = w;
		}
		per_op[w] += sp->rounded;
	}
	*fixed = keep;
	if (keep > budget)
		return -1;
	int64_t over = keep + droppable - budget;
	if (over <= 0)
		return 0;
	/* what is free to drop goes first */
	int64_t paid_bytes = droppable;
	for (int32_t i = 0; i < nops; i++)
		paid_bytes -= per_op[ops[i]];
	over -= paid_bytes;
	if (over <= 0 || beat == INT64_MAX)
		return over <= 0 ? 0 : beat;
	double top = 0;
	for (int32_t i = 0; i < nops; i++) {
		int64_t c = g->ops[ops[i]].duration_ns;
		items[i] = (struct item){(double)c / (double)per_op[ops[i]], per_op[ops[i]], c, i};
		top = items[i].ratio > top ? items[i].ratio : top;
	}
	/* every byte at the highest rate costs at least as much (the margin
	 * covers the knapsack's rounding, a few ulps) */
	if (top * (double)over * (1 + 1e-9) + 1 <= (double)beat)
		return beat;
	/* rounded down: still a bound */
	return (int64_t)knapsack(items, nops, over, rate);
}

/* ---- the covering relaxation over every position, and its dual ----
 *
 * A "gap" here is a stretch of one buffer between a real use a and the
 * next real read r of the content op w wrote: the buffer may be unmapped
 * at positions a < p < r only if w is replayed at some q with p < q <= r
 * (steps run before op q; a replay before p is undone by the unmapping).
 * Content needed when the iteration ends is a gap up to r = n - 1: the
 * last op's position is never covered (no steps follow it).  A replay of
 * w at q gives back every buffer w writes: for each of w's gaps with
 * a < q <= r, the positions a < p < q.
 *
 * Relaxation: at every position p, the bytes not covered must fit the
 * budget, i.e. the covered bytes reach excess[p]; cost: the replays'
 * durations.  For prices lam[p] >= 0 (ns per byte) on those rows,
 *   L(lam) = sum_p lam[p] excess[p] - sum_w max_Q (value_w(Q) - cost_w |Q|)
 * is at most the cost of every plan (weak duality: a plan's replays are
 * a Q for each w whose covered bytes meet every row).  value_w(Q) sums
 * lam[p] x bytes over the positions Q covers; the best Q of each op is a
 * dynamic program over its candidate positions (the r of its gaps: any
 * other q covers less than the next one).  Where that program would be
 * long (ops writing many buffers read many times) each buffer gets a
 * share of the op's cost in proportion to its bytes, separately: the
 * sum of the parts' best is at least the whole's best, so L only drops.
 * Everything the program overestimates (value counted twice where the
 * exact overlap is not worked out) also lowers L: it stays a bound.
 * lam is improved by projected subgradient steps from the price the
 * best single position's knapsack gives (lam at that one position: the
 * knapsack's own bound), and the largest L seen is the answer. */

/* Candidates examined exactly before a candidate, in an op's program;
 * older ones count without their overlap (an overestimate of value). */
#define DUAL_WINDOW 32
/* An op whose program would cost more (candidates x gaps) is split into
 * one part per buffer. */
#define DUAL_EXACT 4096

struct cgap {
	int32_t a, r; /* a replay at a < q <= r covers a < p < q */
	double bytes;
};

/* An op, or one buffer's part of it: its candidates cand[off .. off + n). */
struct vop {
	double cost;
	uint32_t off, n;
};

struct cover {
	int32_t n;
	double *excess; /* per position: covered bytes needed (<= 0: none) */
	int64_t keep_max;
	int32_t nvop, ngap;
	struct vop *vop;
	struct cgap *gap;
	int32_t *cand;     /* positions, ascending within a vop */
	uint32_t *act_off; /* per candidate: the gaps it covers, act[act_off[i] ..] */
	int32_t *act;
	uint32_t ncand, nact;
	size_t cap_vop, cap_gap, cap_cand, cap_act;
	/* scratch of an evaluation */
	double *lam, *pre, *freed, *f, *pm;
	int32_t *from, *pmarg;
};

/* A gap as found, before grouping by op. */
struct rawgap {
	int32_t w, buf, a, r;
};

static void cover_free(struct cover *c)
{
	free(c->excess);
	free(c->vop);
	free(c->gap);
	free(c->cand);
	free(c->act_off);
	free(c->act);
	free(c->lam);
	free(c->pre);
	free(c->freed);
	free(c->f);
	free(c->pm);
	free(c->from);
	free(c->pmarg);
}

/* Adds bytes to positions lo .. hi - 1 of a difference array. */
static void range_add(int64_t *d, int32_t lo, int32_t hi, int64_t bytes)
{
	if (lo < hi) {
		d[lo] += bytes;
		d[hi] -= bytes;
	}
}

static int add_cand(struct cover *c, int32_t q)
{
	if (PL_GROW(c->cand, c->ncand, c->cap_cand))
		return -1;
	c->cand[c->ncand++] = q;
	return 0;
}

static int add_act(struct cover *c, int32_t gid)
{
	if (PL_GROW(c->act, c->nact, c->cap_act))
		return -1;
	c->act[c->nact++] = gid;
	return 0;
}

/* act_off has one entry per candidate plus one: grown alongside. */
static int close_cand(struct cover *c, size_t *cap_off)
{
	if (PL_GROW(c->act_off, c->ncand, *cap_off))
		return -1;
	c->act_off[c->ncand] = c->nact;
	return 0;
}

static int add_vop(struct cover *c, double cost, uint32_t off)
{
	if (PL_GROW(c->vop, c->nvop, c->cap_vop))
		return -1;
	c->vop[c->nvop++] = (struct vop){cost, off, c->ncand - off};
	return 0;
}

/* One op's gaps rg[0 .. k) (by buffer, then position) as programs. */
static int cover_op(struct cover *c, const struct pl_graph *g, const struct rawgap *rg, int32_t k,
                    size_t *cap_off)
{
	int32_t nbuf = 1;
	for (int32_t i = 1; i < k; i++)
		nbuf += rg[i].buf != rg[i - 1].buf;
	double cost = (double)g->ops[rg[0].w].duration_ns;
	uint32_t first = (uint32_t)c->ngap;
	for (int32_t i = 0; i < k; i++) {
		if (PL_GROW(c->gap, c->ngap, c->cap_gap))
			return -1;
		c->gap[c->ngap++] =
		    (struct cgap){rg[i].a, rg[i].r, (double)g->bufs[rg[i].buf].rounded};
	}
	if (nbuf == 1 || (int64_t)k * k > DUAL_EXACT) {
		/* each buffer alone: its gaps are disjoint, one candidate each */
		double total = 0;
		for (int32_t i = 0; i < k; i++)
			if (i == 0 || rg[i].buf != rg[i - 1].buf)
				total += (double)g->bufs[rg[i].buf].rounded;
		for (int32_t i = 0; i < k;) {
			uint32_t off = c->ncand;
			double share = nbuf == 1 ? cost
			                         : cost * (double)g->bufs[rg[i].buf].rounded / total;
			int32_t b = rg[i].buf;
			for (; i < k && rg[i].buf == b; i++)
				if (add_cand(c, rg[i].r) || add_act(c, (int32_t)first + i) ||
				    close_cand(c, cap_off))
					return -1;
			if (add_vop(c, share, off))
				return -1;
		}
		return 0;
	}
	/* the whole op: candidates at every gap's end, each covering the gaps
	 * around it */
	int32_t *q = malloc(sizeof(int32_t) * (size_t)k);
	if (!q)
		return -1;
	for (int32_t i = 0; i < k; i++)
		q[i] = rg[i].r;
	pl_sort_i32(q, k);
	uint32_t off = c->ncand;
	int rc = 0;
	for (int32_t i = 0; i < k && !rc; i++) {
		if (i > 0 && q[i] == q[i - 1])
			continue;
		rc = add_cand(c, q[i]);
		for (int32_t j = 0; j < k && !rc; j++)
			if (rg[j].a < q[i] && q[i] <= rg[j].r)
				rc = add_act(c, (int32_t)first + j);
		rc = rc || close_cand(c, cap_off);
	}
	free(q);
	return rc || add_vop(c, cost, off);
}

/* Sorts the gaps by op (stably: by buffer, then position, within one). */
static struct rawgap *by_op(const struct pl_graph *g, struct rawgap *rg, int32_t n)
{
	uint32_t *cnt = calloc((size_t)g->nops + 1, sizeof(uint32_t));
	struct rawgap *out = malloc(sizeof(*out) * (n ? (size_t)n : 1));
	if (!cnt || !out) {
		free(cnt);
		free(out);
		return NULL;
	}
	for (int32_t i = 0; i < n; i++)
		cnt[rg[i].w + 1]++;
	for (int32_t w = 0; w < g->nops; w++)
		cnt[w + 1] += cnt[w];
	for (int32_t i = 0; i < n; i++)
		out[cnt[rg[i].w]++] = rg[i];
	free(cnt);
	return out;
}

/* What every position must keep, what it may give back for free, and the
 * gaps, from the buffers' uses (struct worth's verdicts).  With offload,
 * anything not referenced may go to the host at no recompute cost. */
static int cover_build(const struct pl_graph *g, const struct cindex *ix, const struct worth *wt,
                       int64_t budget, int offload, struct cover *c)
{
	int32_t n = g->nops;
	int64_t *keep = calloc((size_t)n + 1, sizeof(int64_t)),
	        *cov = calloc((size_t)n + 1, sizeof(int64_t));
	struct rawgap *rg = NULL, *sorted = NULL;
	size_t cap_rg = 0, cap_off = 0;
	int32_t nrg = 0;
	int rc = -1;
	c->n = n;
	c->excess = malloc(sizeof(double) * (n ? (size_t)n : 1));
	if (!keep || !cov || !c->excess)
		goto out;
	for (int32_t i = 0; i < wt->nspan; i++) {
		const struct span *sp = &wt->span[i];
		int32_t b = sp->buf;
		if (sp->stays) {
			range_add(keep, sp->lo, sp->hi, sp->rounded);
			continue;
		}
		int32_t prev = sp->lo - 1, real = -1;
		for (uint32_t k = ix->use_off[b]; k <= ix->use_off[b + 1]; k++) {
			int last = k == ix->use_off[b + 1];
			int32_t u = last ? sp->hi : ix->uses[k];
			int32_t w = last ? wt->last[b] : wt->next[k];
			if (!last && u == prev)
				continue; /* one op referencing it twice */
			int32_t end = u; /* the stretch prev < p < end */
			int coverable = !offload && w >= 0 && g->ops[w].replayable && real >= 0;
			if (coverable && last) {
				/* needed when the iteration ends: no steps follow the
				 * last op, so its position keeps it */
				end = n - 1;
				range_add(keep, end > prev ? end : prev + 1, u, sp->rounded);
			}
			if (coverable)
				range_add(cov, prev + 1, end, sp->rounded);
			else if (!offload && (w == -2 || w >= 0))
				range_add(keep, prev + 1, u, sp->rounded);
			int32_t ver = 0;
			uint32_t f = last ? 0 : pl_ref_flags(g, u, b, &ver);
			if (coverable && (last || (f & PL_REF_READ)) && end > real + 1) {
				if (PL_GROW(rg, nrg, cap_rg))
					goto out;
				rg[nrg++] = (struct rawgap){w, b, real, end};
			}
			if (last)
				break;
			range_add(keep, u, u + 1, sp->rounded);
			if (f & (PL_REF_READ | PL_REF_WRITE))
				real = u;
			prev = u;
		}
	}
	int64_t k = g->const_bytes, v = 0;
	c->keep_max = 0;
	for (int32_t p = 0; p < n; p++) {
		k += keep[p];
		v += cov[p];
		c->keep_max = k > c->keep_max ? k : c->keep_max;
		c->excess[p] = (double)(k + v - budget);
	}
	sorted = by_op(g, rg, nrg);
	if (!sorted)
		goto out;
	if (close_cand(c, &cap_off)) /* act_off[0] */
		goto out;
	for (int32_t i = 0; i < nrg;) {
		int32_t j = i;
		while (j < nrg && sorted[j].w == sorted[i].w)
			j++;
		if (cover_op(c, g, sorted + i, j - i, &cap_off))
			goto out;
		i = j;
	}
	size_t nc = c->ncand ? c->ncand : 1;
	c->lam = calloc((size_t)n + 1, sizeof(double));
	c->pre = malloc(sizeof(double) * ((size_t)n + 1));
	c->freed = malloc(sizeof(double) * ((size_t)n + 1));
	c->f = malloc(sizeof(double) * nc);
	c->pm = malloc(sizeof(double) * nc);
	c->from = malloc(sizeof(int32_t) * nc);
	c->pmarg = malloc(sizeof(int32_t) * nc);
	if (c->lam && c->pre && c->freed && c->f && c->pm && c->from && c->pmarg)
		rc = 0;
out:
	free(keep);
	free(cov);
	free(rg);
	free(sorted);
	return rc;
}

/* L(lam), and in c->freed the bytes the best replays cover at each
 * position (for the subgradient). */
static double cover_eval(struct cover *c)
{
	int32_t n = c->n;
	double L = 0;
	c->pre[0] = 0;
	for (int32_t p = 0; p < n; p++) {
		c->pre[p + 1] = c->pre[p] + c->lam[p];
		L += c->lam[p] * c->excess[p];
		c->freed[p] = 0;
	}
	c->freed[n] = 0;
	const double *pre = c->pre;
	for (int32_t v = 0; v < c->nvop; v++) {
		const struct vop *op = &c->vop[v];
		double *f = c->f + op->off, *pm = c->pm + op->off;
		int32_t *from = c->from + op->off, *pmarg = c->pmarg + op->off;
		const int32_t *cand = c->cand + op->off;
		for (uint32_t i = 0; i < op->n; i++) {
			int32_t q = cand[i], lo = q;
			const uint32_t a0 = c->act_off[op->off + i], a1 = c->act_off[op->off + i + 1];
			double gain = 0;
			for (uint32_t x = a0; x < a1; x++) {
				const struct cgap *gp = &c->gap[c->act[x]];
				gain += gp->bytes * (pre[q] - pre[gp->a + 1]);
				lo = gp->a + 1 < lo ? gp->a + 1 : lo;
			}
			double pred = 0;
			int32_t arg = -1, k = (int32_t)i - 1;
			/* the candidates just before, inside these gaps: what they
			 * covered already is not covered again */
			for (; k >= 0 && cand[k] > lo && (int32_t)i - k <= DUAL_WINDOW; k--) {
				double ov = 0;
				for (uint32_t x = a0; x < a1; x++) {
					const struct cgap *gp = &c->gap[c->act[x]];
					if (cand[k] > gp->a + 1)
						ov += gp->bytes * (pre[cand[k]] - pre[gp->a + 1]);
				}
				if (f[k] - ov > pred) {
					pred = f[k] - ov;
					arg = k;
				}
			}
			if (k >= 0 && pm[k] > pred) {
				pred = pm[k];
				arg = pmarg[k];
			}
			f[i] = gain - op->cost + pred;
			from[i] = arg;
			if (i == 0 || f[i] > pm[i - 1]) {
				pm[i] = f[i];
				pmarg[i] = (int32_t)i;
			} else {
				pm[i] = pm[i - 1];
				pmarg[i] = pmarg[i - 1];
			}
		}
		if (op->n == 0 || pm[op->n - 1] <= 0)
			continue;
		L -= pm[op->n - 1];
		for (int32_t i = pmarg[op->n - 1]; i >= 0; i = from[i]) {
			int32_t k = from[i];
			for (uint32_t x = c->act_off[op->off + i]; x < c->act_off[op->off + i + 1];
			     x++) {
				const struct cgap *gp = &c->gap[c->act[x]];
				int32_t lo = gp->a + 1;
				if (k >= 0 && cand[k] > lo)
					lo = cand[k];
				if (lo < cand[i]) {
					c->freed[lo] += gp->bytes;
					c->freed[cand[i]] -= gp->bytes;
				}
			}
		}
	}
	double run = 0;
	for (int32_t p = 0; p < n; p++) {
		run += c->freed[p];
		c->freed[p] = run;
	}
	return L;
}

/* Projected subgradient ascent from lam = rate at position p0; the
 * largest L seen.  Steps aim a little above the best so far, shrinking
 * when they stop helping; the number of steps is set by the size of the
 * model, so the answer is the same on every machine. */
static double cover_ascend(struct cover *c, int32_t p0, double rate)
{
	int32_t n = c->n;
	for (int32_t p = 0; p < n; p++)
		c->lam[p] = 0;
	if (p0 >= 0)
		c->lam[p0] = rate;
	double best = cover_eval(c), theta = 1.0;
	if (getenv("BOUND_DEBUG"))
		fprintf(stderr, "init p0 %d rate %g L %.0f nvop %d ngap %d ncand %u nact %u\n", p0, rate, best, c->nvop, c->ngap, c->ncand, c->nact);
	double work = (double)n + (double)c->nact * 2 + 1;
	int32_t iters = (int32_t)(4e7 / work), stale = 0;
	iters = iters > 2000 ? 2000 : iters < 20 ? 20 : iters;
	double L = best;
	for (int32_t it = 0; it < iters; it++) {
		double norm = 0;
		for (int32_t p = 0; p < n; p++) {
			double s = c->excess[p] - c->freed[p];
			if (c->lam[p] > 0 || s > 0)
				norm += s * s;
		}
		if (norm <= 0)
			break; /* every row met exactly: lam is optimal */
		double target = best + 0.05 * (best > 0 ? best : 1) + 1;
		double t = theta * (target - L) / norm;
		for (int32_t p = 0; p < n; p++) {
			double x = c->lam[p] + t * (c->excess[p] - c->freed[p]);
			c->lam[p] = x > 0 ? x : 0;
		}
		L = cover_eval(c);
		if (getenv("BOUND_DEBUG") && (it < 10 || it % 100 == 0))
			fprintf(stderr, "it %d L %.0f best %.0f theta %g t %g norm %g\n", it, L, best, theta, t, norm);
		if (L > best * (1 + 1e-6)) {
			best = L;
			stale = 0;
		} else if (++stale >= 20) {
			theta /= 2;
			stale = 0;
		}
	}
	return best;
}

int pl_cost_bound(const struct pl_graph *g, int64_t budget, int offload, int64_t *cost_lb,
                  int64_t *peak_lb)
{
	struct cindex ix = {0};
	struct worth wt = {0};
	struct cover cv = {0};
	int32_t n = g->nops, nb = g->nbufs ? g->nbufs : 1, npos = 0, nover = 0;
	int32_t *over = malloc(sizeof(int32_t) * (size_t)n),
	        *pos = malloc(sizeof(int32_t) * 2 * BOUND_POSITIONS);
	struct item *items = malloc(sizeof(*items) * (size_t)nb);
	int64_t *per_op = malloc(sizeof(int64_t) * (size_t)n);
	uint32_t *stamp = calloc((size_t)n, sizeof(uint32_t));
	int32_t *ops = malloc(sizeof(int32_t) * (size_t)nb);
	int rc = -1;
	*cost_lb = 0;
	/* (persistent buffers go to the host like any other with offload) */
	*peak_lb = offload ? 0 : pl_graph_lower_bound(g);
	if (!over || !pos || !items || !per_op || !stamp || !ops || pl_cindex_build(g, &ix) ||
	    worth_build(g, &ix, &wt) || cover_build(g, &ix, &wt, budget, offload, &cv))
		goto out;
	if (cv.keep_max > *peak_lb)
		*peak_lb = cv.keep_max;
	if (offload) {
		/* a copy to the host frees any buffer at no recompute cost: only
		 * the peak is bounded */
		*cost_lb = *peak_lb > budget ? -1 : 0;
		rc = 0;
		goto out;
	}
	for (int32_t p = 0; p < n; p++)
		if (g->live[p] > budget)
			over[nover++] = p;
	/* an even spread, then the fullest */
	for (int32_t i = 0; i < BOUND_POSITIONS && i < nover; i++)
		pos[npos++] =
		    over[(int64_t)i * nover / (nover < BOUND_POSITIONS ? nover : BOUND_POSITIONS)];
	qsort_r(over, nover, sizeof(int32_t), cmp_desc, g->live);
	int32_t nspread = npos, p0 = -1;
	double rate = 0;
	for (int32_t i = 0; i < BOUND_POSITIONS && i < nover; i++) {
		int seen = 0; /* (one of the spread may be among the fullest) */
		for (int32_t k = 0; k < BOUND_POSITIONS && k < nover && !seen; k++)
			seen = pos[k] == over[i];
		if (!seen)
			pos[npos++] = over[i];
	}
	/* the fullest first: the largest costs are likely there, and a
	 * position that cannot beat them skips its knapsack */
	for (int32_t k = 0; k < npos; k++) {
		int32_t i = (k + nspread) % npos;
		int64_t fixed;
		double r = 0;
		/* (no plan at all once a position says so: -1 stays) */
		int64_t beat = *cost_lb < 0 ? INT64_MAX : *cost_lb;
		int64_t c = at_position(g, &ix, &wt, pos[i], budget, beat, items, per_op, stamp,
		                        (uint32_t)i + 1, ops, &fixed, &r);
		if (fixed > *peak_lb)
			*peak_lb = fixed;
		if (c < 0)
			*cost_lb = -1;
		else if (*cost_lb >= 0 && c > *cost_lb) {
			*cost_lb = c;
			p0 = pos[i];
			rate = r;
		}
	}
	if (*peak_lb > budget)
		*cost_lb = -1; /* no plan meets it */
	if (*cost_lb >= 0 && p0 >= 0) {
		/* a margin for the sums' rounding (a few ulps of each term) */
		double L = cover_ascend(&cv, p0, rate);
		int64_t d = (int64_t)(L * (1 - 1e-9)) - 1;
		if (d > *cost_lb)
			*cost_lb = d;
	}
	rc = 0;
out:
	pl_cindex_free(&ix);
	worth_free(&wt);
	cover_free(&cv);
	free(over);
	free(pos);
	free(items);
	free(per_op);
	free(stamp);
	free(ops);
	return rc;
}
