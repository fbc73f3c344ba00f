/*
 * sim.c — DTR run offline: walk the iteration op by op under the budget.
 * Whatever an op needs that is not mapped is rebuilt right before it,
 * recursively through whatever is not mapped either (the recipe builder
 * on the current state; intermediates are released again, what the op
 * needs stays).  When the memory would exceed the budget, resident
 * buffers are evicted, lowest first on rebuild cost / (bytes x idle
 * time): DTR's rule, except that the idle time is known here, not
 * guessed from staleness.  An eviction takes effect right after the
 * buffer's last use, which only lowers the memory in between.
 *
 * Unlike the other planners this one is not limited to a candidate set:
 * a buffer can be rebuilt, evicted again and rebuilt once more, and
 * rebuilds go as deep as the evictions make them.  The result is a plan,
 * checked by the evaluator like every other.
 */
#include "sim_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Mapping and unmapping b: its bytes, and those of the shared chunks it
 * is the first to need or the last to leave (model/shared.c). */
static void map(struct walk *w, int32_t b)
{
	w->mapped[b] = 1;
	w->mem += pl_map_bytes(w->g, w->share, b);
}

static int64_t unmap(struct walk *w, int32_t b)
{
	w->mapped[b] = 0;
	int64_t d = pl_unmap_bytes(w->g, w->share, b);
	w->mem -= d;
	return d;
}

/* The first use of b after position q, or -1. */
static int32_t next_use(const struct cindex *ix, int32_t b, int32_t q)
{
	const int32_t *u = ix->uses + ix->use_off[b];
	size_t n = ix->use_off[b + 1] - ix->use_off[b];
	size_t i = remat_search_after(u, n, remat_key_i32, remat_key_signed(q));
	return i < n ? u[i] : -1;
}

/* What rebuilding version v for position c costs on the current state:
 * its writer and, transitively, the writers of what it reads that is not
 * mapped (or will be freed by then).  DTR's e* counts the evicted
 * neighbourhood the same way; it only grows as more is evicted. */
static int64_t rebuild_cost(struct walk *w, int32_t v, int32_t c)
{
	const struct pl_graph *g = w->g;
	int64_t cost = 0;
	int32_t n = 0;
	if (++w->epoch == 0) {
		memset(w->seen, 0, sizeof(uint32_t) * g->nops);
		w->epoch = 1;
	}
	w->seen[v] = w->epoch;
	w->stack[n++] = v;
	for (int32_t seen = 0; n; seen++) {
		if (seen == SIM_ESTIMATE_OPS)
			return INT64_MAX / 4; /* that far back: as good as never */
		const struct pl_op *op = &g->ops[w->stack[--n]];
		cost += op->duration_ns;
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			int32_t x = r->buf, u = r->ver;
			if (!(r->flags & PL_REF_READ) || u < 0 || w->seen[u] == w->epoch)
				continue;
			if (w->mapped[x] && pl_buf_alive(&g->bufs[x], c, g->nops) &&
			    pl_ver_at(g, &w->ix, x, c) == u)
				continue;
			w->seen[u] = w->epoch;
			w->stack[n++] = u;
		}
	}
	return cost;
}

/* What evicting b (holding version v, written by op v) adds to the
 * rebuilds of what is already evicted: the evicted buffers whose
 * writers read b's version, transitively (DTR's e* counts the evicted
 * neighbours on both sides). */
