/*
 * candidates.c — the decisions a planner chooses from.  A candidate drops
 * one buffer version over one idle gap (between two uses) and rebuilds it
 * before the next use by replaying the ops that wrote it; a segment
 * candidate (segments.c) drops several and rebuilds them in one pass.
 * Each candidate carries its memory effect (bytes saved over position
 * ranges, transient bytes while its steps run), its recompute cost, the
 * exact rebuild steps (recipe.c), and the gaps of other buffers that
 * must stay resident for its replays to read the right versions.
 *
 * A buffer's gaps are its idle stretches between two uses, the stretch
 * from its last use to its free (dead), and, for a buffer dead across
 * the iteration boundary, the stretch from its last use over the
 * boundary to its first use (a full overwrite: mapping it is the whole
 * rebuild).  A version live across the boundary is never dropped there:
 * gaps holding the content from before the iteration get no candidate,
 * and the last version of a buffer that outlives the iteration has no gap
 * after its last use.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define GROW(arr, n, cap)                                                                          \
	do {                                                                                       \
		if (REMAT_GROW(arr, n, cap))                                                       \
			return -1;                                                                 \
	} while (0)

/* ---- indexes over the graph ---- */

int pl_cindex_build(const struct pl_graph *g, struct cindex *ix)
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
	ix->chain = malloc(sizeof(int64_t) * (g->nops > 0 ? (size_t)g->nops : 1));
	if (!ix->chain)
		return -1;
	for (int32_t i = 0; i < g->nops; i++) {
		int64_t c = g->ops[i].duration_ns;
		for (uint32_t k = 0; k < g->ops[i].nrefs; k++) {
			const struct pl_ref *r = &g->refs[g->ops[i].ref_off + k];
			if ((r->flags & PL_REF_READ) && (r->flags & PL_REF_WRITE) && r->ver >= 0)
				c += ix->chain[r->ver];
			if (c > INT64_MAX / 4)
				c = INT64_MAX / 4;
		}
		ix->chain[i] = c;
	}
	ix->coll = malloc(sizeof(int32_t) * ((size_t)g->nops + 1));
	if (!ix->coll)
		return -1;
	ix->coll[0] = 0;
	for (int32_t p = 0; p < g->nops; p++)
		ix->coll[p + 1] = ix->coll[p] + g->ops[p].collective;
	return 0;
}

int pl_idle_spans_collective(const struct cindex *ix, int32_t a, int32_t c)
{
	return ix->coll[c] > ix->coll[a + 1];
}

int32_t pl_ver_at(const struct pl_graph *g, const struct cindex *ix, int32_t b, int32_t p)
{
	const int32_t *w = ix->writers + ix->wr_off[b];
	size_t n = ix->wr_off[b + 1] - ix->wr_off[b];
	size_t i = remat_search_from(w, n, remat_key_i32, remat_key_signed(p));
	return i ? w[i - 1] /* the last writer before p */ : pl_ver_initial(&g->bufs[b]);
}

static uint64_t gap_start(const void *gaps, size_t i)
{
	return remat_key_signed(((const struct pl_gap *)gaps)[i].a);
}

/* The gap of buffer b with a < p < c (or a < p <= c when end_ok), or -1.
 * A boundary gap, the buffer's last, covers p > a and p < c. */
int32_t pl_gap_at(const struct pl_cands *cs, const struct cindex *ix, int32_t b, int32_t p,
                  int end_ok)
{
	uint32_t lo = ix->gap_off[b], hi = ix->gap_off[b + 1];
	if (lo < hi && cs->gaps[hi - 1].boundary) {
		const struct pl_gap *q = &cs->gaps[hi - 1];
		if (p > q->a || p < q->c || (end_ok && p == q->c))
			return (int32_t)(hi - 1);
		hi--;
	}
	uint32_t base = lo; /* below: the first gap with a >= p */
	lo +=
	    (uint32_t)remat_search_from(cs->gaps + base, hi - base, gap_start, remat_key_signed(p));
	if (lo == base)
		return -1;
	const struct pl_gap *q = &cs->gaps[lo - 1];
	return p < q->c || (end_ok && p == q->c) ? (int32_t)(lo - 1) : -1;
}

