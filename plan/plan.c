/*
 * plan.c — the in-memory plan (plan.h): allocation and release, what both
 * remat-plan and the runtime need.  Building one is builder.c's job.
 */
#include <stdlib.h>
#include <string.h>

#include "plan.h"

const char *const pl_step_names[PL_STEP_KINDS] = {"map",      "save",  "replay",  "restore",
                                                  "release",  "stash", "unstash", "offload",
                                                  "prefetch", "await"};

struct pl_plan *pl_plan_alloc(int32_t nops, size_t nsteps, size_t nevict)
{
	if (nops < 0)
		return NULL;
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
	p->baseline_peak = p->peak = p->recompute_ns = p->iteration_ns = -1;
	p->stall_ns = p->host_bytes = -1;
	return p;
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
	free(p->parked);
	free(p);
}
