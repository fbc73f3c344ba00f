/*
 * live.c — the live managed allocations, sorted by address, so that any
 * 8-byte word of a kernel's parameters can be checked for pointing into
 * one (binary search for the last start not above it).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct prof_live **v;
static size_t n, cap;

/* Index of the first buffer starting above addr. */
static size_t upper(uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int prof_live_add(struct prof_live *b)
{
	if (n == cap) {
		size_t c = cap ? cap * 2 : 256;
		struct prof_live **p = realloc(v, c * sizeof(*p));
		if (!p)
			return -1;
		v = p;
		cap = c;
	}
	size_t i = upper(b->addr);
	memmove(v + i + 1, v + i, (n - i) * sizeof(*v));
	v[i] = b;
	n++;
	return 0;
}

struct prof_live *prof_live_find(uint64_t addr)
{
	size_t i = upper(addr);
	if (!i)
		return NULL;
	struct prof_live *b = v[i - 1];
	return addr - b->addr < (b->size ? b->size : 1) ? b : NULL;
}

struct prof_live *prof_live_remove(uint64_t addr)
{
	size_t i = upper(addr);
	if (!i || v[i - 1]->addr != addr)
		return NULL;
	struct prof_live *b = v[i - 1];
	memmove(v + i - 1, v + i, (n - i) * sizeof(*v));
	n--;
	return b;
}

size_t prof_live_count(void)
{
	return n;
}

struct prof_live *prof_live_at(size_t i)
{
	return v[i];
}

void prof_live_free(struct prof_live *b)
{
	for (size_t k = 0; k < b->nsite; k++)
		free(b->site[k]);
	free(b->site);
	free(b);
}
