/*
 * candidates.c — the decisions a planner chooses from.  A candidate drops
 * one buffer version over one idle gap (between two uses) and rebuilds it
 * before the next use by replaying the ops that wrote it; a segment
 * candidate (segments.c) drops several and rebuilds them in one pass.
 * Each candidate carries its memory effect (bytes saved over position
 * ranges, transient bytes while its steps run), its recompute cost, the
 * exact rebuild steps, and the gaps of other buffers that must stay
 * resident for its replays to read the right versions.
 */
#include "cands_internal.h"

#include <stdlib.h>
#include <string.h>

#define GROW(arr, n, cap)                                                                          \
	do {                                                                                       \
		if ((n) >= (cap)) {                                                                \
			size_t nc_ = (cap) ? (size_t)(cap)*2 : 1024;                               \
			void *np_ = realloc((arr), nc_ * sizeof(*(arr)));                          \
			if (!np_)                                                                  \
				return -1;                                                         \
			(arr) = np_;                                                               \
			(cap) = nc_;                                                               \
		}                                                                                  \
	} while (0)

/* ---- indexes over the graph ---- */

static int build_index(const struct pl_graph *g, struct cindex *ix)
{
	int32_t nb = g->nbufs ? g->nbufs : 1;
	ix->wr_off = calloc((size_t)nb + 1, sizeof(uint32_t));
	ix->use_off = calloc((size_t)nb + 1, sizeof(uint32_t));
	if (!ix->wr_off || !ix->use_off)
		return -1;
	for (int32_t i = 0; i < g->nops; i++)
		for (uint32_t k = 0; k < g->ops[i].nrefs; k++) {
			const struct pl_ref *r = &g->refs[g->ops[i].ref_off + k];
			ix->use_off[r->buf + 1]++;
			if (r->flags & PL_REF_WRITE)
				ix->wr_off[r->buf + 1]++;
		}
	for (int32_t b = 0; b < g->nbufs; b++) {
		ix->use_off[b + 1] += ix->use_off[b];
		ix->wr_off[b + 1] += ix->wr_off[b];
	}
	ix->uses = malloc(sizeof(int32_t) * (ix->use_off[g->nbufs] + 1));
	ix->writers = malloc(sizeof(int32_t) * (ix->wr_off[g->nbufs] + 1));
	uint32_t *fu = malloc(sizeof(uint32_t) * nb), *fw = malloc(sizeof(uint32_t) * nb);
	if (!ix->uses || !ix->writers || !fu || !fw) {
		free(fu);
		free(fw);
		return -1;
	}
	memcpy(fu, ix->use_off, sizeof(uint32_t) * g->nbufs);
	memcpy(fw, ix->wr_off, sizeof(uint32_t) * g->nbufs);
	for (int32_t i = 0; i < g->nops; i++)
		for (uint32_t k = 0; k < g->ops[i].nrefs; k++) {
			const struct pl_ref *r = &g->refs[g->ops[i].ref_off + k];
			ix->uses[fu[r->buf]++] = i;
			if (r->flags & PL_REF_WRITE)
				ix->writers[fw[r->buf]++] = i;
		}
	free(fu);
	free(fw);
	return 0;
}

int32_t pl_ver_at(const struct pl_graph *g, const struct cindex *ix, int32_t b, int32_t p)
{
	uint32_t lo = ix->wr_off[b], hi = ix->wr_off[b + 1];
	/* last writer < p */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ix->writers[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > ix->wr_off[b])
		return ix->writers[lo - 1];
	return g->bufs[b].alloc_at < 0 ? PL_VER_PRE : PL_VER_FRESH;
}

