/*
 * grow.c — the planner's growable arrays (PL_GROW, model.h): doubling,
 * from 16 elements, so appending stays amortised O(1).
 */
#include "model.h"

#include <stdlib.h>

int pl_grow(void **arr, size_t *cap, size_t elem, size_t need)
{
	size_t nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	void *np = realloc(*arr, nc * elem);
	if (!np)
		return -1;
	*arr = np;
	*cap = nc;
	return 0;
}
