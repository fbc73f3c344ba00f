/*
 * replay.h — the public face of replay/: run mode after the profile.
 * Each iteration is checked op by op against the profiled one; while a
 * plan is applied, buffers are evicted after the ops the plan names and
 * rebuilt before the ops that need them, by replaying the ops that wrote
 * them with this iteration's parameter bytes (engine.c, steps.c).
 *
 * The session (session/) calls every function here with its lock held.
 */
#ifndef REMAT_REPLAY_H
#define REMAT_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include "../core/op.h"
#include "../plan/plan.h"
#include "../profiler/profiler.h"

/* What the engine asks of whoever runs it, at iteration boundaries. */
enum replay_plan_answer { REPLAY_PLAN_WAIT, REPLAY_PLAN_READY, REPLAY_PLAN_NONE };
struct replay_hooks {
	/* While no plan is applied: READY with a plan in *out (ownership
	 * passes), WAIT (not yet), or NONE (no plan will come). */
	enum replay_plan_answer (*poll_plan)(struct pl_plan **out);
	/* The plan poll_plan handed out does not pass validation (why: its
	 * first wrong step): say so once, and never hand it out again.  1 when
	 * a new plan is on its way (poll_plan will answer), 0 when none will
	 * come. */
	int (*reject_plan)(const char *why);
	/* Verification found buffers whose rebuild is not bit-identical: plan
	 * again without them.  0 when a plan is on its way (poll_plan will
	 * answer), -1 when none can come. */
	int (*replan)(const int32_t *excluded, int n);
};

/* The profiled iteration is complete and the op being issued now is op 0
 * of the next one, iteration first_iter of the process.  Takes over the
 * caller's holder of p.  budget: bytes; level: requested bytes of live
 * managed allocations now. */
void replay_start(struct remat_profile *p, int64_t budget, int64_t level, int64_t first_iter,
                  const struct replay_hooks *hooks);

enum replay_verdict {
	REPLAY_CONTINUE,    /* nothing more to do for this op */
	REPLAY_EVICT_AFTER, /* call replay_op_end after the real call (op->pos is set) */
	REPLAY_REPROFILE,   /* the program no longer does what was profiled: profile again */
	REPLAY_STOP,        /* no plan for good: the job runs unmodified from now on */
	REPLAY_FAIL,        /* a rebuild failed and could not be done again: the op must not
	                       run; replay_error() is the device error the program gets */
};
/* Before the real call of every op.  On REPROFILE and STOP the engine has
 * let go of its profile. */
enum replay_verdict replay_op_begin(struct remat_op *op);
/* The error of REPLAY_FAIL. */
CUresult replay_error(void);
/* After the real call, when replay_op_begin said REPLAY_EVICT_AFTER: the
 * evictions the plan makes after op->pos, ordered after it on its stream. */
void replay_op_end(struct remat_op *op, CUresult rc);
/* Managed allocations in run mode: replay_alloc_before before the
 * allocator hands one out (the next iteration may begin there: its
 * allocations follow the profile's addresses), replay_alloc after;
 * replay_free before the allocator takes one back. */
void replay_alloc_before(void);
void replay_alloc(CUdeviceptr p, size_t size);
void replay_free(CUdeviceptr p);
/* The program is about to change memory it maps itself (alloc.h, the
 * program's own VMM): what is evicted is rebuilt now (the change may
 * move it), and the next op profiles again (the layout the plan was
 * made for is gone). */
void replay_reshape(void);
/* At exit: what run mode did (REMAT_LOG=1). */
void replay_shutdown(void);

/* The copy engines' bandwidth, GB/s (the slower direction), timed once per
 * process with pinned memory and events (replay/offload.c); 0 when it
 * cannot be measured. */
double replay_offload_measure(void);

#endif