static int64_t dependents_cost(struct walk *w, int32_t b, int32_t v, int32_t p)
{
	const struct pl_graph *g = w->g;
	int64_t cost = 0;
	int32_t n = 0;
	if (v < 0)
		return 0;
	if (++w->epoch == 0) {
		memset(w->seen, 0, sizeof(uint32_t) * g->nops);
		w->epoch = 1;
	}
	w->stack[n++] = b;
	w->stack2[0] = v;
	for (int32_t seen = 0; n; seen++) {
		if (seen == SIM_ESTIMATE_OPS)
			return INT64_MAX / 4;
		n--;
		int32_t x = w->stack[n], u = w->stack2[n];
		/* readers of version u of x: its uses after u up to the next write */
		for (uint32_t k = w->ix.use_off[x]; k < w->ix.use_off[x + 1]; k++) {
			int32_t o = w->ix.uses[k];
			if (o <= u || w->seen[o] == w->epoch)
				continue;
			const struct pl_op *op = &g->ops[o];
			int reads = 0, writes_x = 0;
			for (uint32_t i = 0; i < op->nrefs; i++) {
				const struct pl_ref *r = &g->refs[op->ref_off + i];
				if (r->buf == x) {
					reads = (r->flags & PL_REF_READ) && r->ver == u;
					writes_x = (r->flags & PL_REF_WRITE) != 0;
				}
			}
			if (reads) {
				w->seen[o] = w->epoch;
				for (uint32_t i = 0; i < op->nrefs; i++) {
					const struct pl_ref *r = &g->refs[op->ref_off + i];
					int32_t y = r->buf;
					if ((r->flags & PL_REF_WRITE) && y != x && !w->mapped[y] &&
					    pl_buf_alive(&g->bufs[y], p, g->nops) &&
					    pl_ver_at(g, &w->ix, y, p) == o && n < g->nops) {
						cost += op->duration_ns;
						w->stack[n] = y;
						w->stack2[n++] = o;
						break;
					}
				}
			}
			if (writes_x)
				break;
		}
	}
	return cost;
}

/* The eviction key of b idle from q: rebuild cost per byte and per ns
 * of idle time; 0 when nothing is rebuilt; < 0 when it must stay. */
static double key(struct walk *w, int32_t b, int32_t q)
{
	const struct pl_graph *g = w->g;
	const struct pl_buffer *bf = &g->bufs[b];
	if (!pl_buf_evictable(bf) || w->never[b])
		return -1;
	int32_t nu = next_use(&w->ix, b, q), v = pl_ver_at(g, &w->ix, b, q + 1);
	if (nu < 0) {
		/* idle until freed (or, dead across the boundary, until the
		 * end): nothing to rebuild (content from before the iteration
		 * stays: a replay might still need it).  Not when its eviction
		 * frees nothing, as below (a region with no whole chunk whose
		 * shared ones a neighbour live across the boundary keeps): with
		 * such evictions the walk's plans for mlp and gpt --alloc
		 * caching peaked 1-2 MiB higher once a small region's last read
		 * came earlier (its targets). */
		if (pl_evict_gain(g, w->share, b) <= 0)
			return -1;
		return (bf->free_at >= 0 || bf->dead_across) && v != PL_VER_PRE ? 0 : -1;
	}
	/* a rebuild on the far side of a collective would hold up every rank */
	if (nu - q < 2 || v == PL_VER_PRE || (v >= 0 && !g->ops[v].replayable) ||
	    pl_idle_spans_collective(&w->ix, q, nu))
		return -1;
	if (w->max_ratio >= 0 && v >= 0 && sim_ratio(g, b, v) > w->max_ratio)
		return -1;
	double cost = v >= 0 ? (double)rebuild_cost(w, v, nu) : 0;
	cost += (double)dependents_cost(w, b, v, q + 1);
	double idle = (double)(w->tm[nu] - w->tm[q + 1]) + 1;
	if (w->variant == IDLE_SQRT)
		idle = sqrt(idle);
	else if (w->variant == IDLE_OPS)
		idle = (double)(nu - q);
	/* (a region's share of the chunks it shares counts: one with no whole
	 * chunk frees only those, and nothing when they stay anyway) */
	int64_t bytes = pl_evict_gain(g, w->share, b);
	return bytes > 0 ? cost / ((double)bytes * idle) : -1;
}

/* b was used at q and stays mapped: offer it for eviction over its idle
 * time until the next use. */
static int offer(struct walk *w, int32_t b, int32_t q)
{
	double h = key(w, b, q);
	return h < 0 ? 0 : pl_heap_push(&w->heap, (struct pl_hent){h, b, q});
}

static int pinned(const struct walk *w, uint64_t key)
{
	return remat_map_find(&w->pins, key + 1) != NULL;
}

int sim_pin(struct walk *w, uint64_t key)
{
	return remat_map_insert(&w->pins, key + 1) ? 0 : -1;
}

void sim_unpin_all(struct walk *w)
{
	remat_map_clear(&w->pins);
}

