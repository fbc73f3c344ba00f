/*
 * planning.c — what the session answers replay at iteration boundaries:
 * once the trace is on disk, a plan from the cache or from remat-plan
 * (acquire/), never waited for; a verification that excluded buffers
 * starts a new acquisition without them.
 */
#include <stdint.h>

#include "../acquire/acquire.h"
#include "../core/config.h"
#include "../core/log.h"
#include "internal.h"

static struct {
	uint64_t graph_hash;
	int32_t nops;
	int64_t budget;
	int trace_status; /* 0 not yet, 1 written, -1 failed (atomic: the writer sets it) */
	int acquiring;    /* acquire_begin was called */
} plan;

void planning_begin(uint64_t graph_hash, int32_t nops, int64_t budget)
{
	plan.graph_hash = graph_hash;
	plan.nops = nops;
	plan.budget = budget;
	plan.acquiring = 0;
}

void planning_trace_written(int ok, uint64_t graph_hash)
{
	/* A writer of an earlier profile's trace (the job diverged and was
	 * profiled again while it wrote) says nothing about this one. */
	if (graph_hash == __atomic_load_n(&plan.graph_hash, __ATOMIC_ACQUIRE))
		__atomic_store_n(&plan.trace_status, ok ? 1 : -1, __ATOMIC_RELEASE);
}

void planning_reset(void)
{
	acquire_reset();
	__atomic_store_n(&plan.trace_status, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&plan.graph_hash, 0, __ATOMIC_RELEASE);
	plan.acquiring = 0;
}

static enum replay_plan_answer poll_plan(struct pl_plan **out)
{
	int ts = __atomic_load_n(&plan.trace_status, __ATOMIC_ACQUIRE);
	if (!ts)
		return REPLAY_PLAN_WAIT;
	if (!plan.acquiring) {
		/* unless REMAT_OFFLOAD=0, plans may also offload, at the rate measured here */
		acquire_offload(remat_cfg.offload ? replay_offload_measure() : 0);
		if (ts < 0 ||
		    acquire_begin(remat_cfg.trace_dir, plan.graph_hash, plan.nops, plan.budget)) {
			remat_log(REMAT_LOG_INFO, "no plan: training continues unmodified");
			return REPLAY_PLAN_NONE;
		}
		plan.acquiring = 1;
	}
	switch (acquire_poll(out)) {
	case ACQUIRE_READY:
		plan.acquiring = 0;
		if (!*out)
			return REPLAY_PLAN_NONE;
		session_set_state(SESSION_RUN);
		return REPLAY_PLAN_READY;
	case ACQUIRE_PENDING:
		return REPLAY_PLAN_WAIT;
	default:
		return REPLAY_PLAN_NONE;
	}
}

static int reject_plan(const char *why)
{
	if (acquire_reject(why))
		return 0;
	session_set_state(SESSION_PLAN);
	plan.acquiring = 1;
	return 1;
}

static int replan(const int32_t *excluded, int n)
{
	acquire_invalidate_cached(plan.graph_hash, plan.budget);
	session_set_state(SESSION_PLAN);
	if (acquire_begin_excluding(remat_cfg.trace_dir, plan.graph_hash, plan.nops, plan.budget,
	                            excluded, n))
		return -1;
	plan.acquiring = 1;
	return 0;
}

const struct replay_hooks planning_hooks = {poll_plan, reject_plan, replan};