/* ---- the candidate pool ---- */

/* Whether the ranges save bytes at some position: a rebuild whose stash
 * costs what its eviction saves is no candidate.  The net is constant
 * between range ends, so the starts and the points after the ends are
 * all that need a look. */
static int saves_somewhere(const struct pl_range *r, int n)
{
	for (int i = 0; i < 2 * n; i++) {
		int32_t p = i < n ? r[i].lo : r[i - n].hi + 1;
		int64_t net = 0;
		for (int k = 0; k < n; k++)
			if (r[k].lo <= p && p <= r[k].hi)
				net += r[k].bytes;
		if (net > 0)
			return 1;
	}
	return 0;
}

int pl_cands_add(struct cbuild *cb, const struct pl_cand *proto, const struct pl_range *ranges,
                 const int32_t *gaps, const struct recipe *rc)
{
	struct pl_cands *cs = cb->cs;
	int nranges = (int)proto->nranges, ngaps = (int)proto->ngaps;
	if (!saves_somewhere(ranges, nranges))
		return 1;
	uint32_t nforbid = rc ? (uint32_t)rc->nforbid : 0, nsteps = rc ? (uint32_t)rc->nsteps : 0;
	/* (room for n more: REMAT_GROW makes room for one past its index) */
	GROW(cs->c, (size_t)cs->ncands, cb->cap_c);
	GROW(cs->ranges, (size_t)cs->nranges + (size_t)nranges, cb->cap_r);
	GROW(cs->gap_list, (size_t)cs->ngap_list + (size_t)ngaps, cb->cap_g);
	GROW(cs->forbid_list, (size_t)cs->nforbid_list + nforbid, cb->cap_f);
	GROW(cs->steps, (size_t)cs->nsteps + nsteps, cb->cap_s);
	struct pl_cand *x = &cs->c[cs->ncands];
	*x = *proto;
	x->range_off = cs->nranges;
	x->nranges = (uint32_t)nranges;
	x->gap_off = cs->ngap_list;
	x->ngaps = (uint32_t)ngaps;
	x->forbid_off = cs->nforbid_list;
	x->nforbid = nforbid;
	x->step_off = cs->nsteps;
	x->nsteps = nsteps;
	if (nranges)
		memcpy(&cs->ranges[cs->nranges], ranges, sizeof(*ranges) * (size_t)nranges);
	cs->nranges += (uint32_t)nranges;
	if (ngaps)
		memcpy(&cs->gap_list[cs->ngap_list], gaps, sizeof(*gaps) * (size_t)ngaps);
	cs->ngap_list += (uint32_t)ngaps;
	if (nforbid)
		memcpy(&cs->forbid_list[cs->nforbid_list], rc->forbid, sizeof(int32_t) * nforbid);
	cs->nforbid_list += nforbid;
	if (nsteps)
		memcpy(&cs->steps[cs->nsteps], rc->steps, sizeof(struct pl_step) * nsteps);
	cs->nsteps += nsteps;
	cs->ncands++;
	return 0;
}

/* Adds gap q, with the bytes the candidates' model counts for its buffer. */
static int add_gap(struct cbuild *cb, const struct pl_graph *g, struct pl_gap q)
{
	struct pl_cands *cs = cb->cs;
	GROW(cs->gaps, (size_t)cs->ngaps, cb->cap_gaps);
	q.bytes = pl_model_bytes(g, q.buf);
	cs->gaps[cs->ngaps++] = q;
	return 0;
}