void sim_unpin(struct walk *w, uint64_t key)
{
	remat_map_remove(&w->pins, key + 1, NULL);
}

/* Evicts resident buffers until `need` fits the budget; 1 if it cannot. */
static int make_room(struct walk *w, int32_t p, int64_t need)
{
	while (need > w->budget && w->heap.n) {
		struct pl_hent x = pl_heap_pop(&w->heap);
		int32_t b = x.j;
		if (!w->mapped[b] || w->last[b] != x.hi || w->never[b] ||
		    w->busy[b] == (uint32_t)p + 1 || pinned(w, sim_pin_key(b, x.hi)))
			continue; /* used since, evicted already, needed now, or pinned */
		/* Keys only grow as neighbours are evicted: look again, and
		 * put it back if it no longer comes first. */
		double h = x.h > 0 ? key(w, b, x.hi) : x.h;
		if (h < 0)
			continue;
		if (h > x.h && w->heap.n && h > w->heap.e[0].h) {
			if (pl_heap_push(&w->heap, (struct pl_hent){h, b, x.hi}))
				return -1;
			continue;
		}
		if (pl_asm_evict(&w->pa, x.hi, b))
			return -1;
		w->evq[b] = x.hi;
		need -= unmap(w, b);
	}
	return need > w->budget;
}

static void touch(struct walk *w, int32_t b, int32_t p)
{
	w->busy[b] = (uint32_t)p + 1;
	w->last[b] = p;
}

/* The rebuild at hand (w->rc) takes the walk over the budget: pins the
 * evictions of its targets so that the next walk keeps them over the
 * idle time that led here (a rebuild reaching far back holds all it
 * replays on the way: more than the evictions saved).  1 when it pinned
 * one not pinned before (walk again), 0 when all were (go on over the
 * budget), -1 out of memory. */
static int repair(struct walk *w)
{
	int fresh = 0;
	for (int32_t t = 0; t < w->rc.nt; t++) {
		int32_t b = w->rc.tb[t];
		if (w->evq[b] < 0)
			continue; /* not evicted by this walk (unmapped at the boundary) */
		uint64_t k = sim_pin_key(b, w->evq[b]);
		if (pinned(w, k))
			continue;
		if (sim_pin(w, k))
			return -1;
		fresh = 1;
	}
	if (fresh) {
		w->repairs_left--;
		w->failed = 1;
	}
	return fresh;
}

/* The frees and allocations before op p, and the stashes taken there
 * that must be held. */
static void free_and_alloc(struct walk *w, int32_t p)
{
	const struct pl_graph *g = w->g;
	for (uint32_t i = w->foff[p]; i < w->foff[p + 1]; i++) {
		int32_t b = w->flist[i];
		if (w->mapped[b])
			unmap(w, b);
	}
	for (uint32_t i = w->aoff[p]; i < w->aoff[p + 1]; i++) {
		int32_t b = w->alist[i];
		map(w, b);
		w->last[b] = p;
	}
	for (uint32_t i = w->soff[p]; i < w->soff[p + 1]; i++)
		if (w->reserve[w->slist[i]])
			w->mem += pl_save_bytes(g, &g->bufs[w->slist[i]]);
}

/* What op p references and is not mapped: mapped again (*extra bytes),
 * and rebuilt when it is really read (the recipe's targets).  -1 out of
 * memory. */
static int find_targets(struct walk *w, int32_t p, int64_t *extra)
{
	const struct pl_graph *g = w->g;
	const struct pl_op *op = &g->ops[p];
	struct recipe *rc = &w->rc;
	*extra = 0;
	rc->nt = 0;
	for (uint32_t i = 0; i < op->nrefs; i++) {
		const struct pl_ref *r = &g->refs[op->ref_off + i];
		touch(w, r->buf, p);
		if (w->mapped[r->buf])
			continue;
		/* (a group two of them share counts twice: an upper bound) */
		*extra += pl_map_need(g, w->share, r->buf);
		if (!(r->flags & PL_REF_READ))
			continue;
		if (pl_recipe_targets(rc, rc->nt + 1))
			return -1;
		rc->tb[rc->nt] = r->buf;
		rc->tv[rc->nt++] = r->ver;
	}
	return 0;
}

