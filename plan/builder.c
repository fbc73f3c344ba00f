/*
 * builder.c — making a plan (plan.h): a builder that collects steps and
 * evictions per op position, in any order, and packs them into the plan's
 * CSR arrays.  remat-plan's; the runtime only reads plans.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "plan.h"

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
	if (REMAT_GROW(b->e, b->n, b->cap)) {
		b->oom = 1;
		return -1;
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
	p = pl_plan_alloc(b->nops, ns, nev);
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
	return pl_plan_alloc(nops, 0, 0);
}
