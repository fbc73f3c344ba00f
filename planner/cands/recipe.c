/*
 * recipe.c — how to rebuild a set of buffer versions (the targets) before
 * op c: which earlier ops to replay, and what to map, save, unstash,
 * restore and release around them.
 *
 * The replayed ops are the writers of the targets and, transitively, the
 * writers of every version a replay reads that is not resident at c.  A
 * version from before the iteration cannot be replayed: it comes from the
 * buffer's stash (a copy taken at its first use, see
 * docs/plan-format.md), which is how an op that updates running
 * statistics in place is replayed with the statistics it first saw.  A
 * buffer alive at c that a replay writes keeps its content: the replays
 * leave it at its version at c, or it is saved and restored around them.
 *
 * A buffer alive at c that a replay reads is resident there (its gap
 * over c must stay: a forbidden gap), or, on an actual state (`mapped`,
 * the walk in planners/sim.c), it is not mapped and is rebuilt on the way like an
 * intermediate, then released or kept.  Content the program overwrites
 * before reading it again is dead: a rebuild writes over it without
 * saving it, so a replay that reads it rebuilds it first (on an actual
 * state only where an earlier rebuild did write over it).
 *
 * Nothing caps a recipe's length: a long chain is expensive, and the
 * planners weigh that.  Intermediates are released right after the last
 * replay that touches them, so a long chain needs little memory at once.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define VER_LOST (-3) /* mapped without content */

enum {
	F_TARGET = 1,    /* rebuilt and kept */
	F_ALIVE = 2,     /* allocated at c */
	F_RESREAD = 4,   /* read at the version it holds at c: must be resident */
	F_STASH = 8,     /* its content from before the iteration comes from the stash */
	F_WRITTEN = 16,  /* a replay writes it */
	F_SAVE = 32,     /* saved before the first replay touching it, restored after the last */
	F_MAP = 64,      /* mapped before the first replay touching it */
	F_RELEASE = 128, /* released after the last */
};
/* second flag byte */
enum {
	G_EVICTED = 1, /* alive at c but not mapped: rebuilt on the way */
	G_DEAD = 2,    /* mapped at c, content dead there (dead_at): rebuilt on the way */
};

int pl_recipe_init(struct recipe *rc, const struct pl_graph *g)
{
	memset(rc, 0, sizeof(*rc));
	size_t nb = g->nbufs ? (size_t)g->nbufs : 1, no = g->nops ? (size_t)g->nops : 1;
	rc->stamp = calloc(nb, sizeof(uint32_t));
	rc->opstamp = calloc(no, sizeof(uint32_t));
	rc->lver = malloc(nb * sizeof(int32_t));
	rc->vat = malloc(nb * sizeof(int32_t));
	rc->first = malloc(nb * sizeof(int32_t));
	rc->last = malloc(nb * sizeof(int32_t));
	rc->bflag = malloc(nb);
	rc->bflag2 = malloc(nb);
	rc->nbufs_ = (int32_t)nb;
	rc->nops_ = (int32_t)no;
	return rc->stamp && rc->opstamp && rc->lver && rc->vat && rc->first && rc->last &&
	               rc->bflag && rc->bflag2
	           ? 0
	           : -1;
}

void pl_recipe_free(struct recipe *rc)
{
	free(rc->tb);
	free(rc->tv);
	free(rc->ops);
	free(rc->steps);
	free(rc->forbid);
	free(rc->stash);
	free(rc->kept);
	free(rc->touched);
	free(rc->work);
	free(rc->order);
	free(rc->stamp);
	free(rc->opstamp);
	free(rc->lver);
	free(rc->vat);
	free(rc->first);
	free(rc->last);
	free(rc->bflag);
	free(rc->bflag2);
	memset(rc, 0, sizeof(*rc));
}

int pl_recipe_targets(struct recipe *rc, int32_t n)
{
	if (n > 0 &&
	    (REMAT_GROW(rc->tb, n - 1, rc->cap_t) || REMAT_GROW(rc->tv, n - 1, rc->cap_tv)))
		return -1;
	return 0;
}