/* The gap of buffer b with a < p < c (or a < p <= c when end_ok), or -1. */
int32_t pl_gap_at(const struct pl_cands *cs, const struct cindex *ix, int32_t b, int32_t p,
                  int end_ok)
{
	uint32_t lo = ix->gap_off[b], hi = ix->gap_off[b + 1];
	while (lo < hi) { /* first gap with a >= p */
		uint32_t mid = lo + (hi - lo) / 2;
		if (cs->gaps[mid].a < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ix->gap_off[b])
		return -1;
	const struct pl_gap *q = &cs->gaps[lo - 1];
	return p < q->c || (end_ok && p == q->c) ? (int32_t)(lo - 1) : -1;
}

/* ---- recipes ---- */

enum role { R_TARGET = 1, R_INTER_MAP, R_INTER_SAVE, R_EXT, R_SIDE_MAP, R_SIDE_SAVE };

#define VER_LOST (-3)

static int in_list(const int32_t *l, int n, int32_t x)
{
	for (int i = 0; i < n; i++)
		if (l[i] == x)
			return 1;
	return 0;
}

static int add_chain(struct recipe *rc, const struct cindex *ix, int32_t b, int32_t v)
{
	int n = 0;
	for (uint32_t w = ix->wr_off[b]; w < ix->wr_off[b + 1] && ix->writers[w] <= v; w++) {
		if (++n > RC_MAX_CHAIN || rc->nops >= RC_MAX_OPS)
			return -1;
		if (!in_list(rc->ops, rc->nops, ix->writers[w]))
			rc->ops[rc->nops++] = ix->writers[w];
	}
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static void touch(struct recipe *rc, int32_t b, int role, int32_t ver, int32_t k)
{
	rc->stamp[b] = rc->epoch;
	rc->role[b] = (uint8_t)role;
	rc->lver[b] = ver;
	rc->first[b] = k;
	rc->touched[rc->ntouched++] = b;
}

/* One simulation pass: 0 done, 1 retry (an intermediate was added), -1 fail. */
static int simulate(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix, int32_t c)
{
	rc->epoch++;
	rc->ntouched = 0;
	for (int t = 0; t < rc->nt; t++)
		touch(rc, rc->tb[t], R_TARGET, VER_LOST, -1);
	for (int t = 0; t < rc->ni; t++)
		touch(rc, rc->ib[t],
		      pl_buf_alive(&g->bufs[rc->ib[t]], c, g->nops) ? R_INTER_SAVE : R_INTER_MAP,
		      VER_LOST, -1);
	for (int o = 0; o < rc->nops; o++) {
		int32_t k = rc->ops[o];
		const struct pl_op *op = &g->ops[k];
		if (!op->replayable)
			return -1;
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			int32_t b = r->buf;
			const struct pl_buffer *bf = &g->bufs[b];
			if (rc->stamp[b] != rc->epoch) {
				if (rc->ntouched >= RC_MAX_TOUCH)
					return -1;
				if (pl_buf_alive(bf, c, g->nops)) {
					touch(rc, b, R_EXT, pl_ver_at(g, ix, b, c), k);
				} else if (!(r->flags & PL_REF_READ)) {
					if (bf->small)
						return -1; /* its bytes may belong to another */
					touch(rc, b, R_SIDE_MAP, VER_LOST, k);
				} else {
					if (bf->small || bf->excluded || rc->ni >= RC_MAX_INTER)
						return -1;
					rc->ib[rc->ni] = b;
					rc->iv[rc->ni++] = r->ver;
					return add_chain(rc, ix, b, r->ver) ? -1 : 1;
				}
			} else if (rc->first[b] < 0) {
				rc->first[b] = k;
			}
			if ((r->flags & PL_REF_READ) && rc->lver[b] != r->ver) {
				/* An older version of a live buffer: rebuild it aside. */
				if (rc->role[b] != R_EXT || bf->small || bf->excluded ||
				    rc->ni >= RC_MAX_INTER || r->ver < 0)
					return -1;
				rc->ib[rc->ni] = b;
				rc->iv[rc->ni++] = r->ver;
				return add_chain(rc, ix, b, r->ver) ? -1 : 1;
			}
		}
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			if (!(r->flags & PL_REF_WRITE))
				continue;
			if (rc->role[r->buf] == R_EXT)
				rc->role[r->buf] = R_SIDE_SAVE;
			rc->lver[r->buf] = k;
		}
	}
	for (int t = 0; t < rc->nt; t++)
		if (rc->lver[rc->tb[t]] != rc->tv[t])
			return -1;
	return 0;
}

static void emit(struct recipe *rc, int kind, int32_t arg)
{
	if (rc->nsteps < RC_MAX_STEPS)
		rc->steps[rc->nsteps++] = (struct pl_step){kind, arg};
	else
		rc->overflow = 1;
}

static int needs_save(const struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                      int32_t b, int32_t c)
{
	if (rc->role[b] == R_INTER_SAVE)
		return 1;
	return rc->role[b] == R_SIDE_SAVE && rc->lver[b] != pl_ver_at(g, ix, b, c);
}

