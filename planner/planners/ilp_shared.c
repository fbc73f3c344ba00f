/*
 * ilp_shared.c — chunks that regions share (model/shared.c), exactly, in the
 * MILP.
 *
 * The candidates count evicting a buffer as saving its own bytes and an
 * equal share of each chunk group it is in (pl_model_bytes): right when
 * a group's buffers are out together, too much when one is out and its
 * neighbour is not.  With tensors packed at 512-byte steps (gpt --alloc
 * vmm) half of a region's bytes can sit in such chunks, and a selection
 * the MILP finds within the budget then lands megabytes over it.  So
 * here each candidate's eviction of a buffer saves its own bytes only
 * (a correction range takes the shares back out), and a continuous
 * column z(s, i) in [0, 1] per group s and memory position i saves the
 * group's bytes, bounded by how much each of the group's buffers is out
 * there: z(s, i) <= sum of the chosen candidates evicting b over i, for
 * every b of s.  With the candidates' columns whole, z is 1 exactly when
 * all of the group is out, as the evaluator counts it.
 */
#include "ilp_internal.h"

#include <stdlib.h>
#include <string.h>

/* The share of the freeable groups pl_model_bytes adds for b. */
static int64_t shares(const struct pl_graph *g, int32_t b)
{
	const struct pl_buffer *bf = &g->bufs[b];
	int64_t d = 0;
	for (int k = 0; k < 2 && bf->shared[k]; k++) {
		int32_t s = (int32_t)bf->shared[k] - 1;
		if (pl_shared_freeable(g, s))
			d += g->shared[s].bytes / g->shared[s].n;
	}
	return d;
}

static int push_evict(struct ilp_shared *sh, int32_t b, int32_t j, int32_t lo, int32_t hi)
{
	if (lo > hi)
		return 0;
	if (REMAT_GROW(sh->ev, sh->nev, sh->cap_ev))
		return -1;
	sh->ev[sh->nev++] = (struct ilp_evict){b, j, lo, hi};
	return 0;
}

static int cmp_evict(const void *a, const void *b)
{
	const struct ilp_evict *x = a, *y = b;
	return x->buf != y->buf ? (x->buf > y->buf) - (x->buf < y->buf)
	                        : (x->cand > y->cand) - (x->cand < y->cand);
}

/* Where candidate j keeps gap q's buffer out (as cands/candidates.c and
 * cands/segments.c make their ranges): from after its last use to before the
 * rebuild, or over the boundary. */
static int evictions(const struct pl_graph *g, const struct pl_cands *cs, struct ilp_shared *sh,
                     int32_t j, int32_t q)
{
	const struct pl_gap *gp = &cs->gaps[q];
	const struct pl_cand *x = &cs->c[j];
	if (x->offload) /* unmapped after evict_at, mapped again at fetch_at */
		return push_evict(sh, gp->buf, j, x->evict_at + 1, x->fetch_at - 1);
	if (gp->boundary)
		return push_evict(sh, gp->buf, j, gp->a + 1, g->nops - 1) ||
		       push_evict(sh, gp->buf, j, 0, gp->c - 1);
	return push_evict(sh, gp->buf, j, gp->a + 1, (x->at >= 0 ? x->at : gp->c) - 1);
}

/* Whether b is out at position p by some candidate (ev sorted by buffer). */
static int coverable(const struct ilp_shared *sh, int32_t b, int32_t p)
{
	for (uint32_t e = sh->ev_off[b]; e < sh->ev_off[b + 1]; e++)
		if (sh->ev[e].lo <= p && p <= sh->ev[e].hi)
			return 1;
	return 0;
}

/* Whether the same candidates keep each buffer of group gs out at
 * positions p and q. */
static int same_cover(const struct pl_graph *g, const struct ilp_shared *sh,
                      const struct pl_shared *gs, int32_t p, int32_t q)
{
	for (uint32_t k = 0; k < gs->n; k++) {
		int32_t b = g->shared_bufs[gs->off + k];
		for (uint32_t e = sh->ev_off[b]; e < sh->ev_off[b + 1]; e++) {
			const struct ilp_evict *ev = &sh->ev[e];
			if ((ev->lo <= p && p <= ev->hi) != (ev->lo <= q && q <= ev->hi))
				return 0;
		}
	}
	return 1;
}

