/*
 * recipe.c — how to rebuild a set of buffer versions (the targets) before
 * op c: which earlier ops to replay, and what to map, save, unstash,
 * restore and release around them.
 *
 * The replayed ops are the writers of the targets and, transitively, the
 * writers of every version a replay reads that is not resident at c.  A
 * version from before the iteration cannot be replayed: it comes from the
 * buffer's stash (a copy taken before its first write, see
 * docs/plan-format.md), which is how an op that updates running
 * statistics in place is replayed with the statistics it first saw.  A
 * buffer alive at c that a replay writes keeps its content: the replays
 * leave it at its version at c, or it is saved and restored around them.
 *
 * A buffer alive at c that a replay reads is either resident (its gap
 * over c must stay: a forbidden gap) or, for a flexible recipe, rebuilt
 * on the way like an intermediate and released again.  Candidates are
 * built with `flex` levels of buffers next to the targets taken as
 * evicted (an upper bound of the work); when the plan is made, the
 * recipe is built again on the actual state at c (`mapped`), which only
 * drops replays.
 *
 * Nothing caps a recipe's length: a long chain is expensive, and the
 * planners weigh that.  Intermediates are released right after the last
 * replay that touches them, so a long chain needs little memory at once.
 */
#include "cands_internal.h"

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
	G_EVICTED = 1, /* alive at c but not resident: rebuilt on the way, released after */
};

int pl_recipe_init(struct recipe *rc, const struct pl_graph *g)
{
	memset(rc, 0, sizeof(*rc));
	size_t nb = g->nbufs ? (size_t)g->nbufs : 1, no = g->nops ? (size_t)g->nops : 1;
	rc->stamp = calloc(nb, sizeof(uint32_t));
	rc->opstamp = calloc(no, sizeof(uint32_t));
	rc->lver = malloc(nb * sizeof(int32_t));
	rc->first = malloc(nb * sizeof(int32_t));
	rc->last = malloc(nb * sizeof(int32_t));
	rc->bflag = malloc(nb);
	rc->bflag2 = malloc(nb);
	rc->opdepth = malloc(no * sizeof(int32_t));
	rc->nbufs_ = (int32_t)nb;
	rc->nops_ = (int32_t)no;
	return rc->stamp && rc->opstamp && rc->lver && rc->first && rc->last && rc->bflag &&
	               rc->bflag2 && rc->opdepth
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
	free(rc->touched);
	free(rc->work);
	free(rc->order);
	free(rc->stamp);
	free(rc->opstamp);
	free(rc->lver);
	free(rc->first);
	free(rc->last);
	free(rc->bflag);
	free(rc->bflag2);
	free(rc->opdepth);
	memset(rc, 0, sizeof(*rc));
}

int pl_recipe_targets(struct recipe *rc, int32_t n)
{
	size_t cap = rc->cap_t;
	if (n > 0 && (PL_GROW(rc->tb, n - 1, rc->cap_t) || PL_GROW(rc->tv, n - 1, cap)))
		return -1;
	return 0;
}

static int touch(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix, int32_t b,
                 int32_t c)
{
	if (rc->stamp[b] == rc->epoch)
		return 0;
	if (PL_GROW(rc->touched, rc->ntouched, rc->cap_touched))
		return -1;
	int alive = pl_buf_alive(&g->bufs[b], c, g->nops);
	rc->stamp[b] = rc->epoch;
	rc->bflag[b] = alive ? F_ALIVE : 0;
	rc->bflag2[b] = 0;
	rc->lver[b] = alive ? pl_ver_at(g, ix, b, c) : VER_LOST;
	rc->first[b] = rc->last[b] = -1;
	rc->touched[rc->ntouched++] = b;
	return 0;
}

static int add_op(struct recipe *rc, const struct pl_graph *g, int32_t k, int32_t depth)
{
	if (rc->opstamp[k] == rc->epoch)
		return 0;
	if (!g->ops[k].replayable)
		return -1;
	if (PL_GROW(rc->ops, rc->nops, rc->cap_ops) || PL_GROW(rc->work, rc->nwork, rc->cap_work))
		return -1;
	rc->opstamp[k] = rc->epoch;
	rc->opdepth[k] = depth;
	rc->ops[rc->nops++] = k;
	rc->work[rc->nwork++] = k;
	return 0;
}

