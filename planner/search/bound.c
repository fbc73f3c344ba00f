/*
 * bound.c — what no plan can beat, whichever planner makes it: the
 * lowest peak any plan reaches and a lower bound of the recompute cost of
 * any plan within a budget.  The gap every planner reports is to this
 * bound, so it means the same whichever planner produced the plan.
 *
 * Why it holds, by what the evaluator (model/evaluate.c) lets a plan do.  While
 * op p runs, memory holds the constant bytes and every mapped buffer (and
 * any stash); evictions come after an op, steps (replays, maps, saves,
 * restores, stashes, releases) before it.  A buffer alive at p whose
 * content is read later (or needed when the iteration ends) is either
 * mapped at p, or stashed with that content (a stash holds at least the
 * buffer's bytes: nothing saved), or gets it back later:
 *   - by a replay of the op w that wrote it, at a position q with
 *     p < q <= its next read (a replay before p is undone by the
 *     unmapping; a save does not outlive its position's steps, since no
 *     op runs with saved copies);
 *   - or, with offload, by a prefetch of its host copy.
 * So without offload it stays mapped at p when no replay can come after p
 * (op p references it; it is small or excluded; its content is from
 * before the iteration; w cannot be replayed; p is the last position, and
 * no steps follow the last op).  Content nobody reads again is free to
 * drop (a buffer dead across the boundary included: its content there is
 * never read).  Every other buffer costs at least one replay of its
 * writer, and one replay gives back every buffer that op wrote.  The
 * cheapest replays that bring p under the budget are then a fractional
 * knapsack, at most what any plan pays; so is the largest over positions.
 * Offload frees any buffer not referenced at no recompute cost: the cost
 * bound is then 0 and only the peak is bounded (what op p references and
 * what is small or excluded stays; persistent buffers go to the host like
 * any other).  That covers parking (model/park.c): a buffer no op references is
 * kept at no position, and the shared chunks a parked region leaves are
 * not counted here at all (only buffers' own chunks are).
 *
 * Weak where rebuilds need long chains (low budgets; a replay needs its
 * inputs, which may need replays themselves): the knapsack does not see
 * them, and neither does the same relaxation over every position at once
 * (a Lagrangian over all positions would converge to its LP, which GLPK
 * solves within 2% of the best single position on the generated ResNet,
 * transformer and chain graphs: `plan_bench cover-lp FAMILY NOPS`; a
 * replay gives an activation back over its whole idle span, so one
 * position's choice is already right for the others).  The gap is then
 * large, honestly: closing it needs what a replay's inputs cost, which
 * no relaxation here sees.
 */
#include "search.h"

#include <stdlib.h>
#include <string.h>

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
static double knapsack(struct item *it, int32_t n, int64_t over)
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
	uint32_t off = ix->use_off[b], end = ix->use_off[b + 1]; /* below: first use >= p */
	uint32_t lo = off + (uint32_t)remat_search_from(ix->uses + off, end - off, remat_key_i32,
	                                                remat_key_signed(p));
	if (lo == end)
		return w->last[b];
	return ix->uses[lo] == p ? -2 /* op p references it */ : w->next[lo];
}

/* The most bytes any position keeps mapped in every plan (a lower bound
 * of every plan's peak; see the top): every position at once, by the
 * stretches between a buffer's uses. */
