/*
 * segments.c — chain-segment candidates: drop a run of buffers whose
 * rebuilds depend on each other and rebuild them forward in one pass at
 * the first point any of them is needed, keeping each until its own use
 * (what sqrt(n) checkpointing does).  Replayed one by one, each buffer of
 * a chain would need its predecessor resident; together, each op of the
 * segment runs once.
 *
 * A segment grows from a single candidate by adding the buffers its
 * rebuild needs resident (its forbidden gaps), one ring at a time, so
 * skip connections (two inputs) grow it by both.
 */
#include "internal.h"

#include "../../core/map.h"

#include <stdlib.h>
#include <string.h>

/* Segments already made, keyed by (position, sorted gap set): 1 when key
 * was there, 0 when added now, -1 out of memory. */
static int seen_add(struct remat_map *seen, uint64_t key)
{
	size_t n = seen->n;
	if (!remat_map_insert(seen, key ? key : 1)) /* 0 is no key */
		return -1;
	return seen->n == n;
}

int32_t pl_set_cand(struct pl_setb *sb, const int32_t *tg, int32_t nt, int32_t c, int add)
{
	struct pl_cands *cs = sb->cb->cs;
	struct recipe *rc = sb->rc;
	if (pl_recipe_targets(rc, nt))
		return -2;
	rc->nt = nt;
	for (int32_t t = 0; t < nt; t++) {
		rc->tb[t] = cs->gaps[tg[t]].buf;
		rc->tv[t] = cs->gaps[tg[t]].ver;
	}
	rc->strict = sb->strict;
	if (pl_recipe_build(rc, sb->g, sb->ix, cs, c))
		return -1;
	if (!add)
		return -3;
	struct pl_ranges *rg = &sb->rg;
	rg->n = 0;
	if (REMAT_GROW(rg->r, nt, rg->cap))
		return -2;
	for (int32_t t = 0; t < nt; t++) {
		const struct pl_gap *q = &cs->gaps[tg[t]];
		if (c - 1 >= q->a + 1)
			rg->r[rg->n++] = (struct pl_range){q->a + 1, c - 1, q->bytes};
	}
	if (pl_recipe_stash_ranges(rc, sb->g, c, rg))
		return -2;
	struct pl_cand proto = {.at = c,
	                        .cost = rc->cost,
	                        .transient = rc->transient,
	                        .nranges = (uint32_t)rg->n,
	                        .ngaps = (uint32_t)nt,
	                        .order_key = rc->last_op,
	                        .segment = 1};
	int r = pl_cands_add(sb->cb, &proto, rg->r, tg, rc);
	return r < 0 ? -2 : r > 0 ? -3 : cs->ncands - 1;
}

int pl_segments_build(struct pl_setb *sb, int max_segment)
{
	struct pl_cands *cs = sb->cb->cs;
	struct recipe *rc = sb->rc;
	struct remat_map seen = REMAT_MAP_INIT(uint64_t);
	int32_t nsingle = cs->ncands;
	int32_t *tg = NULL, *sorted = NULL, *forbid = NULL;
	size_t cap_tg = 0, cap_sorted = 0, cap_forbid = 0;
	int rcode = -1;
	for (int32_t j = 0; j < nsingle; j++) {
		const struct pl_cand *x = &cs->c[j];
		if (x->at < 0 || x->nforbid == 0 || x->nsteps == 0 ||
		    cs->gaps[cs->gap_list[x->gap_off]].ver < 0)
			continue;
		int32_t c = x->at;
		int nt = 1, nf = (int)x->nforbid;
		if (REMAT_GROW(tg, 0, cap_tg) || REMAT_GROW(forbid, nf, cap_forbid))
			goto out;
		tg[0] = cs->gap_list[x->gap_off];
		memcpy(forbid, &cs->forbid_list[x->forbid_off], sizeof(int32_t) * nf);
		while (nf > 0 && nt + nf <= max_segment) {
			int ok = 1;
			for (int i = 0; i < nf && ok; i++) {
				const struct pl_gap *q = &cs->gaps[forbid[i]];
				/* Only gaps that cover c can join: the buffer is then
				 * rebuilt at c and kept until its own next use. */
				ok =
				    !q->dead && !q->boundary && q->ver >= 0 && q->a < c && c < q->c;
				for (int t = 0; t < nt && ok; t++)
					ok = tg[t] != forbid[i];
			}
			if (!ok)
				break;
			if (REMAT_GROW(tg, nt + nf, cap_tg) ||
			    REMAT_GROW(sorted, nt + nf, cap_sorted) ||
			    pl_recipe_targets(rc, nt + nf))
				goto out;
			memcpy(&tg[nt], forbid, sizeof(int32_t) * nf);
			nt += nf;
			memcpy(sorted, tg, sizeof(int32_t) * nt);
			pl_sort_i32(sorted, nt);
			uint64_t key = pl_fnv(pl_fnv(PL_FNV_OFFSET, &c, sizeof(c)), sorted,
			                      sizeof(int32_t) * nt);
			int dup = seen_add(&seen, key);
			if (dup < 0)
				goto out;
			int32_t j = pl_set_cand(sb, tg, nt, c, !dup);
			if (j == -2)
				goto out;
			if (j == -1)
				break;
			nf = rc->nforbid;
			if (REMAT_GROW(forbid, nf, cap_forbid))
				goto out;
			memcpy(forbid, rc->forbid, sizeof(int32_t) * nf);
		}
	}
	rcode = 0;
out:
	remat_map_clear(&seen);
	free(tg);
	free(sorted);
	free(forbid);
	return rcode;
}