int pl_ilp_shared_build(const struct pl_graph *g, const struct pl_cands *cs, const int32_t *rows,
                        int32_t nmem, struct ilp_shared *sh)
{
	memset(sh, 0, sizeof(*sh));
	if (!g->nshared)
		return 0;
	int32_t N = cs->ncands;
	sh->fix_off = calloc((size_t)N + 1, sizeof(uint32_t));
	sh->ev_off = calloc((size_t)g->nbufs + 1, sizeof(uint32_t));
	if (!sh->fix_off || !sh->ev_off)
		return -1;
	size_t cap_fix = 0;
	for (int32_t j = 0; j < N; j++) {
		const struct pl_cand *x = &cs->c[j];
		sh->fix_off[j] = (uint32_t)sh->nfix;
		for (uint32_t k = 0; k < x->ngaps; k++) {
			int32_t q = cs->gap_list[x->gap_off + k];
			int32_t b = cs->gaps[q].buf;
			int64_t s = shares(g, b);
			if (!s)
				continue;
			size_t first = sh->nev;
			if (evictions(g, cs, sh, j, q))
				return -1;
			for (size_t e = first; e < sh->nev; e++) {
				if (REMAT_GROW(sh->fix, sh->nfix, cap_fix))
					return -1;
				sh->fix[sh->nfix++] =
				    (struct pl_range){sh->ev[e].lo, sh->ev[e].hi, -s};
			}
		}
	}
	sh->fix_off[N] = (uint32_t)sh->nfix;
	if (sh->nev)
		qsort(sh->ev, sh->nev, sizeof(*sh->ev), cmp_evict);
	for (size_t e = 0; e < sh->nev; e++)
		sh->ev_off[sh->ev[e].buf + 1]++;
	for (int32_t b = 0; b < g->nbufs; b++)
		sh->ev_off[b + 1] += sh->ev_off[b];
	/* a column for each group and run of rows where all of it can be out
	 * by the same candidates (one z serves them all: the same bounds) */
	size_t cap_z = 0;
	for (int32_t s = 0; s < g->nshared; s++) {
		if (!pl_shared_freeable(g, s))
			continue;
		const struct pl_shared *gs = &g->shared[s];
		int open = 0;
		for (int32_t i = 0; i < nmem; i++) {
			uint32_t k = 0;
			while (k < gs->n && coverable(sh, g->shared_bufs[gs->off + k], rows[i]))
				k++;
			if (k < gs->n) {
				open = 0;
				continue;
			}
			if (open && same_cover(g, sh, gs, rows[i - 1], rows[i])) {
				sh->z[sh->nz - 1].last = i;
				continue;
			}
			if (REMAT_GROW(sh->z, sh->nz, cap_z))
				return -1;
			sh->z[sh->nz++] = (struct ilp_z){s, i, i};
			open = 1;
		}
	}
	return 0;
}

void pl_ilp_shared_warm(const struct pl_graph *g, const struct ilp_shared *sh, const int32_t *rows,
                        const uint8_t *sel, double *z)
{
	for (size_t k = 0; k < sh->nz; k++) {
		const struct pl_shared *gs = &g->shared[sh->z[k].group];
		int32_t p = rows[sh->z[k].row];
		int all = 1;
		for (uint32_t m = 0; m < gs->n && all; m++) {
			int32_t b = g->shared_bufs[gs->off + m], out = 0;
			for (uint32_t e = sh->ev_off[b]; e < sh->ev_off[b + 1] && !out; e++)
				out = sel[sh->ev[e].cand] && sh->ev[e].lo <= p && p <= sh->ev[e].hi;
			all = out;
		}
		z[k] = all ? 1.0 : 0.0;
	}
}

void pl_ilp_shared_free(struct ilp_shared *sh)
{
	free(sh->fix);
	free(sh->fix_off);
	free(sh->ev);
	free(sh->ev_off);
	free(sh->z);
	memset(sh, 0, sizeof(*sh));
}