static int touch_first(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                       int32_t b, int32_t c)
{
	if (REMAT_GROW(rc->touched, rc->ntouched, rc->cap_touched))
		return -1;
	int alive = pl_buf_alive(&g->bufs[b], c, g->nops);
	rc->stamp[b] = rc->epoch;
	rc->bflag[b] = alive ? F_ALIVE : 0;
	rc->bflag2[b] = 0;
	rc->vat[b] = alive ? pl_ver_at(g, ix, b, c) : VER_LOST;
	rc->lver[b] = rc->vat[b];
	rc->first[b] = rc->last[b] = -1;
	rc->touched[rc->ntouched++] = b;
	return 0;
}

/* b into the recipe's buffers (once; asked millions of times per graph) */
static inline int touch(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                        int32_t b, int32_t c)
{
	return rc->stamp[b] == rc->epoch ? 0 : touch_first(rc, g, ix, b, c);
}

static int add_op(struct recipe *rc, const struct pl_graph *g, int32_t k)
{
	if (rc->opstamp[k] == rc->epoch)
		return 0;
	if (!g->ops[k].replayable || (rc->cost_limit > 0 && rc->ix->chain[k] > rc->cost_limit))
		return -1;
	if (REMAT_GROW(rc->ops, rc->nops, rc->cap_ops) ||
	    REMAT_GROW(rc->work, rc->nwork, rc->cap_work))
		return -1;
	rc->opstamp[k] = rc->epoch;
	rc->cost += g->ops[k].duration_ns;
	if (rc->cost_limit > 0 && rc->cost > rc->cost_limit)
		return -1;
	rc->ops[rc->nops++] = k;
	rc->work[rc->nwork++] = k;
	return 0;
}

/* The first use of b after position c (INT32_MAX if none). */
static int32_t use_after(const struct cindex *ix, int32_t b, int32_t c)
{
	const int32_t *u = ix->uses + ix->use_off[b];
	size_t n = ix->use_off[b + 1] - ix->use_off[b];
	size_t i = remat_search_from(u, n, remat_key_i32, remat_key_signed(c));
	return i < n ? u[i] : INT32_MAX;
}

/* Whether the content b holds at c is dead: the next op to use it
 * overwrites all of it without reading it (a region of a long-lived
 * allocation between two of the tensors the program keeps there).  A
 * replay may then write over it without saving and restoring it. */
static int dead_at(const struct pl_graph *g, const struct cindex *ix, int32_t b, int32_t c)
{
	int32_t u = use_after(ix, b, c), ver = 0;
	return u != INT32_MAX && !(pl_ref_flags(g, u, b, &ver) & PL_REF_READ);
}

/* A replay reads version v of b: it is resident at c, comes from the
 * stash (the content from before the iteration), or its writer is
 * replayed too. */
static int need(struct recipe *rc, const struct pl_graph *g, int32_t c, int32_t b, int32_t v)
{
	const struct cindex *ix = rc->ix;
	if (touch(rc, g, ix, b, c))
		return -1;
	uint8_t *f = &rc->bflag[b];
	if (!(*f & F_TARGET) && (*f & F_ALIVE) && rc->vat[b] == v) {
		int mapped = !(rc->bflag2[b] & G_EVICTED) && !(rc->mapped && !rc->mapped[b]);
		if (mapped && !(rc->bflag2[b] & G_DEAD)) {
			if (rc->mapped ? !(rc->clobbered && rc->clobbered[b])
			               : !dead_at(g, ix, b, c)) {
				*f |= F_RESREAD;
				return 0;
			}
			/* Content the program overwrites before reading it again is
			 * no input to count on: another rebuild may write over it
			 * without saving it (roles), before this one or at the same
			 * position; the walk knows whether one did.  Rebuilt here
			 * like an evicted buffer, it stays mapped. */
			rc->bflag2[b] |= G_DEAD;
		} else if (!mapped) {
			rc->bflag2[b] |= G_EVICTED; /* and rebuilt below */
		}
	}
	if (v == PL_VER_PRE) {
		if (rc->no_stash)
			return -1;
		/* a stash held over the whole window that is as large as what
		 * the candidate saves there leaves it saving nothing */
		if (rc->save_bytes > 0 && pl_stash_at(g, ix, b) <= rc->save_from &&
		    pl_save_bytes(g, &g->bufs[b]) >= rc->save_bytes)
			return -1;
		*f |= F_STASH;
		return 0;
	}
	/* excluded: replaying its writers does not give back its bytes */
	if (v < 0 || g->bufs[b].excluded)
		return -1;
	return add_op(rc, g, v);
}