int pl_recipe_build(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                    const struct pl_cands *cs, int32_t c, int strict)
{
	rc->nops = rc->ni = rc->nsteps = rc->nforbid = rc->overflow = 0;
	for (int t = 0; t < rc->nt; t++)
		if (add_chain(rc, ix, rc->tb[t], rc->tv[t]))
			return -1;
	int r;
	for (int iter = 0;; iter++) {
		if (iter > RC_MAX_INTER + 1)
			return -1;
		qsort(rc->ops, rc->nops, sizeof(int32_t), cmp_i32);
		r = simulate(rc, g, ix, c);
		if (r <= 0)
			break;
	}
	if (r < 0)
		return -1;
	/* Steps: map or save each buffer just before the first replay that
	 * touches it, then the replay; restore and release at the end. */
	rc->transient = 0;
	rc->cost = 0;
	for (int o = 0; o < rc->nops; o++) {
		int32_t k = rc->ops[o];
		const struct pl_op *op = &g->ops[k];
		for (int t = 0; t < rc->ntouched; t++) {
			int32_t b = rc->touched[t];
			if (rc->first[b] != k)
				continue;
			int role = rc->role[b];
			if (role == R_TARGET || role == R_INTER_MAP || role == R_SIDE_MAP)
				emit(rc, PL_STEP_MAP, b);
			if (needs_save(rc, g, ix, b, c))
				emit(rc, PL_STEP_SAVE, b);
		}
		emit(rc, PL_STEP_REPLAY, k);
		rc->cost += op->duration_ns;
	}
	for (int t = 0; t < rc->ntouched; t++) {
		int32_t b = rc->touched[t];
		const struct pl_buffer *bf = &g->bufs[b];
		if (needs_save(rc, g, ix, b, c)) {
			emit(rc, PL_STEP_RESTORE, b);
			rc->transient += pl_save_bytes(g, bf);
		}
		if (rc->role[b] == R_INTER_MAP || rc->role[b] == R_SIDE_MAP) {
			emit(rc, PL_STEP_RELEASE, b);
			rc->transient += bf->rounded;
		}
		/* Whatever the replays touch in place must be resident at c. */
		int role = rc->role[b];
		if ((role == R_EXT || role == R_SIDE_SAVE || role == R_INTER_SAVE) &&
		    pl_buf_evictable(bf)) {
			int end_ok = strict || role != R_EXT;
			int32_t q = pl_gap_at(cs, ix, b, c, end_ok);
			if (q >= 0) {
				if (rc->nforbid >= RC_MAX_TOUCH)
					return -1;
				rc->forbid[rc->nforbid++] = q;
			}
		}
	}
	rc->last_op = rc->nops ? rc->ops[rc->nops - 1] : -1;
	return rc->overflow ? -1 : 0;
}

/* ---- the candidate pool ---- */

int pl_cands_add(struct cbuild *cb, const struct pl_cand *proto, const struct pl_range *ranges,
                 int nranges, const int32_t *gaps, int ngaps, const struct recipe *rc)
{
	struct pl_cands *cs = cb->cs;
	GROW(cs->c, (size_t)cs->ncands, cb->cap_c);
	struct pl_cand *x = &cs->c[cs->ncands];
	*x = *proto;
	x->range_off = cs->nranges;
	x->nranges = (uint32_t)nranges;
	for (int i = 0; i < nranges; i++) {
		GROW(cs->ranges, cs->nranges, cb->cap_r);
		cs->ranges[cs->nranges++] = ranges[i];
	}
	x->gap_off = cs->ngap_list;
	x->ngaps = (uint32_t)ngaps;
	for (int i = 0; i < ngaps; i++) {
		GROW(cs->gap_list, cs->ngap_list, cb->cap_g);
		cs->gap_list[cs->ngap_list++] = gaps[i];
	}
	x->forbid_off = cs->nforbid_list;
	x->nforbid = rc ? (uint32_t)rc->nforbid : 0;
	x->step_off = cs->nsteps;
	x->nsteps = rc ? (uint32_t)rc->nsteps : 0;
	for (int i = 0; rc && i < rc->nforbid; i++) {
		GROW(cs->forbid_list, cs->nforbid_list, cb->cap_f);
		cs->forbid_list[cs->nforbid_list++] = rc->forbid[i];
	}
	for (int i = 0; rc && i < rc->nsteps; i++) {
		GROW(cs->steps, cs->nsteps, cb->cap_s);
		cs->steps[cs->nsteps++] = rc->steps[i];
	}
	cs->ncands++;
	return 0;
}

