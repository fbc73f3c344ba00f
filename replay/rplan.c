/*
 * rplan.c — allocation and release of the in-memory plan (rplan.h).
 */
#include <stdlib.h>

#include "acquire_internal.h"

struct rplan *rplan_alloc(int32_t nops, uint32_t nsteps, uint32_t nevict)
{
	if (nops < 0)
		return NULL;
	struct rplan *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->nops = nops;
	p->baseline_peak = p->peak = p->recompute_ns = p->iteration_ns = -1;
	/* calloc(0) may return NULL; one spare element keeps "NULL = failed" true. */
	p->step_off = calloc((size_t)nops + 1, sizeof(*p->step_off));
	p->evict_off = calloc((size_t)nops + 1, sizeof(*p->evict_off));
	p->steps = calloc((size_t)nsteps + 1, sizeof(*p->steps));
	p->evict = calloc((size_t)nevict + 1, sizeof(*p->evict));
	if (!p->step_off || !p->evict_off || !p->steps || !p->evict) {
		rplan_free(p);
		return NULL;
	}
	return p;
}

void rplan_free(struct rplan *p)
{
	if (!p)
		return;
	free(p->step_off);
	free(p->steps);
	free(p->evict_off);
	free(p->evict);
	free(p);
}
