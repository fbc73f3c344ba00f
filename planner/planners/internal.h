/*
 * internal.h — between the files of planner/planners/: the rule greedy
 * and dtr keep their best variant by, and the heap of the DTR-style
 * planners.
 */
#ifndef LIBREMAT_PLANNER_PLANNERS_INTERNAL_H
#define LIBREMAT_PLANNER_PLANNERS_INTERNAL_H

#include "planners.h"

/* greedy and dtr each try a few variants and keep the best: one that
 * meets the budget (r == 0), then lower recompute cost; among those that
 * miss it (r > 0), the lower peak.  r < 0: the variant failed. */
struct pl_best {
	int r; /* -1 until a variant is taken */
	int64_t cost, peak;
};

static inline int pl_best_take(struct pl_best *b, int r, int64_t cost, int64_t peak)
{
	if (r < 0)
		return 0;
	int better = b->r < 0 || (r == 0 && b->r != 0) ||
	             (r == b->r && (r == 0 ? cost < b->cost : peak < b->peak));
	if (better)
		*b = (struct pl_best){r, cost, peak};
	return better;
}

/* heap.c: binary min-heap on h; j and hi are the user's. */
struct pl_hent {
	double h;
	int32_t j, hi;
};
struct pl_heap {
	struct pl_hent *e;
	uint32_t n;
	size_t cap;
};
int pl_heap_push(struct pl_heap *hp, struct pl_hent x); /* -1 when out of memory */
struct pl_hent pl_heap_pop(struct pl_heap *hp);         /* hp->n > 0 */

#endif
