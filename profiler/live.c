/*
 * live.c — the live managed allocations, sorted by address, so that any
 * 8-byte word of a kernel's parameters can be checked for pointing into
 * one (binary search for the last start not above it).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct remat_pbuf **v;
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

int remat_live_add(struct remat_pbuf *b)
{
	if (n == cap) {
		size_t c = cap ? cap * 2 : 256;
		struct remat_pbuf **p = realloc(v, c * sizeof(*p));
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

struct remat_pbuf *remat_live_find(uint64_t addr)
{
	size_t i = upper(addr);
	if (!i)
		return NULL;
	struct remat_pbuf *b = v[i - 1];
	return addr - b->addr < (b->size ? b->size : 1) ? b : NULL;
}

struct remat_pbuf *remat_live_remove(uint64_t addr)
{
	size_t i = upper(addr);
	if (!i || v[i - 1]->addr != addr)
		return NULL;
	struct remat_pbuf *b = v[i - 1];
	memmove(v + i - 1, v + i, (n - i) * sizeof(*v));
	n--;
	return b;
}

size_t remat_live_count(void)
{
	return n;
}

struct remat_pbuf *remat_live_at(size_t i)
{
	return v[i];
}