/* Whether b, alive at c and holding there the version a replay at depth
 * `depth` reads, is rebuilt on the way rather than read where it is. */
static int evicted_at(const struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                      const struct pl_cands *cs, int32_t c, int32_t b, int32_t v, int32_t depth)
{
	if (rc->mapped)
		return !rc->mapped[b];
	const struct pl_buffer *bf = &g->bufs[b];
	return depth < rc->flex && v >= 0 && !bf->excluded && g->ops[v].replayable &&
	       pl_gap_at(cs, ix, b, c, 0) >= 0;
}

/* A replay at depth `depth` reads version v of b: it is resident at c,
 * comes from the stash (the content from before the iteration), or its
 * writer is replayed too. */
static int need(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                const struct pl_cands *cs, int32_t c, int32_t b, int32_t v, int32_t depth)
{
	if (touch(rc, g, ix, b, c))
		return -1;
	uint8_t *f = &rc->bflag[b];
	if (!(*f & F_TARGET) && (*f & F_ALIVE) && pl_ver_at(g, ix, b, c) == v) {
		if (!(rc->bflag2[b] & G_EVICTED) && !evicted_at(rc, g, ix, cs, c, b, v, depth)) {
			*f |= F_RESREAD;
			return 0;
		}
		rc->bflag2[b] |= G_EVICTED;
		return add_op(rc, g, v, depth + 1);
	}
	if (v == PL_VER_PRE) {
		*f |= F_STASH;
		return 0;
	}
	/* excluded: replaying its writers does not give back its bytes */
	if (v < 0 || g->bufs[b].excluded)
		return -1;
	return add_op(rc, g, v, depth + 1);
}

/* Adds what the ops on the work list read, transitively, nearest first
 * (a buffer's depth is that of its first reader). */
static int closure(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                   const struct pl_cands *cs, int32_t c)
{
	for (int32_t h = 0; h < rc->nwork; h++) {
		int32_t k = rc->work[h];
		const struct pl_op *op = &g->ops[k];
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			if ((r->flags & PL_REF_READ) &&
			    need(rc, g, ix, cs, c, r->buf, r->ver, rc->opdepth[k]))
				return -1;
		}
	}
	rc->nwork = 0;
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* Runs the replays in order on the versions: 0 consistent, 1 an op was
 * added (run again), -1 impossible. */
static int simulate(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                    const struct pl_cands *cs, int32_t c)
{
	for (int32_t t = 0; t < rc->ntouched; t++) {
		int32_t b = rc->touched[t];
		uint8_t f = rc->bflag[b] &= (uint8_t)~F_WRITTEN;
		int lost = (f & F_TARGET) || !(f & F_ALIVE) || (rc->bflag2[b] & G_EVICTED);
		rc->lver[b] = lost ? VER_LOST : pl_ver_at(g, ix, b, c);
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
				if (r->ver < 0 || g->bufs[b].excluded || rc->opstamp[r->ver] == rc->epoch)
					return -1;
				return add_op(rc, g, r->ver, rc->opdepth[k] + 1) ||
				               closure(rc, g, ix, cs, c)
				           ? -1
				           : 1;
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
	if (PL_GROW(rc->steps, rc->nsteps, rc->cap_steps))
		return -1;
	rc->steps[rc->nsteps++] = (struct pl_step){kind, arg};
	return 0;
}

/* What each touched buffer needs around the replays, and the gaps that
 * must stay resident. */
static int roles(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                 const struct pl_cands *cs, int32_t c, int strict)
{
	for (int32_t t = 0; t < rc->ntouched; t++) {
		int32_t b = rc->touched[t];
		const struct pl_buffer *bf = &g->bufs[b];
		uint8_t f = rc->bflag[b];
		if (f & F_TARGET) {
			f |= F_MAP;
		} else if (!(f & F_ALIVE) || (rc->bflag2[b] & G_EVICTED)) {
			if (bf->small)
				return -1; /* its bytes may belong to another allocation now */
			f |= F_MAP | F_RELEASE;
		} else {
			if ((f & (F_WRITTEN | F_STASH)) &&
			    (rc->lver[b] != pl_ver_at(g, ix, b, c) || bf->excluded))
				f |= F_SAVE;
			/* Whatever the replays touch in place must be resident at c;
			 * a buffer only read may be rebuilt at c by another
			 * candidate first (unless strict). */
			if (pl_buf_evictable(bf)) {
				int end_ok = strict || (f & (F_WRITTEN | F_STASH));
				int32_t q = pl_gap_at(cs, ix, b, c, end_ok);
				if (q >= 0) {
					if (PL_GROW(rc->forbid, rc->nforbid, rc->cap_forbid))
						return -1;
					rc->forbid[rc->nforbid++] = q;
				}
			}
		}
		if (f & F_STASH) {
			if (PL_GROW(rc->stash, rc->nstash, rc->cap_stash))
				return -1;
			rc->stash[rc->nstash++] = b;
		}
		rc->bflag[b] = f;
	}
	return 0;
}

/* By position (first or last touch), then buffer id: deterministic steps. */
static int by_first(const void *a, const void *b, void *arg)
{
	const int32_t *first = arg;
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	int32_t x = first[i], y = first[j];
	if (x != y)
		return x < y ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Steps: map, save and unstash each buffer just before the first replay
 * that touches it; restore and release it right after the last. */
static int steps(struct recipe *rc, const struct pl_graph *g)
{
	int32_t n = rc->ntouched;
	if (PL_GROW(rc->order, 2 * (size_t)n, rc->cap_order))
		return -1;
	int32_t *byfirst = rc->order, *bylast = rc->order + n;
	memcpy(byfirst, rc->touched, sizeof(int32_t) * n);
	memcpy(bylast, rc->touched, sizeof(int32_t) * n);
	qsort_r(byfirst, n, sizeof(int32_t), by_first, rc->first);
	qsort_r(bylast, n, sizeof(int32_t), by_first, rc->last);
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
			if (f & F_SAVE)
				mem += pl_save_bytes(g, &g->bufs[b]);
			if ((f & F_STASH) && emit(rc, PL_STEP_UNSTASH, b))
				return -1;
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
			if (f & F_SAVE)
				mem -= pl_save_bytes(g, &g->bufs[b]);
			if ((f & F_RELEASE) && emit(rc, PL_STEP_RELEASE, b))
				return -1;
			if (f & F_RELEASE)
				mem -= g->bufs[b].rounded;
		}
	}
	return 0;
}