static int build_gaps(const struct pl_graph *g, struct cindex *ix, struct cbuild *cb, int v2)
{
	ix->gap_off = calloc((size_t)g->nbufs + 1, sizeof(uint32_t));
	if (!ix->gap_off)
		return -1;
	for (int32_t b = 0; b < g->nbufs; b++) {
		ix->gap_off[b] = (uint32_t)cb->cs->ngaps;
		if (!pl_buf_evictable(&g->bufs[b]))
			continue;
		uint32_t u0 = ix->use_off[b], u1 = ix->use_off[b + 1];
		for (uint32_t u = u0; u + 1 < u1; u++) {
			int32_t a = ix->uses[u], c = ix->uses[u + 1],
			        v = pl_ver_at(g, ix, b, a + 1), rv = 0;
			/* Overwritten whole at c before anyone reads it: the content
			 * is dead after a, and mapping the buffer again before c is
			 * the whole rebuild (a region of a long-lived allocation
			 * between two tensors the program keeps there; as a freed
			 * and reallocated buffer is under cudaMallocAsync). */
			if (v != PL_VER_PRE && !(pl_ref_flags(g, c, b, &rv) & PL_REF_READ))
				v = PL_VER_FRESH;
			/* the content from before the iteration is kept: no gap */
			if (c - a >= 2 && v != PL_VER_PRE && !pl_idle_spans_collective(ix, a, c) &&
			    add_gap(cb, g, (struct pl_gap){b, a, c, v, 0, 0, 0}))
				return -1;
		}
		int32_t f = g->bufs[b].free_at;
		if (u1 > u0 && f >= 0 && f - ix->uses[u1 - 1] >= 2 &&
		    add_gap(cb, g, (struct pl_gap){b, ix->uses[u1 - 1], f, 0, 1, 0, 0}))
			return -1;
		/* Dead across the boundary: idle from its last use to its first
		 * (at least one position on either side of the boundary). */
		int32_t first = u1 > u0 ? ix->uses[u0] : -1, last = u1 > u0 ? ix->uses[u1 - 1] : -1;
		if (v2 && g->bufs[b].dead_across && first >= 0 &&
		    (first > 0 || last < g->nops - 1) &&
		    add_gap(cb, g, (struct pl_gap){b, last, first, PL_VER_FRESH, 0, 1, 0}))
			return -1;
	}
	ix->gap_off[g->nbufs] = (uint32_t)cb->cs->ngaps;
	return 0;
}