static int add_gap(struct cbuild *cb, const struct pl_graph *g, int32_t b, int32_t a, int32_t c,
                   int32_t ver, int dead)
{
	struct pl_cands *cs = cb->cs;
	GROW(cs->gaps, (size_t)cs->ngaps, cb->cap_gaps);
	cs->gaps[cs->ngaps++] = (struct pl_gap){b, a, c, ver, (uint8_t)dead, g->bufs[b].rounded};
	return 0;
}

static int build_gaps(const struct pl_graph *g, struct cindex *ix, struct cbuild *cb)
{
	ix->gap_off = calloc((size_t)g->nbufs + 1, sizeof(uint32_t));
	/* coll[p]: collectives among ops 0 .. p-1; a gap (a, c) spans one when
	 * coll[c] > coll[a + 1]. */
	int32_t *coll = malloc(((size_t)g->nops + 1) * sizeof(*coll));
	if (!ix->gap_off || !coll) {
		free(coll);
		return -1;
	}
	coll[0] = 0;
	for (int32_t p = 0; p < g->nops; p++)
		coll[p + 1] = coll[p] + g->ops[p].collective;
	for (int32_t b = 0; b < g->nbufs; b++) {
		ix->gap_off[b] = (uint32_t)cb->cs->ngaps;
		if (!pl_buf_evictable(&g->bufs[b]))
			continue;
		uint32_t u0 = ix->use_off[b], u1 = ix->use_off[b + 1];
		for (uint32_t u = u0; u + 1 < u1; u++) {
			int32_t a = ix->uses[u], c = ix->uses[u + 1];
			if (c - a >= 2 && coll[c] == coll[a + 1] &&
			    add_gap(cb, g, b, a, c, pl_ver_at(g, ix, b, a + 1), 0))
				goto fail;
		}
		int32_t f = g->bufs[b].free_at;
		if (u1 > u0 && f >= 0 && f - ix->uses[u1 - 1] >= 2 &&
		    add_gap(cb, g, b, ix->uses[u1 - 1], f, 0, 1))
			goto fail;
	}
	ix->gap_off[g->nbufs] = (uint32_t)cb->cs->ngaps;
	free(coll);
	return 0;
fail:
	free(coll);
	return -1;
}

static int build_singles(const struct pl_graph *g, struct cindex *ix, struct cbuild *cb,
                         struct recipe *rc, int strict)
{
	struct pl_cands *cs = cb->cs;
	ix->single = malloc(sizeof(int32_t) * (cs->ngaps ? cs->ngaps : 1));
	if (!ix->single)
		return -1;
	for (int32_t q = 0; q < cs->ngaps; q++) {
		const struct pl_gap *gp = &cs->gaps[q];
		const struct pl_buffer *bf = &g->bufs[gp->buf];
		ix->single[q] = -1;
		struct pl_range rg = {gp->a + 1, gp->c - 1, bf->rounded};
		struct pl_cand proto = {0};
		if (gp->dead) {
			proto.at = -1;
			proto.order_key = -1;
			if (pl_cands_add(cb, &proto, &rg, 1, &q, 1, NULL))
				return -1;
		} else if (gp->ver == PL_VER_FRESH) {
			/* Never written yet: mapping it again is the whole rebuild. */
			rc->nforbid = 0;
			rc->nsteps = 1;
			rc->steps[0] = (struct pl_step){PL_STEP_MAP, gp->buf};
			proto.at = gp->c;
			proto.order_key = -1;
			if (pl_cands_add(cb, &proto, &rg, 1, &q, 1, rc))
				return -1;
		} else if (gp->ver >= 0) {
			rc->nt = 1;
			rc->tb[0] = gp->buf;
			rc->tv[0] = gp->ver;
			if (pl_recipe_build(rc, g, ix, cs, gp->c, strict))
				continue;
			proto.at = gp->c;
			proto.cost = rc->cost;
			proto.transient = rc->transient;
			proto.order_key = rc->last_op;
			if (pl_cands_add(cb, &proto, &rg, 1, &q, 1, rc))
				return -1;
		} else {
			continue;
		}
		ix->single[q] = cs->ncands - 1;
	}
	return 0;
}

