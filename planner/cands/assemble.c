/*
 * assemble.c — puts a plan together from the steps and evictions a
 * planner decided, adding what follows from them: a buffer whose
 * pre-iteration content a rebuild takes from its stash gets the stash
 * taken before its first use (ahead of anything else there) and taken
 * again right after each unstash that another one follows; buffers kept
 * unmapped at the boundary are listed.
 */
#include "cands.h"

#include <stdlib.h>
#include <string.h>

int pl_asm_init(struct pl_asm *a, const struct pl_graph *g)
{
	memset(a, 0, sizeof(*a));
	a->g = g;
	a->b = pl_builder_new(g->nops);
	a->boundary = calloc(g->nbufs ? g->nbufs : 1, 1);
	return a->b && a->boundary ? 0 : -1;
}

int pl_asm_step(struct pl_asm *a, int32_t pos, int32_t kind, int32_t arg)
{
	if (REMAT_GROW(a->st, a->n, a->cap_st) || REMAT_GROW(a->pos, a->n, a->cap_pos))
		return -1;
	a->st[a->n] = (struct pl_step){kind, arg};
	a->pos[a->n++] = pos;
	return 0;
}

int pl_asm_evict(struct pl_asm *a, int32_t pos, int32_t buf)
{
	return pl_builder_evict(a->b, pos, buf);
}

/* First use of every buffer (-1 if none): where stashes are taken. */
static int32_t *first_uses(const struct pl_graph *g)
{
	int32_t *fw = malloc(sizeof(int32_t) * (g->nbufs ? g->nbufs : 1));
	if (!fw)
		return NULL;
	for (int32_t b = 0; b < g->nbufs; b++)
		fw[b] = -1;
	for (int32_t i = g->nops - 1; i >= 0; i--)
		for (uint32_t k = 0; k < g->ops[i].nrefs; k++) {
			fw[g->refs[g->ops[i].ref_off + k].buf] = i;
		}
	return fw;
}

struct pl_plan *pl_asm_finish(struct pl_asm *a)
{
	const struct pl_graph *g = a->g;
	struct pl_plan *p = NULL;
	int32_t *unstash = calloc(g->nbufs ? g->nbufs : 1, sizeof(int32_t)), *fw = NULL;
	int32_t nstash = 0, nboundary = 0;
	if (!unstash || !a->b)
		goto out;
	for (size_t i = 0; i < a->n; i++)
		if (a->st[i].kind == PL_STEP_UNSTASH && unstash[a->st[i].arg]++ == 0)
			nstash++;
	if (nstash && !(fw = first_uses(g)))
		goto out;
	for (int32_t x = 0; nstash && x < g->nbufs; x++)
		if (unstash[x])
			pl_builder_step(a->b, pl_stash_pos(fw[x]), PL_STEP_STASH, x);
	for (size_t i = 0; i < a->n; i++) {
		pl_builder_step(a->b, a->pos[i], a->st[i].kind, a->st[i].arg);
		if (a->st[i].kind == PL_STEP_UNSTASH && --unstash[a->st[i].arg] > 0)
			pl_builder_step(a->b, a->pos[i], PL_STEP_STASH, a->st[i].arg);
	}
	p = pl_builder_finish(a->b);
	a->b = NULL;
	for (int32_t x = 0; x < g->nbufs; x++)
		nboundary += a->boundary[x];
	if (p && nboundary) {
		p->boundary = malloc(sizeof(int32_t) * nboundary);
		if (!p->boundary) {
			pl_plan_free(p);
			p = NULL;
			goto out;
		}
		for (int32_t x = 0; x < g->nbufs; x++)
			if (a->boundary[x])
				p->boundary[p->nboundary++] = x;
	}
out:
	free(unstash);
	free(fw);
	return p;
}

void pl_asm_free(struct pl_asm *a)
{
	if (a->b)
		pl_plan_free(pl_builder_finish(a->b));
	free(a->st);
	free(a->pos);
	free(a->boundary);
	memset(a, 0, sizeof(*a));
}