int pl_recipe_build(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                    const struct pl_cands *cs, int32_t c, int strict)
{
	if (++rc->epoch == 0) { /* wrapped: stale stamps could look current */
		memset(rc->stamp, 0, sizeof(uint32_t) * rc->nbufs_);
		memset(rc->opstamp, 0, sizeof(uint32_t) * rc->nops_);
		rc->epoch = 1;
	}
	rc->nops = rc->nsteps = rc->nforbid = rc->nstash = rc->ntouched = rc->nwork = 0;
	rc->last_op = -1;
	for (int32_t t = 0; t < rc->nt; t++) {
		int32_t b = rc->tb[t];
		if (rc->tv[t] < 0 || rc->tv[t] >= c || touch(rc, g, ix, b, c))
			return -1;
		rc->bflag[b] |= F_TARGET;
		if (add_op(rc, g, rc->tv[t], 0))
			return -1;
	}
	if (closure(rc, g, ix, cs, c))
		return -1;
	for (;;) {
		qsort(rc->ops, rc->nops, sizeof(int32_t), cmp_i32);
		int r = simulate(rc, g, ix, cs, c);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
	}
	if (roles(rc, g, ix, cs, c, strict) || steps(rc, g))
		return -1;
	rc->last_op = rc->nops ? rc->ops[rc->nops - 1] : -1;
	return 0;
}

int32_t pl_stash_at(const struct pl_graph *g, const struct cindex *ix, int32_t b)
{
	int written = ix->wr_off[b] < ix->wr_off[b + 1];
	return pl_stash_pos(&g->bufs[b], written ? ix->writers[ix->wr_off[b]] : -1);
}

int pl_recipe_stash_ranges(const struct recipe *rc, const struct pl_graph *g,
                           const struct cindex *ix, int32_t c, struct pl_range **rg, int32_t *nr,
                           size_t *cap)
{
	for (int32_t i = 0; i < rc->nstash; i++) {
		int32_t b = rc->stash[i];
		int32_t at = pl_stash_at(g, ix, b);
		if (PL_GROW(*rg, *nr, *cap))
			return -1;
		(*rg)[(*nr)++] = (struct pl_range){at < c ? at : c, c, -pl_save_bytes(g, &g->bufs[b])};
	}
	return 0;
}
