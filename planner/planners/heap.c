/*
 * heap.c — a binary min-heap of (key, two ints), the eviction order of
 * the DTR-style planners.
 */
#include "internal.h"

#include <stdlib.h>

int pl_heap_push(struct pl_heap *hp, struct pl_hent x)
{
	if (REMAT_GROW(hp->e, hp->n, hp->cap))
		return -1;
	uint32_t i = hp->n++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (hp->e[p].h <= x.h)
			break;
		hp->e[i] = hp->e[p];
		i = p;
	}
	hp->e[i] = x;
	return 0;
}

struct pl_hent pl_heap_pop(struct pl_heap *hp)
{
	struct pl_hent top = hp->e[0], x = hp->e[--hp->n];
	uint32_t i = 0;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= hp->n)
			break;
		if (c + 1 < hp->n && hp->e[c + 1].h < hp->e[c].h)
			c++;
		if (x.h <= hp->e[c].h)
			break;
		hp->e[i] = hp->e[c];
		i = c;
	}
	if (hp->n)
		hp->e[i] = x;
	return top;
}