/* The rebuild of the targets and room for it: *need, the memory while it
 * runs.  The rebuild releases what it rebuilds on the way; what fits in
 * the room left it keeps instead (DTR keeps it all), needed soonest
 * first, but it never evicts for that.  0, 1 when no recipe holds (the
 * targets are kept from now on: walk again), -1 out of memory. */
static int rebuild(struct walk *w, int32_t p, int64_t extra, int64_t *need)
{
	const struct pl_graph *g = w->g;
	struct recipe *rc = &w->rc;
	rc->mapped = w->mapped;
	rc->clobbered = w->clobbered;
	int r = pl_recipe_build(rc, g, &w->ix, NULL, p);
	if (r) {
		rc->mapped = NULL;
		/* keep what this op needs from now on and walk again */
		for (int32_t t = 0; t < rc->nt; t++)
			w->never[rc->tb[t]] = 1;
		w->failed = 1;
		return 1;
	}
	for (int32_t t = 0; t < rc->ntouched; t++)
		touch(w, rc->touched[t], p);
	if (make_room(w, p, w->mem + extra + rc->transient) < 0) {
		rc->mapped = NULL;
		return -1;
	}
	int64_t room = w->budget - (w->mem + extra + rc->transient);
	if (w->keep && room > 0) {
		rc->keep = 1;
		rc->keep_limit = room;
		r = pl_recipe_build(rc, g, &w->ix, NULL, p);
		rc->keep = 0;
	}
	rc->mapped = NULL;
	if (r)
		return -1; /* the same closure held without keeping */
	*need = w->mem + extra + rc->transient;
	return 0;
}

/* What each target's eviction cost: this rebuild (events). */
static int note_events(struct walk *w)
{
	struct recipe *rc = &w->rc;
	for (int32_t t = 0; t < rc->nt; t++) {
		if (REMAT_GROW(w->ev, w->nev, w->cap_ev))
			return -1;
		w->ev[w->nev++] =
		    (struct event){sim_pin_key(rc->tb[t], w->evq[rc->tb[t]]), rc->cost};
	}
	return 0;
}

/* The rebuild's steps into the plan, its results mapped.  0, 1 given up
 * (over cost_cap), -1 out of memory. */
static int apply_rebuild(struct walk *w, int32_t p)
{
	struct recipe *rc = &w->rc;
	w->spent += rc->cost;
	if (w->cost_cap >= 0 && w->spent > w->cost_cap)
		return 1; /* given up */
	for (int32_t i = 0; i < rc->nsteps; i++) {
		const struct pl_step *st = &rc->steps[i];
		if (pl_asm_step(&w->pa, p, st->kind, st->arg))
			return -1;
		if (st->kind == PL_STEP_UNSTASH)
			w->stashed[st->arg] = 1;
	}
	for (int32_t t = 0; t < rc->nt; t++)
		map(w, rc->tb[t]);
	for (int32_t t = 0; t < rc->nkept; t++)
		map(w, rc->kept[t]);
	for (int32_t t = 0; t < rc->ntouched; t++) {
		int o = pl_recipe_overwrites(rc, rc->touched[t]);
		if (o >= 0)
			w->clobbered[rc->touched[t]] = (uint8_t)o;
	}
	return 0;
}

/* Op p runs: what it writes is the program's content again, what it
 * writes without reading is mapped, and what it and the rebuild used
 * is offered for eviction. */
static int run_op(struct walk *w, int32_t p)
{
	const struct pl_graph *g = w->g;
	const struct pl_op *op = &g->ops[p];
	struct recipe *rc = &w->rc;
	for (uint32_t i = 0; i < op->nrefs; i++)
		if (g->refs[op->ref_off + i].flags & PL_REF_WRITE)
			w->clobbered[g->refs[op->ref_off + i].buf] = 0;
	for (uint32_t i = 0; i < op->nrefs; i++) {
		const struct pl_ref *r = &g->refs[op->ref_off + i];
		if (w->mapped[r->buf])
			continue;
		if (pl_asm_step(&w->pa, p, PL_STEP_MAP, r->buf))
			return -1;
		map(w, r->buf);
	}
	for (int32_t t = 0; rc->nt && t < rc->ntouched; t++)
		if (w->mapped[rc->touched[t]] && offer(w, rc->touched[t], p))
			return -1;
	for (uint32_t i = 0; i < op->nrefs; i++)
		if (offer(w, g->refs[op->ref_off + i].buf, p))
			return -1;
	for (uint32_t i = w->aoff[p]; i < w->aoff[p + 1]; i++)
		if (w->busy[w->alist[i]] != (uint32_t)p + 1 && offer(w, w->alist[i], p))
			return -1;
	return 0;
}

