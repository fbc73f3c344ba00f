/*
 * rplan.h — a plan as run mode executes it: the in-memory form of
 * docs/plan-format.md (written by remat-plan, read by replay/plan_load.c).
 * Op positions and buffer ids are those of the trace the plan was made
 * from, which is the profile this process recorded (or, for a cached plan,
 * a profile with the same graph_hash).
 */
#ifndef REMAT_RPLAN_H
#define REMAT_RPLAN_H

#include <stdint.h>

enum rplan_step_kind {
	RPLAN_MAP = 0,     /* map buffer arg's physical memory again, same address */
	RPLAN_SAVE = 1,    /* copy live buffer arg aside */
	RPLAN_REPLAY = 2,  /* re-launch op arg with this iteration's parameter bytes */
	RPLAN_RESTORE = 3, /* copy buffer arg back from its saved copy, drop the copy */
	RPLAN_RELEASE = 4, /* unmap buffer arg (transient, or intermediate no longer needed) */
};

struct rplan_step {
	int32_t kind; /* enum rplan_step_kind */
	int32_t arg;  /* buffer id, or op position for RPLAN_REPLAY */
};

struct rplan {
	uint64_t graph_hash;
	int64_t budget;
	int32_t nops;
	/* CSR per op position p: steps before op p are steps[step_off[p] ..
	 * step_off[p+1]); buffers evicted once op p completed are
	 * evict[evict_off[p] .. evict_off[p+1]). */
	uint32_t *step_off;
	struct rplan_step *steps;
	uint32_t *evict_off;
	int32_t *evict;
	/* What remat-plan predicted, for logs and reports. */
	int64_t baseline_peak, peak, recompute_ns, iteration_ns;
	char planner[16];
};

void rplan_free(struct rplan *p);

#endif