static int64_t kept_peak(const struct pl_graph *g, const struct cindex *ix, const struct worth *wt,
                         int offload, int64_t *keep)
{
	int32_t n = g->nops;
	memset(keep, 0, sizeof(int64_t) * ((size_t)n + 1));
	for (int32_t i = 0; i < wt->nspan; i++) {
		const struct span *sp = &wt->span[i];
		int32_t b = sp->buf, prev = sp->lo - 1;
		if (sp->stays) {
			keep[sp->lo] += sp->rounded;
			keep[sp->hi] -= sp->rounded;
			continue;
		}
		for (uint32_t k = ix->use_off[b]; k <= ix->use_off[b + 1]; k++) {
			int last = k == ix->use_off[b + 1];
			int32_t u = last ? sp->hi : ix->uses[k];
			int32_t w = last ? wt->last[b] : wt->next[k];
			/* kept: the stretch prev + 1 .. u - 1, unless its content
			 * is free to drop or a replay (a prefetch) gives it back;
			 * then only the last position, when the stretch reaches the
			 * end and holds what the iteration must end with */
			int32_t lo = prev + 1;
			if (offload || w == -1 || (w >= 0 && g->ops[w].replayable))
				lo = w >= 0 && !offload && u == n && n - 1 >= lo ? n - 1 : u;
			if (lo < u) {
				keep[lo] += sp->rounded;
				keep[u] -= sp->rounded;
			}
			if (last)
				break;
			if (u != prev) { /* (one op may reference it twice) */
				keep[u] += sp->rounded;
				keep[u + 1] -= sp->rounded;
			}
			prev = u;
		}
	}
	int64_t run = g->const_bytes, best = 0;
	for (int32_t p = 0; p < n; p++) {
		run += keep[p];
		best = run > best ? run : best;
	}
	return best;
}

/* What the bound at one position works with: the graph, its index and
 * spans, the budget, and scratch: per op the bytes a replay of it gives
 * back (valid where stamp is the position's epoch; the ops in ops[]),
 * the knapsack's items. */
struct bound {
	const struct pl_graph *g;
	struct cindex ix;
	struct worth wt;
	int64_t budget;
	struct item *items;
	int64_t *per_op;
	uint32_t *stamp;
	int32_t *ops;
	int64_t cost_lb, peak_lb; /* the bounds so far */
};

/* Cheapest replays bringing position p under the budget; -1 when even
 * dropping all that may go leaves it over (*fixed: what must stay).
 * When that cost cannot exceed `beat` (the largest found so far; INT64_MAX
 * when nothing matters any more), beat: the knapsack is then not worked
 * out.  epoch: the position's own, for the stamps. */
