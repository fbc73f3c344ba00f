/*
 * planning.c — what the session answers replay at iteration boundaries:
 * from the first one after the profile, a plan from the cache or, once
 * the trace is on disk, from remat-plan (acquire/), never waited for; a
 * verification that excluded buffers starts a new acquisition without
 * them.
 */
#include <stdint.h>

#include "../acquire/acquire.h"
#include "../core/config.h"
#include "../core/log.h"
#include "internal.h"

void planning_begin(const struct remat_profile *p, int64_t budget)
{
	/* Everything a cached plan is checked against comes from the profile
	 * itself: the cache is read without waiting for the trace file. */
	session.planning.request = (struct acquire_request){
	    .graph_hash = p->graph_hash,
	    .nops = (int32_t)p->nops,
	    .nbufs = p->nbufs <= INT32_MAX ? (int32_t)p->nbufs : -1,
	    .iteration_ns = p->duration_ns >= 0 ? p->duration_ns : -1,
	    .budget = budget,
	};
	__atomic_store_n(&session.planning.graph_hash, p->graph_hash, __ATOMIC_RELEASE);
	session.planning.acquiring = 0;
}

void planning_trace_written(int ok, uint64_t graph_hash)
{
	/* A writer of an earlier profile's trace (the job diverged and was
	 * profiled again while it wrote) says nothing about this one. */
	if (graph_hash == __atomic_load_n(&session.planning.graph_hash, __ATOMIC_ACQUIRE))
		__atomic_store_n(&session.planning.trace_status, ok ? 1 : -1, __ATOMIC_RELEASE);
}

void planning_reset(void)
{
	acquire_reset();
	__atomic_store_n(&session.planning.trace_status, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&session.planning.graph_hash, 0, __ATOMIC_RELEASE);
	session.planning.acquiring = 0;
}

static enum replay_plan_answer poll_plan(struct pl_plan **out)
{
	/* The writer's word, passed on (here, on the training thread, so that
	 * acquire/ never hears from a writer after a reset). */
	int ts = __atomic_load_n(&session.planning.trace_status, __ATOMIC_ACQUIRE);
	if (ts)
		acquire_trace_ready(ts > 0);
	if (!session.planning.acquiring) {
		/* unless REMAT_OFFLOAD=0, plans may also offload, at the rate measured here */
		acquire_offload(remat_cfg.offload ? replay_offload_measure() : 0);
		if (acquire_begin(remat_cfg.trace_dir, &session.planning.request)) {
			remat_log(REMAT_LOG_INFO, "no plan: training continues unmodified");
			return REPLAY_PLAN_NONE;
		}
		session.planning.acquiring = 1;
	}
	switch (acquire_poll(out)) {
	case ACQUIRE_READY:
		session.planning.acquiring = 0;
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
	session.planning.acquiring = 1;
	return 1;
}

static int replan(const int32_t *excluded, int n)
{
	acquire_invalidate_cached(session.planning.request.graph_hash,
	                          session.planning.request.budget);
	session_set_state(SESSION_PLAN);
	if (acquire_begin_excluding(remat_cfg.trace_dir, &session.planning.request, excluded, n))
		return -1;
	session.planning.acquiring = 1;
	return 0;
}

const struct replay_hooks planning_hooks = {poll_plan, reject_plan, replan};