static int build_reverse(struct pl_cands *cs)
{
	int32_t ng = cs->ngaps;
	cs->by_gap_off = calloc((size_t)ng + 1, sizeof(uint32_t));
	cs->forbid_by_off = calloc((size_t)ng + 1, sizeof(uint32_t));
	cs->by_gap = malloc(sizeof(int32_t) * (cs->ngap_list + 1));
	cs->forbid_by = malloc(sizeof(int32_t) * (cs->nforbid_list + 1));
	uint32_t *f1 = malloc(sizeof(uint32_t) * ((size_t)ng + 1));
	uint32_t *f2 = malloc(sizeof(uint32_t) * ((size_t)ng + 1));
	if (!cs->by_gap_off || !cs->forbid_by_off || !cs->by_gap || !cs->forbid_by || !f1 || !f2) {
		free(f1);
		free(f2);
		return -1;
	}
	for (uint32_t i = 0; i < cs->ngap_list; i++)
		cs->by_gap_off[cs->gap_list[i] + 1]++;
	for (uint32_t i = 0; i < cs->nforbid_list; i++)
		cs->forbid_by_off[cs->forbid_list[i] + 1]++;
	for (int32_t q = 0; q < ng; q++) {
		cs->by_gap_off[q + 1] += cs->by_gap_off[q];
		cs->forbid_by_off[q + 1] += cs->forbid_by_off[q];
	}
	memcpy(f1, cs->by_gap_off, sizeof(uint32_t) * ((size_t)ng + 1));
	memcpy(f2, cs->forbid_by_off, sizeof(uint32_t) * ((size_t)ng + 1));
	for (int32_t j = 0; j < cs->ncands; j++) {
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t i = 0; i < x->ngaps; i++)
			cs->by_gap[f1[cs->gap_list[x->gap_off + i]]++] = j;
		for (uint32_t i = 0; i < x->nforbid; i++)
			cs->forbid_by[f2[cs->forbid_list[x->forbid_off + i]]++] = j;
	}
	free(f1);
	free(f2);
	return 0;
}

void pl_cands_free(struct pl_cands *cs)
{
	free(cs->gaps);
	free(cs->c);
	free(cs->ranges);
	free(cs->gap_list);
	free(cs->forbid_list);
	free(cs->steps);
	free(cs->by_gap_off);
	free(cs->by_gap);
	free(cs->forbid_by_off);
	free(cs->forbid_by);
	memset(cs, 0, sizeof(*cs));
}

int pl_recipe_init(struct recipe *rc, int32_t nbufs)
{
	memset(rc, 0, sizeof(*rc));
	size_t n = nbufs ? (size_t)nbufs : 1;
	rc->stamp = calloc(n, sizeof(uint32_t));
	rc->lver = malloc(n * sizeof(int32_t));
	rc->first = malloc(n * sizeof(int32_t));
	rc->role = malloc(n);
	return rc->stamp && rc->lver && rc->first && rc->role ? 0 : -1;
}

void pl_recipe_free(struct recipe *rc)
{
	free(rc->stamp);
	free(rc->lver);
	free(rc->first);
	free(rc->role);
}

static void free_index(struct cindex *ix)
{
	free(ix->wr_off);
	free(ix->writers);
	free(ix->use_off);
	free(ix->uses);
	free(ix->gap_off);
	free(ix->single);
}

int pl_cands_build(const struct pl_graph *g, const struct pl_options *o, struct pl_cands *cs,
                   char *err, size_t errlen)
{
	memset(cs, 0, sizeof(*cs));
	struct cindex ix = {0};
	struct cbuild cb = {.cs = cs};
	struct recipe rc;
	int strict = o && o->strict;
	int rcode = -1;
	if (pl_recipe_init(&rc, g->nbufs) || build_index(g, &ix) || build_gaps(g, &ix, &cb) ||
	    build_singles(g, &ix, &cb, &rc, strict))
		goto out;
	if ((!o || o->segments) &&
	    pl_segments_build(g, &ix, &cb, &rc, strict, o && o->max_segment ? o->max_segment : 8))
		goto out;
	if (build_reverse(cs))
		goto out;
	rcode = 0;
out:
	pl_recipe_free(&rc);
	free_index(&ix);
	if (rcode) {
		pl_cands_free(cs);
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory building candidates");
	}
	return PL_OK;
}