static int64_t at_position(struct bound *bd, int32_t p, int64_t beat, uint32_t epoch,
                           int64_t *fixed)
{
	const struct pl_graph *g = bd->g;
	const struct worth *wt = &bd->wt;
	int64_t keep = g->const_bytes, droppable = 0, budget = bd->budget, *per_op = bd->per_op;
	int32_t nops = 0, *ops = bd->ops;
	for (int32_t i = 0; i < wt->nspan; i++) {
		const struct span *sp = &wt->span[i];
		if (p < sp->lo || p >= sp->hi)
			continue;
		int32_t w = sp->stays ? -2 : content_at(&bd->ix, wt, sp->buf, p);
		if (w >= 0 && (!g->ops[w].replayable || p == g->nops - 1))
			w = -2; /* no replay gives it back */
		if (w == -2) {
			keep += sp->rounded;
			continue;
		}
		droppable += sp->rounded;
		if (w < 0)
			continue;
		if (bd->stamp[w] != epoch) {
			bd->stamp[w] = epoch;
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
		bd->items[i] =
		    (struct item){(double)c / (double)per_op[ops[i]], per_op[ops[i]], c, i};
		top = bd->items[i].ratio > top ? bd->items[i].ratio : top;
	}
	/* every byte at the highest rate costs at least as much (the margin
	 * covers the knapsack's rounding, a few ulps) */
	if (top * (double)over * (1 + 1e-9) + 1 <= (double)beat)
		return beat;
	return (int64_t)knapsack(bd->items, nops, over); /* rounded down: still a bound */
}

/* The positions over the budget the bound looks at: an even spread of
 * them, then the fullest (pos, *nspread of the spread); how many. */
static int32_t positions(const struct pl_graph *g, int64_t budget, int32_t *over, int32_t *pos,
                         int32_t *nspread)
{
	int32_t npos = 0, nover = 0;
	for (int32_t p = 0; p < g->nops; p++)
		if (g->live[p] > budget)
			over[nover++] = p;
	for (int32_t i = 0; i < BOUND_POSITIONS && i < nover; i++)
		pos[npos++] =
		    over[(int64_t)i * nover / (nover < BOUND_POSITIONS ? nover : BOUND_POSITIONS)];
	qsort_r(over, nover, sizeof(int32_t), cmp_desc, g->live);
	*nspread = npos;
	for (int32_t i = 0; i < BOUND_POSITIONS && i < nover; i++) {
		int seen = 0; /* (one of the spread may be among the fullest) */
		for (int32_t k = 0; k < BOUND_POSITIONS && k < nover && !seen; k++)
			seen = pos[k] == over[i];
		if (!seen)
			pos[npos++] = over[i];
	}
	return npos;
}

/* The cost bound over the positions, the fullest first: the largest
 * costs are likely there, and a position that cannot beat them skips its
 * knapsack. */
static void cost_over(struct bound *bd, const int32_t *pos, int32_t npos, int32_t nspread)
{
	int64_t *cost_lb = &bd->cost_lb, *peak_lb = &bd->peak_lb;
	for (int32_t k = 0; k < npos; k++) {
		int32_t i = (k + nspread) % npos;
		int64_t fixed;
		/* (no plan at all once a position says so: -1 stays) */
		int64_t beat = *cost_lb < 0 ? INT64_MAX : *cost_lb;
		int64_t c = at_position(bd, pos[i], beat, (uint32_t)i + 1, &fixed);
		if (fixed > *peak_lb)
			*peak_lb = fixed;
		if (c < 0)
			*cost_lb = -1;
		else if (*cost_lb >= 0 && c > *cost_lb)
			*cost_lb = c;
	}
}

int pl_cost_bound(const struct pl_graph *g, int64_t budget, int offload, int64_t *cost_lb,
                  int64_t *peak_lb)
{
	struct bound bd = {.g = g, .budget = budget};
	int32_t n = g->nops, nb = g->nbufs ? g->nbufs : 1;
	int32_t *over = malloc(sizeof(int32_t) * (size_t)n),
	        *pos = malloc(sizeof(int32_t) * 2 * BOUND_POSITIONS);
	bd.items = malloc(sizeof(*bd.items) * (size_t)nb);
	bd.per_op = malloc(sizeof(int64_t) * (size_t)n);
	bd.stamp = calloc((size_t)n, sizeof(uint32_t));
	bd.ops = malloc(sizeof(int32_t) * (size_t)nb);
	int64_t *keep = malloc(sizeof(int64_t) * ((size_t)n + 1));
	int rc = -1;
	*cost_lb = 0;
	/* (persistent buffers go to the host like any other with offload) */
	*peak_lb = offload ? 0 : pl_graph_lower_bound(g);
	if (over && pos && bd.items && bd.per_op && bd.stamp && bd.ops && keep &&
	    !pl_cindex_build(g, &bd.ix) && !worth_build(g, &bd.ix, &bd.wt)) {
		int64_t kept = kept_peak(g, &bd.ix, &bd.wt, offload, keep);
		*peak_lb = kept > *peak_lb ? kept : *peak_lb;
		if (offload) {
			*cost_lb = *peak_lb > budget ? -1 : 0;
		} else {
			int32_t nspread, npos = positions(g, budget, over, pos, &nspread);
			bd.cost_lb = *cost_lb;
			bd.peak_lb = *peak_lb;
			cost_over(&bd, pos, npos, nspread);
			*cost_lb = bd.cost_lb;
			*peak_lb = bd.peak_lb;
			if (*peak_lb > budget)
				*cost_lb = -1; /* no plan meets it */
		}
		rc = 0;
	}
	pl_cindex_free(&bd.ix);
	worth_free(&bd.wt);
	free(over);
	free(pos);
	free(bd.items);
	free(bd.per_op);
	free(bd.stamp);
	free(bd.ops);
	free(keep);
	return rc;
}
