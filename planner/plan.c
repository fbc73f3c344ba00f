/*
 * plan.c — the in-memory plan: a builder that collects steps and
 * evictions per op position and packs them into CSR arrays.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct entry {
	int32_t pos;
	uint32_t seq; /* insertion order keeps steps at one position in order */
	int32_t kind; /* -1 = eviction */
	int32_t arg;
};

struct pl_plan_builder {
	int32_t nops;
	struct entry *e;
	size_t n, cap;
	int oom;
};

struct pl_plan_builder *pl_builder_new(int32_t nops)
{
	struct pl_plan_builder *b = calloc(1, sizeof(*b));
	if (b)
		b->nops = nops;
	return b;
}

static int push(struct pl_plan_builder *b, int32_t pos, int32_t kind, int32_t arg)
{
	if (pos < 0 || pos >= b->nops)
		return -1;
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct entry *e = realloc(b->e, cap * sizeof(*e));
		if (!e) {
			b->oom = 1;
			return -1;
		}
		b->e = e;
		b->cap = cap;
	}
	b->e[b->n] = (struct entry){pos, (uint32_t)b->n, kind, arg};
	b->n++;
	return 0;
}

int pl_builder_step(struct pl_plan_builder *b, int32_t pos, int32_t kind, int32_t arg)
{
	return push(b, pos, kind, arg);
}

int pl_builder_evict(struct pl_plan_builder *b, int32_t pos, int32_t buf)
{
	return push(b, pos, -1, buf);
}

static int cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static struct pl_plan *alloc_plan(int32_t nops, size_t nsteps, size_t nevict)
{
	struct pl_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->nops = nops;
	p->step_off = calloc((size_t)nops + 1, sizeof(uint32_t));
	p->evict_off = calloc((size_t)nops + 1, sizeof(uint32_t));
	p->steps = calloc(nsteps ? nsteps : 1, sizeof(*p->steps));
	p->evict = calloc(nevict ? nevict : 1, sizeof(*p->evict));
	if (!p->step_off || !p->evict_off || !p->steps || !p->evict) {
		pl_plan_free(p);
		return NULL;
	}
	p->baseline_peak = p->peak = p->recompute_ns = -1;
	return p;
}

struct pl_plan *pl_builder_finish(struct pl_plan_builder *b)
{
	struct pl_plan *p = NULL;
	if (!b || b->oom)
		goto out;
	if (b->n)
		qsort(b->e, b->n, sizeof(*b->e), cmp_entry);
	size_t ns = 0, nev = 0;
	for (size_t i = 0; i < b->n; i++)
		b->e[i].kind < 0 ? nev++ : ns++;
	p = alloc_plan(b->nops, ns, nev);
	if (!p)
		goto out;
	size_t is = 0, ie = 0, i = 0;
	for (int32_t pos = 0; pos < b->nops; pos++) {
		p->step_off[pos] = (uint32_t)is;
		p->evict_off[pos] = (uint32_t)ie;
		for (; i < b->n && b->e[i].pos == pos; i++) {
			if (b->e[i].kind < 0)
				p->evict[ie++] = b->e[i].arg;
			else
				p->steps[is++] = (struct pl_step){b->e[i].kind, b->e[i].arg};
		}
	}
	p->step_off[b->nops] = (uint32_t)is;
	p->evict_off[b->nops] = (uint32_t)ie;
out:
	if (b)
		free(b->e);
	free(b);
	return p;
}

struct pl_plan *pl_plan_empty(int32_t nops)
{
	return alloc_plan(nops, 0, 0);
}

void pl_plan_free(struct pl_plan *p)
{
	if (!p)
		return;
	free(p->step_off);
	free(p->evict_off);
	free(p->steps);
	free(p->evict);
	free(p->boundary);
	free(p);
}
