/*
 * baseline.c — the baseline peak of a profile: the physical bytes of one
 * unmodified iteration at its highest, as the planning model counts them
 * (docs/graph-format.md: the small-allocation chunks, plus every other
 * buffer's whole chunks from its allocation to its free).  remat-plan
 * computes the same figure from the trace (planner/model/graph.c); a percentage
 * budget is of it.  Unlike the allocator's measured peak it does not
 * depend on when the streams let freed chunks go.
 */
#include <stdlib.h>

#include "profiler.h"

int64_t prof_baseline_peak(const struct remat_profile *p)
{
	int64_t *diff = calloc(p->nops + 1, sizeof(*diff));
	if (!diff)
		return (int64_t)p->peak_bytes;
	for (size_t b = 0; b < p->nbufs; b++) {
		const struct prof_buf *u = &p->bufs[b];
		if (u->small)
			continue;
		size_t lo = u->alloc_at < 0 ? 0 : (size_t)u->alloc_at;
		size_t hi = u->free_at < 0 ? p->nops : (size_t)u->free_at;
		if (lo > p->nops || hi > p->nops || lo > hi)
			continue;
		diff[lo] += (int64_t)u->rounded;
		diff[hi] -= (int64_t)u->rounded;
	}
	int64_t live = (int64_t)(p->small_pool_bytes + p->edge_bytes), peak = live;
	for (size_t k = 0; k < p->nops; k++) {
		live += diff[k];
		if (live > peak)
			peak = live;
	}
	free(diff);
	return peak;
}
