/*
 * acquire.h — getting a plan for the profiled graph without stopping the
 * training: look in the plan cache, else run remat-plan as a separate
 * process and poll for it at iteration boundaries.
 */
#ifndef REMAT_ACQUIRE_H
#define REMAT_ACQUIRE_H

#include <stdint.h>
#include "../plan/plan.h"

/* What a plan is asked for: the profiled graph as the profile in memory
 * has it (its trace file, once written, says the same), and the budget. */
struct acquire_request {
	uint64_t graph_hash;
	int32_t nops;
	int32_t nbufs;        /* buffers of the profile (a plan's ids are below), -1 unknown */
	int64_t iteration_ns; /* the profiled iteration's device time, -1 unknown */
	int64_t budget;
};

/* Starts acquisition for the profile: the plan cache is read at once (a
 * cached plan is checked against rq, nothing needs the trace file); on a
 * miss remat-plan starts once acquire_trace_ready said the trace is on
 * disk in trace_dir.  Never blocks on the planner.  Returns 0, or -1
 * (message logged) when nothing can be started. */
int acquire_begin(const char *trace_dir, const struct acquire_request *rq);

/* Where the profile's trace is (its writer runs on a thread of its own):
 * ok, complete in trace_dir; !ok, it will not come (its writer said why),
 * so a miss ends the acquisition.  Holds until acquire_reset.  Cheap:
 * called at every iteration boundary once known. */
void acquire_trace_ready(int ok);

enum acquire_state { ACQUIRE_IDLE, ACQUIRE_PENDING, ACQUIRE_READY, ACQUIRE_FAILED };

/* Polled at each iteration boundary (cheap: a waitpid(WNOHANG)).  On
 * ACQUIRE_READY *out receives the plan (caller frees it with pl_plan_free);
 * ACQUIRE_FAILED is final for this graph and has printed its one message
 * (the trace writer's, when a miss has no trace to plan from). */
enum acquire_state acquire_poll(struct pl_plan **out);

/* Forget the current acquisition and the trace (re-profile after
 * repeated divergence); kills a running planner. */
void acquire_reset(void);

/* In a forked child (pthread_atfork): the child has no planner. */
void acquire_fork_child(void);

/* Marks the cached plan for this graph and budget as bad (verification
 * mode excluded buffers, or the plan failed at run time). */
void acquire_invalidate_cached(uint64_t graph_hash, int64_t budget);

/* The plan acquire_poll handed out last cannot be applied (why: the first
 * wrong step).  From the cache: one message, the entry set aside as
 * PATH.rejected like any refused cache entry, planning starts again (0,
 * poll as before).  Made by remat-plan just now: one
 * message, and -1 (asking again would give the same plan). */
int acquire_reject(const char *why);

/* Plans made from now on may offload buffers to host memory over copy
 * engines of gbps GB/s (measured by the caller); 0: keep or recompute
 * only (the default). */
void acquire_offload(double gbps);

/* Requested by the replay engine (verify.c, REMAT_VERIFY=1): like
 * acquire_begin, but the plan must not evict the n buffers in excluded
 * (their rebuild was not bit-identical).  Not cached under the plain key. */
int acquire_begin_excluding(const char *trace_dir, const struct acquire_request *rq,
                            const int32_t *excluded, int n);

/* After ACQUIRE_READY has handed the plan over (out non-NULL), the
 * acquisition is over and acquire_poll answers ACQUIRE_IDLE. */

#endif
