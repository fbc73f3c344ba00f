/*
 * live.c — the live managed allocations, sorted by address, so that any
 * 8-byte word of a kernel's parameters can be checked for pointing into
 * one (binary search for the last start not above it).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The live managed allocations, by address. */
static struct prof_lives {
	struct prof_live **v;
	size_t n, cap;
} lv;

static uint64_t start(const void *v, size_t i)
{
	return ((struct prof_live *const *)v)[i]->addr;
}

/* Index of the first buffer starting above addr. */
static size_t upper(uint64_t addr)
{
	return remat_search_after(lv.v, lv.n, start, addr);
}

int prof_live_add(struct prof_live *b)
{
	if (REMAT_GROW(lv.v, lv.n, lv.cap))
		return -1;
	size_t i = upper(b->addr);
	memmove(lv.v + i + 1, lv.v + i, (lv.n - i) * sizeof(*lv.v));
	lv.v[i] = b;
	lv.n++;
	return 0;
}

struct prof_live *prof_live_find(uint64_t addr)
{
	size_t i = upper(addr);
	if (!i)
		return NULL;
	struct prof_live *b = lv.v[i - 1];
	return addr - b->addr < (b->size ? b->size : 1) ? b : NULL;
}

struct prof_live *prof_live_remove(uint64_t addr)
{
	size_t i = upper(addr);
	if (!i || lv.v[i - 1]->addr != addr)
		return NULL;
	struct prof_live *b = lv.v[i - 1];
	memmove(lv.v + i - 1, lv.v + i, (lv.n - i) * sizeof(*lv.v));
	lv.n--;
	return b;
}

size_t prof_live_count(void)
{
	return lv.n;
}

struct prof_live *prof_live_at(size_t i)
{
	return lv.v[i];
}

void prof_live_free(struct prof_live *b)
{
	for (size_t k = 0; k < b->nsite; k++)
		free(b->site[k]);
	free(b->site);
	free(b);
}