/* Adds what the ops on the work list read, transitively. */
static int closure(struct recipe *rc, const struct pl_graph *g, int32_t c)
{
	for (int32_t h = 0; h < rc->nwork; h++) {
		int32_t k = rc->work[h];
		const struct pl_op *op = &g->ops[k];
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			if ((r->flags & PL_REF_READ) && need(rc, g, c, r->buf, r->ver))
				return -1;
		}
	}
	rc->nwork = 0;
	return 0;
}

/* Runs the replays in order on the versions: 0 consistent, 1 an op was
 * added (run again), -1 impossible. */
static int simulate(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix, int32_t c)
{
	for (int32_t t = 0; t < rc->ntouched; t++) {
		int32_t b = rc->touched[t];
		uint8_t f = rc->bflag[b] &= (uint8_t)~F_WRITTEN;
		int lost =
		    (f & F_TARGET) || !(f & F_ALIVE) || (rc->bflag2[b] & (G_EVICTED | G_DEAD));
		rc->lver[b] = lost ? VER_LOST : rc->vat[b];
		rc->first[b] = rc->last[b] = -1;
	}
	for (int32_t o = 0; o < rc->nops; o++) {
		int32_t k = rc->ops[o];
		const struct pl_op *op = &g->ops[k];
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			int32_t b = r->buf;
			if (touch(rc, g, ix, b, c))
				return -1;
			if (rc->first[b] < 0) {
				rc->first[b] = k;
				if (rc->bflag[b] & F_STASH)
					rc->lver[b] = PL_VER_PRE;
			}
			rc->last[b] = k;
			if (!(r->flags & PL_REF_READ))
				continue;
			/* an excluded buffer's replayed bytes may differ from the original */
			if (g->bufs[b].excluded && (rc->bflag[b] & F_WRITTEN))
				return -1;
			if (rc->lver[b] != r->ver) {
				/* A replay earlier in the list wrote an older version:
				 * the writer of the one read here runs again after it. */
				if (r->ver < 0 || g->bufs[b].excluded ||
				    rc->opstamp[r->ver] == rc->epoch)
					return -1;
				return add_op(rc, g, r->ver) || closure(rc, g, c) ? -1 : 1;
			}
		}
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			if (r->flags & PL_REF_WRITE) {
				rc->lver[r->buf] = k;
				rc->bflag[r->buf] |= F_WRITTEN;
			}
		}
	}
	for (int32_t t = 0; t < rc->nt; t++)
		if (rc->lver[rc->tb[t]] != rc->tv[t])
			return -1;
	return 0;
}

static int emit(struct recipe *rc, int kind, int32_t arg)
{
	if (REMAT_GROW(rc->steps, rc->nsteps, rc->cap_steps))
		return -1;
	rc->steps[rc->nsteps++] = (struct pl_step){kind, arg};
	return 0;
}

/* Whether the candidates of gap q give its content back at its end.  A
 * replay at that end may then read the buffer after such a rebuild; not
 * after one that only maps it (content dead until an overwrite there, a
 * buffer dead across the boundary, one evicted until freed): its replay
 * would read nothing. */
static int rebuilds_content(const struct pl_gap *q)
{
	return !q->dead && !q->boundary && q->ver >= 0;
}

/* What each touched buffer needs around the replays, and the gaps that
 * must stay resident. */