/* Position p: frees and allocations, rebuild what op p needs, make room,
 * run it.  0, 1 the rebuilds went over cost_cap, or -1 out of memory. */
static int step(struct walk *w, int32_t p)
{
	struct recipe *rc = &w->rc;
	int64_t extra, need;
	free_and_alloc(w, p);
	if (find_targets(w, p, &extra))
		return -1;
	if (rc->nt) {
		int r = rebuild(w, p, extra, &need);
		if (r)
			return r < 0 ? -1 : 0;
	} else {
		if (make_room(w, p, w->mem + extra) < 0)
			return -1;
		need = w->mem + extra;
	}
	if (need > w->budget && rc->nt && w->repairs_left > 0) {
		int r = repair(w);
		if (r)
			return r < 0 ? -1 : 0;
	}
	if (need > w->peak)
		w->peak = need;
	/* the rebuild first (it may map and release a buffer op p only
	 * writes), then the buffers op p writes without reading */
	if (note_events(w))
		return -1;
	if (rc->nt) {
		int r = apply_rebuild(w, p);
		if (r)
			return r;
	}
	return run_op(w, p);
}

/* One walk; the plan in *out.  0 met, 1 not met, 2 given up (cost_cap,
 * no plan), -1 out of memory. */
static int walk_once(struct walk *w, struct pl_plan **out)
{
	const struct pl_graph *g = w->g;
	*out = NULL;
	w->heap.n = 0;
	w->nev = 0;
	w->failed = 0;
	w->peak = 0;
	w->spent = 0;
	w->mem = g->const_bytes;
	if (pl_asm_init(&w->pa, g))
		return -1;
	if (g->nshared)
		memset(w->share, 0, sizeof(int32_t) * (size_t)g->nshared);
	memset(w->clobbered, 0, g->nbufs ? (size_t)g->nbufs : 1);
	for (int32_t b = 0; b < g->nbufs; b++) {
		const struct pl_buffer *bf = &g->bufs[b];
		w->busy[b] = 0;
		w->last[b] = -1;
		w->evq[b] = -1;
		w->stashed[b] = 0;
		/* content dead across the boundary: unmapped there */
		w->pa.boundary[b] = w->v2 && bf->dead_across && pl_buf_evictable(bf);
		w->mapped[b] = 0;
		if (bf->alloc_at < 0 && !w->pa.boundary[b])
			map(w, b);
	}
	int rc = 0;
	for (int32_t p = 0; p < g->nops && !w->failed && !rc; p++)
		rc = step(w, p);
	if (rc > 0) {
		pl_asm_free(&w->pa);
		return 2; /* given up */
	}
	/* what is dead across the boundary goes after its last use */
	for (int32_t b = 0; !rc && !w->failed && b < g->nbufs; b++)
		if (w->pa.boundary[b] && w->mapped[b] && w->last[b] >= 0)
			rc = pl_asm_evict(&w->pa, w->last[b], b);
	if (!rc && !w->failed) {
		*out = pl_asm_finish(&w->pa);
		rc = *out ? w->peak > w->budget : -1;
	}
	pl_asm_free(&w->pa);
	return rc;
}

void sim_walk_free(struct walk *w)
{
	pl_cindex_free(&w->ix);
	pl_recipe_free(&w->rc);
	free(w->tm);
	free(w->mapped);
	free(w->clobbered);
	free(w->share);
	free(w->never);
	free(w->reserve);
	free(w->stashed);
	free(w->last);
	free(w->busy);
	free(w->seen);
	free(w->stack);
	free(w->stack2);
	remat_map_clear(&w->pins);
	free(w->evq);
	free(w->ev);
	free(w->aoff);
	free(w->foff);
	free(w->soff);
	free(w->alist);
	free(w->flist);
	free(w->slist);
	free(w->heap.e);
}