static int build_singles(struct pl_setb *sb, int no_replay)
{
	const struct pl_graph *g = sb->g;
	struct cindex *ix = sb->ix;
	struct recipe *rc = sb->rc;
	struct pl_cands *cs = sb->cb->cs;
	struct pl_ranges rg = {0};
	int rcode = -1;
	ix->single = malloc(sizeof(int32_t) * (cs->ngaps ? cs->ngaps : 1));
	if (!ix->single || REMAT_GROW(rg.r, 2, rg.cap) || pl_recipe_targets(rc, 1))
		goto out;
	for (int32_t q = 0; q < cs->ngaps; q++) {
		const struct pl_gap *gp = &cs->gaps[q];
		const struct pl_buffer *bf = &g->bufs[gp->buf];
		ix->single[q] = -1;
		rg.n = 0;
		struct pl_cand proto = {.at = gp->c, .order_key = -1};
		const struct recipe *with = rc;
		if (gp->boundary) {
			/* after the last use to the end, and from the start to the first */
			if (gp->a + 1 <= g->nops - 1)
				rg.r[rg.n++] = (struct pl_range){gp->a + 1, g->nops - 1, gp->bytes};
			if (gp->c >= 1)
				rg.r[rg.n++] = (struct pl_range){0, gp->c - 1, gp->bytes};
		} else {
			rg.r[rg.n++] = (struct pl_range){gp->a + 1, gp->c - 1, gp->bytes};
		}
		if (gp->dead) {
			proto.at = -1;
			with = NULL;
		} else if (gp->ver == PL_VER_FRESH) {
			/* Never written yet (or dead content): mapping it again is the
			 * whole rebuild. */
			rc->nforbid = 0;
			rc->nsteps = 0;
			if (REMAT_GROW(rc->steps, 0, rc->cap_steps))
				goto out;
			rc->steps[rc->nsteps++] = (struct pl_step){PL_STEP_MAP, gp->buf};
		} else if (gp->ver >= 0 && !no_replay) {
			rc->nt = 1;
			rc->tb[0] = gp->buf;
			rc->tv[0] = gp->ver;
			rc->save_bytes = bf->rounded;
			rc->save_from = gp->a + 1;
			int r = pl_recipe_build(rc, g, ix, cs, gp->c);
			rc->save_bytes = 0;
			if (r)
				continue;
			proto.cost = rc->cost;
			proto.transient = rc->transient;
			proto.order_key = rc->last_op;
			if (pl_recipe_stash_ranges(rc, g, gp->c, &rg))
				goto out;
		} else {
			continue;
		}
		proto.nranges = (uint32_t)rg.n;
		proto.ngaps = 1;
		int added = pl_cands_add(sb->cb, &proto, rg.r, &q, with);
		if (added < 0)
			goto out;
		if (added == 0)
			ix->single[q] = cs->ncands - 1;
	}
	rcode = 0;
out:
	free(rg.r);
	return rcode;
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

int pl_cands_reindex(struct pl_cands *cs)
{
	free(cs->by_gap_off);
	free(cs->by_gap);
	free(cs->forbid_by_off);
	free(cs->forbid_by);
	cs->by_gap_off = cs->forbid_by_off = NULL;
	cs->by_gap = cs->forbid_by = NULL;
	return build_reverse(cs);
}

int pl_cindex_gaps(const struct pl_graph *g, const struct pl_cands *cs, struct cindex *ix)
{
	free(ix->gap_off);
	ix->gap_off = malloc(sizeof(uint32_t) * ((size_t)g->nbufs + 1));
	if (!ix->gap_off)
		return -1;
	int32_t q = 0;
	for (int32_t b = 0; b <= g->nbufs; b++) {
		while (q < cs->ngaps && cs->gaps[q].buf < b)
			q++;
		ix->gap_off[b] = (uint32_t)q;
	}
	return 0;
}

void pl_cindex_free(struct cindex *ix)
{
	free(ix->wr_off);
	free(ix->writers);
	free(ix->use_off);
	free(ix->uses);
	free(ix->gap_off);
	free(ix->single);
	free(ix->chain);
	free(ix->coll);
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

int pl_cands_build(const struct pl_graph *g, const struct pl_options *o, struct pl_cands *cs,
                   char *err, size_t errlen)
{
	memset(cs, 0, sizeof(*cs));
	struct cindex ix = {0};
	struct recipe rc;
	struct cbuild cb = {.cs = cs};
	struct pl_setb sb = {.cb = &cb, .g = g, .ix = &ix, .rc = &rc, .strict = o && o->strict};
	int rcode = -1;
	if (pl_recipe_init(&rc, g) || pl_cindex_build(g, &ix))
		goto out;
	/* A candidate that alone costs more than a quarter of the iteration
	 * is never part of a plan cheaper than that; the walk (planners/sim.c), which
	 * has no candidates, covers budgets that need such rebuilds.  Without
	 * this, the accumulation chain of a weight gradient makes every
	 * gradient's rebuild replay the backward pass up to it: O(ops^2). */
	rc.cost_limit = g->iteration_ns / 4 > 0 ? g->iteration_ns / 4 : 1;
	int v2 = !o || o->plan_version >= 2;
	rc.no_stash = !v2;
	rc.strict = sb.strict;
	int no_replay = o && o->offload_only && o->offload_gbps > 0;
	if (build_gaps(g, &ix, &cb, v2) || build_singles(&sb, no_replay))
		goto out;
	if ((!o || o->segments) && !no_replay &&
	    pl_segments_build(&sb, o && o->max_segment ? o->max_segment : 8))
		goto out;
	if (o && o->offload_gbps > 0 && pl_offload_build(g, &cb, o->offload_gbps))
		goto out;
	cs->offload_gbps = o ? o->offload_gbps : 0;
	if (build_reverse(cs))
		goto out;
	rcode = 0;
out:
	free(sb.rg.r);
	pl_recipe_free(&rc);
	pl_cindex_free(&ix);
	if (rcode) {
		pl_cands_free(cs);
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory building candidates");
	}
	return PL_OK;
}