static int roles(struct recipe *rc, const struct pl_graph *g, const struct pl_cands *cs, int32_t c)
{
	const struct cindex *ix = rc->ix;
	for (int32_t t = 0; t < rc->ntouched; t++) {
		int32_t b = rc->touched[t];
		const struct pl_buffer *bf = &g->bufs[b];
		uint8_t f = rc->bflag[b];
		/* on an actual state, whatever is alive and not mapped is evicted */
		if ((f & (F_ALIVE | F_TARGET)) == F_ALIVE && rc->mapped && !rc->mapped[b])
			rc->bflag2[b] |= G_EVICTED;
		if (f & F_TARGET) {
			f |= F_MAP;
		} else if (!(f & F_ALIVE) || (rc->bflag2[b] & G_EVICTED)) {
			if (bf->small)
				return -1; /* its bytes may belong to another allocation now */
			f |= F_MAP | F_RELEASE;
			/* may be kept if asked and it ends with the content it has at c */
			if (rc->keep && (f & F_ALIVE) && !bf->excluded &&
			    rc->lver[b] == rc->vat[b]) {
				if (REMAT_GROW(rc->kept, rc->nkept, rc->cap_kept))
					return -1;
				rc->kept[rc->nkept++] = b;
			}
		} else {
			if ((f & (F_WRITTEN | F_STASH)) &&
			    (rc->lver[b] != rc->vat[b] || bf->excluded) && !dead_at(g, ix, b, c))
				f |= F_SAVE;
			/* Whatever the replays touch in place must be resident at c;
			 * a buffer only read may be rebuilt at c by another
			 * candidate first (unless strict).  On an actual state
			 * (mapped) there is nothing left to forbid. */
			if (!rc->mapped && pl_buf_evictable(bf)) {
				int end_ok = rc->strict || (f & (F_WRITTEN | F_STASH));
				int32_t q = pl_gap_at(cs, ix, b, c, 1);
				if (q >= 0 && !end_ok && cs->gaps[q].c == c &&
				    rebuilds_content(&cs->gaps[q]))
					q = -1;
				if (q >= 0) {
					if (REMAT_GROW(rc->forbid, rc->nforbid, rc->cap_forbid))
						return -1;
					rc->forbid[rc->nforbid++] = q;
				}
			}
		}
		if (f & F_STASH) {
			if (REMAT_GROW(rc->stash, rc->nstash, rc->cap_stash))
				return -1;
			rc->stash[rc->nstash++] = b;
		}
		rc->bflag[b] = f;
	}
	return 0;
}

int pl_recipe_overwrites(const struct recipe *rc, int32_t b)
{
	if (rc->stamp[b] != rc->epoch)
		return -1;
	uint8_t f = rc->bflag[b];
	if ((f & (F_ALIVE | F_WRITTEN)) != (F_ALIVE | F_WRITTEN) ||
	    (f & (F_TARGET | F_SAVE | F_RELEASE)) || (rc->bflag2[b] & G_EVICTED))
		return -1; /* (an evicted one kept has lver as keep_some's scratch) */
	return rc->lver[b] != rc->vat[b];
}

/* Of the buffers that may be kept, keeps those needed soonest within
 * keep_limit bytes; the others are released as usual. */
static int keep_some(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                     int32_t c)
{
	if (!rc->nkept)
		return 0;
	/* lver is free scratch now: the next use of each */
	for (int32_t i = 0; i < rc->nkept; i++)
		rc->lver[rc->kept[i]] = use_after(ix, rc->kept[i], c);
	pl_sort_ids(rc->kept, rc->nkept, rc->lver);
	int64_t room = rc->keep_limit;
	int32_t n = 0;
	for (int32_t i = 0; i < rc->nkept; i++) {
		int32_t b = rc->kept[i];
		if (g->bufs[b].rounded > room)
			continue;
		room -= g->bufs[b].rounded;
		rc->bflag[b] &= (uint8_t)~F_RELEASE;
		rc->kept[n++] = b;
	}
	rc->nkept = n;
	return 0;
}

/* Steps: map, save and unstash each buffer just before the first replay
 * that touches it; restore and release it right after the last. */