/* Stash positions as a CSR list, like allocations and frees. */
static int stash_index(struct walk *w)
{
	const struct pl_graph *g = w->g;
	w->soff = calloc((size_t)g->nops + 2, sizeof(uint32_t));
	w->slist = malloc(sizeof(int32_t) * (g->nbufs ? g->nbufs : 1));
	if (!w->soff || !w->slist)
		return -1;
	for (int32_t b = 0; b < g->nbufs; b++)
		w->soff[pl_stash_at(g, &w->ix, b) + 1]++;
	for (int32_t p = 0; p < g->nops; p++)
		w->soff[p + 1] += w->soff[p];
	uint32_t *fill = malloc(sizeof(uint32_t) * ((size_t)g->nops + 1));
	if (!fill)
		return -1;
	memcpy(fill, w->soff, sizeof(uint32_t) * ((size_t)g->nops + 1));
	for (int32_t b = 0; b < g->nbufs; b++)
		w->slist[fill[pl_stash_at(g, &w->ix, b)]++] = b;
	free(fill);
	return 0;
}

/* Walks again while a rebuild failed (its buffers are then kept) or a
 * stash turned out to be needed that the walk did not hold memory for;
 * each round only adds to never[] or reserve[].  0 with the plan in
 * *out (*met: within the budget), 1 when it does not settle (no plan),
 * -1 out of memory. */
int sim_walk_all(struct walk *w, struct pl_plan **out, int *met)
{
	*out = NULL;
	w->repairs_left = w->repair;
	for (int round = 0; round < 64; round++) {
		struct pl_plan *p = NULL;
		int rc = walk_once(w, &p);
		if (rc < 0)
			return -1;
		if (rc == 2)
			return 1;
		int again = w->failed;
		for (int32_t b = 0; b < w->g->nbufs; b++)
			if (w->stashed[b] && !w->reserve[b]) {
				w->reserve[b] = 1;
				again = 1;
			}
		if (!again) {
			*met = rc == 0;
			*out = p;
			return 0;
		}
		pl_plan_free(p);
	}
	return 1;
}

int sim_walk_init(struct walk *w, const struct pl_graph *g, int64_t budget, int version)
{
	size_t nb = g->nbufs ? (size_t)g->nbufs : 1;
	memset(w, 0, sizeof(*w));
	w->pins = (struct remat_map)REMAT_MAP_INIT(uint64_t);
	w->g = g;
	w->budget = budget;
	w->keep = 1;
	w->max_ratio = -1;
	w->cost_cap = -1;
	w->v2 = version >= 2;
	w->tm = malloc(sizeof(int64_t) * ((size_t)g->nops + 1));
	w->mapped = malloc(nb);
	w->clobbered = calloc(nb, 1);
	w->share = calloc(g->nshared ? (size_t)g->nshared : 1, sizeof(int32_t));
	w->never = calloc(nb, 1);
	w->reserve = calloc(nb, 1);
	w->stashed = calloc(nb, 1);
	w->last = malloc(sizeof(int32_t) * nb);
	w->busy = malloc(sizeof(uint32_t) * nb);
	w->seen = calloc((size_t)g->nops + 1, sizeof(uint32_t));
	w->stack = malloc(sizeof(int32_t) * ((size_t)g->nops + 1));
	w->stack2 = malloc(sizeof(int32_t) * ((size_t)g->nops + 1));
	w->evq = calloc(nb, sizeof(int32_t));
	w->alist = pl_bufs_by_pos(g, 0, &w->aoff);
	w->flist = pl_bufs_by_pos(g, 1, &w->foff);
	if (!w->tm || !w->mapped || !w->clobbered || !w->share || !w->never || !w->reserve ||
	    !w->stashed || !w->last || !w->busy || !w->seen || !w->stack || !w->stack2 || !w->evq ||
	    !w->alist || !w->flist || pl_cindex_build(g, &w->ix) || pl_recipe_init(&w->rc, g) ||
	    stash_index(w))
		return -1;
	w->rc.no_stash = !w->v2;
	w->tm[0] = 0;
	for (int32_t p = 0; p < g->nops; p++)
		w->tm[p + 1] = w->tm[p] + g->ops[p].duration_ns;
	return 0;
}