static int steps(struct recipe *rc, const struct pl_graph *g)
{
	int32_t n = rc->ntouched;
	if (REMAT_GROW(rc->order, 2 * (size_t)n, rc->cap_order))
		return -1;
	int32_t *byfirst = rc->order, *bylast = rc->order + n;
	memcpy(byfirst, rc->touched, sizeof(int32_t) * n);
	memcpy(bylast, rc->touched, sizeof(int32_t) * n);
	/* by position (first or last touch), then buffer id: deterministic steps */
	pl_sort_ids(byfirst, n, rc->first);
	pl_sort_ids(bylast, n, rc->last);
	int32_t i1 = 0, i2 = 0;
	int64_t mem = 0;
	rc->cost = rc->transient = 0;
	while (i1 < n && rc->first[byfirst[i1]] < 0)
		i1++;
	while (i2 < n && rc->last[bylast[i2]] < 0)
		i2++;
	for (int32_t o = 0; o < rc->nops; o++) {
		int32_t k = rc->ops[o];
		for (; i1 < n && rc->first[byfirst[i1]] == k; i1++) {
			int32_t b = byfirst[i1];
			uint8_t f = rc->bflag[b];
			if ((f & F_MAP) && emit(rc, PL_STEP_MAP, b))
				return -1;
			if ((f & F_MAP) && !(f & F_TARGET))
				mem += g->bufs[b].rounded; /* a target counts in the curve at c */
			if ((f & F_SAVE) && emit(rc, PL_STEP_SAVE, b))
				return -1;
			if (f & F_SAVE) {
				mem += pl_save_bytes(g, &g->bufs[b]);
				rc->cost += pl_dev_copy_ns(g, &g->bufs[b]);
			}
			if ((f & F_STASH) && emit(rc, PL_STEP_UNSTASH, b))
				return -1;
			/* the stash taken at the first use and this unstash */
			if (f & F_STASH)
				rc->cost += 2 * pl_dev_copy_ns(g, &g->bufs[b]);
			if (mem > rc->transient)
				rc->transient = mem;
		}
		if (emit(rc, PL_STEP_REPLAY, k))
			return -1;
		rc->cost += g->ops[k].duration_ns;
		for (; i2 < n && rc->last[bylast[i2]] == k; i2++) {
			int32_t b = bylast[i2];
			uint8_t f = rc->bflag[b];
			if ((f & F_SAVE) && emit(rc, PL_STEP_RESTORE, b))
				return -1;
			if (f & F_SAVE) {
				mem -= pl_save_bytes(g, &g->bufs[b]);
				rc->cost += pl_dev_copy_ns(g, &g->bufs[b]);
			}
			if ((f & F_RELEASE) && emit(rc, PL_STEP_RELEASE, b))
				return -1;
			if (f & F_RELEASE)
				mem -= g->bufs[b].rounded;
		}
	}
	return 0;
}

int pl_recipe_build(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                    const struct pl_cands *cs, int32_t c)
{
	if (++rc->epoch == 0) { /* wrapped: stale stamps could look current */
		memset(rc->stamp, 0, sizeof(uint32_t) * rc->nbufs_);
		memset(rc->opstamp, 0, sizeof(uint32_t) * rc->nops_);
		rc->epoch = 1;
	}
	rc->nops = rc->nsteps = rc->nforbid = rc->nstash = rc->ntouched = rc->nwork = rc->nkept = 0;
	rc->cost = 0;
	rc->ix = ix;
	rc->last_op = -1;
	for (int32_t t = 0; t < rc->nt; t++) {
		int32_t b = rc->tb[t];
		if (rc->tv[t] < 0 || rc->tv[t] >= c || touch(rc, g, ix, b, c))
			return -1;
		rc->bflag[b] |= F_TARGET;
		if (add_op(rc, g, rc->tv[t]))
			return -1;
	}
	if (closure(rc, g, c))
		return -1;
	for (;;) {
		pl_sort_i32(rc->ops, rc->nops);
		int r = simulate(rc, g, ix, c);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
	}
	if (roles(rc, g, cs, c) || keep_some(rc, g, ix, c) || steps(rc, g))
		return -1;
	rc->last_op = rc->nops ? rc->ops[rc->nops - 1] : -1;
	return 0;
}

int32_t pl_stash_at(const struct pl_graph *g, const struct cindex *ix, int32_t b)
{
	(void)g;
	int used = ix->use_off[b] < ix->use_off[b + 1];
	return pl_stash_pos(used ? ix->uses[ix->use_off[b]] : -1);
}

int pl_recipe_stash_ranges(const struct recipe *rc, const struct pl_graph *g, int32_t c,
                           struct pl_ranges *out)
{
	for (int32_t i = 0; i < rc->nstash; i++) {
		int32_t b = rc->stash[i];
		int32_t at = pl_stash_at(g, rc->ix, b);
		if (REMAT_GROW(out->r, out->n, out->cap))
			return -1;
		out->r[out->n++] =
		    (struct pl_range){at < c ? at : c, c, -pl_save_bytes(g, &g->bufs[b])};
	}
	return 0;
}
