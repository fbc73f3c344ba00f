/*
 * session.c — the mode (session.h) and the dispatch of every op and
 * managed allocation to the profiler or to replay.
 *
 * One lock, session_lock, guards the profiler's and replay's state: a
 * launch takes it once.  It is held across the program's real call only
 * while an iteration is profiled (the write-set hashes after an op must
 * see that op's writes and no other's).  In run mode an op's check and
 * rebuild steps happen before the real call, under the lock; the lock is
 * taken again after the call only at the positions where the plan evicts
 * (an eviction must come after the op on its stream).
 */
#include <stdlib.h>
#include <time.h>

#include "../alloc/alloc.h"
#include "../core/capture.h"
#include "../core/config.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "../profiler/profiler.h"
#include "internal.h"

int remat_session_active, remat_session_watch;
struct session session = {.lock = PTHREAD_MUTEX_INITIALIZER,
                          .state = SESSION_OFF,
                          .ready_once = PTHREAD_ONCE_INIT,
                          .ready_status = -1};

/* What session_op_end has to do for an op (op->end). */
enum {
	END_PROFILE = 1, /* record its writes, then release the lock held since begin */
	END_EVICT = 2,   /* replay evicts after it */
	END_UNPIN = 4,   /* release what the swap check pinned for it */
};

void session_update_watch(void)
{
	int watch = session.state != SESSION_OFF &&
	            (session.state != SESSION_DONE ||
	             __atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_ACQUIRE));
	/* FAILED watches too: every op gets the error. */
	__atomic_store_n(&remat_session_watch, watch, __ATOMIC_RELEASE);
}

void session_set_state(enum session_state s)
{
	session.state = s;
	__atomic_store_n(&remat_session_active, s != SESSION_OFF, __ATOMIC_RELEASE);
	session_update_watch();
}

/* What the profile cost: wall time, and device time (CUPTI) against what
 * the same ops take unmodified. */
static void log_recorded(const struct remat_profile *p)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double wall = (double)(now.tv_sec - session.profile_start.tv_sec) +
	              1e-9 * (double)(now.tv_nsec - session.profile_start.tv_nsec);
	uint64_t dev = p->profiled_ns[0] + p->profiled_ns[1] + p->profiled_ns[2];
	if (!dev || !p->ops_ns) {
		remat_log(REMAT_LOG_INFO,
		          "profiled iteration recorded: %zu ops, %zu buffers in %.2f s; "
		          "writing the trace",
		          (size_t)p->nops, (size_t)p->nbufs, wall);
		return;
	}
	remat_log(REMAT_LOG_INFO,
	          "profiled iteration recorded: %zu ops, %zu buffers in %.2f s, %.3f ms of "
	          "device time (kernels %.3f, copies %.3f, sets %.3f), %.1fx the ops' own "
	          "%.3f ms; writing the trace",
	          (size_t)p->nops, (size_t)p->nbufs, wall, 1e-6 * (double)dev,
	          1e-6 * (double)p->profiled_ns[0], 1e-6 * (double)p->profiled_ns[1],
	          1e-6 * (double)p->profiled_ns[2], (double)dev / (double)p->ops_ns,
	          1e-6 * (double)p->ops_ns);
}

/* The profiled iteration is complete; op is op 0 of the next one.  Trace
 * mode writes the trace and is done; run mode also hands the profile to
 * replay, which follows the iterations from this op on. */

static void profile_complete(void)
{
	int64_t first_iter;
	struct remat_profile *p = prof_finish(&first_iter);
	if (!p) {
		remat_warn("out of host memory for the profile; training continues unmodified");
		session_set_state(SESSION_DONE);
		return;
	}
	int64_t live_now, live_best;
	size_t cut = prof_better_boundary(p, &live_now, &live_best);
	if (cut && prof_recut(cut)) {
		/* A program whose memory never moves reads its loss back after
		 * the forward pass: the guessed boundary had every activation
		 * live across it. */
		remat_log(REMAT_LOG_INFO,
		          "the iteration begins %zu ops later: %lld bytes live across that "
		          "boundary, %lld across this one; profiling again from there",
		          cut, (long long)live_best, (long long)live_now);
		prof_profile_put(p);
		session_profile_dropped();
		return;
	}
	log_recorded(p);
	if (remat_cfg.mode != REMAT_MODE_RUN) {
		prof_publish(p, remat_cfg.trace_dir, NULL);
		session_set_state(SESSION_DONE);
		return;
	}
	char err[256];
	int64_t budget, baseline = prof_baseline_peak(p);
	if (remat_budget_resolve(&remat_cfg.budget, baseline, &budget, err, sizeof(err))) {
		remat_warn("REMAT_BUDGET: %s; training continues unmodified", err);
		prof_publish(p, remat_cfg.trace_dir, NULL);
		session_set_state(SESSION_DONE);
		return;
	}
	if (remat_cfg.budget.percent > 0)
		remat_log(REMAT_LOG_INFO,
		          "budget: %lld bytes (REMAT_BUDGET=%g%% of the baseline peak, %lld bytes)",
		          (long long)budget, remat_cfg.budget.percent, (long long)baseline);
	else
		remat_log(REMAT_LOG_INFO, "budget: %lld bytes (the baseline peak is %lld bytes)",
		          (long long)budget, (long long)baseline);
	/* Two holders: the trace writer and replay. */
	__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	planning_begin(p, budget);
	prof_publish(p, remat_cfg.trace_dir, planning_trace_written);
	replay_start(p, budget, prof_live_bytes(), first_iter, &planning_hooks);
	session_set_state(SESSION_PLAN);
}

/* Run mode: the op goes to replay.  1 when op_end must follow. */
static int to_replay(struct remat_op *op)
{
	switch (replay_op_begin(op)) {
	case REPLAY_EVICT_AFTER:
		return 1;
	case REPLAY_FAIL:
		session.failure = replay_error();
		session_set_state(SESSION_FAILED);
		return 0;
	case REPLAY_REPROFILE:
		planning_reset();
		prof_restart();
		session_set_state(SESSION_DETECT);
		return 0;
	case REPLAY_STOP:
		session_set_state(SESSION_DONE);
		return 0;
	default:
		return 0;
	}
}

void session_profile_dropped(void)
{
	session_set_state(SESSION_DETECT);
	if (remat_cfg.mode == REMAT_MODE_RUN)
		remat_alloc_quarantine(0);
}

/* Detecting or profiling.  1 when the lock must stay held until op_end. */
static int to_profiler(struct remat_op *op)
{
	int run = remat_cfg.mode == REMAT_MODE_RUN;
	switch (prof_op(op)) {
	case PROF_RECORD:
		if (session.state == SESSION_DETECT) {
			session_set_state(SESSION_PROFILE);
			clock_gettime(CLOCK_MONOTONIC, &session.profile_start);
			/* Run mode: no address is reused within the profiled
			 * iteration (remat_alloc_quarantine), so each buffer of
			 * the profile has an address of its own that a replay may
			 * map it at. */
			if (run)
				remat_alloc_quarantine(1);
		}
		if (run && (size_t)op->pos + 1 == prof_period())
			remat_alloc_boundary(0);
		return 1;
	case PROF_COMPLETE:
		profile_complete();
		if (session.state == SESSION_PLAN && to_replay(op))
			op->end |= END_EVICT;
		return 0;
	case PROF_GIVE_UP:
		session_set_state(SESSION_DONE);
		return 0;
	case PROF_DETECTING:
		if (session.state == SESSION_PROFILE) /* the profile was dropped */
			session_profile_dropped();
		return 0;
	}
	return 0;
}

CUresult session_op_begin(struct remat_op *op)
{
	op->end = 0;
	op->pos = -1;
	if (session_ready())
		return CUDA_SUCCESS;
	/* Captured work does not run now: it is the graph's, and passes
	 * through untouched (its launches are seen when the graph is). */
	if (__builtin_expect(__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE), 0) &&
	    remat_capture_stream(op->stream))
		return CUDA_SUCCESS;
	pthread_mutex_lock(&session.lock);
	if (op->kind == REMAT_OP_GRAPH)
		op->graph = prof_graph_refs(op->func);
	/* Something went to the host before a plan applied: what this op
	 * touches comes back before anyone looks at it (the write-set hashes,
	 * replay, the op itself). */
	if (__builtin_expect(__atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_ACQUIRE), 0)) {
		session_swap_in(op);
		op->end |= END_UNPIN;
	}
	switch (session.state) {
	case SESSION_DETECT:
	case SESSION_PROFILE:
		if (to_profiler(op)) {
			op->end |= END_PROFILE;
			return CUDA_SUCCESS; /* the lock is held until session_op_end */
		}
		break;
	case SESSION_PLAN:
	case SESSION_RUN:
		if (to_replay(op))
			op->end |= END_EVICT;
		break;
	default:
		break;
	}
	CUresult r = session.state == SESSION_FAILED ? session.failure : CUDA_SUCCESS;
	pthread_mutex_unlock(&session.lock);
	if (r != CUDA_SUCCESS && (op->end & END_UNPIN))
		session_swap_release();
	return r;
}

void session_op_end(struct remat_op *op, CUresult rc)
{
	if (op->end & END_PROFILE) {
		prof_op_after(op, rc);
		pthread_mutex_unlock(&session.lock);
	}
	if (op->end & END_EVICT) {
		pthread_mutex_lock(&session.lock);
		if (session.state == SESSION_RUN)
			replay_op_end(op, rc);
		pthread_mutex_unlock(&session.lock);
	}
	if (op->end & END_UNPIN)
		session_swap_release();
}

int session_following(void)
{
	return session.state >= SESSION_DETECT && session.state <= SESSION_RUN;
}

CUresult session_alloc(CUdeviceptr *p, size_t size, CUstream stream, int async)
{
	struct remat_alloc_info info;
	/* Held across the allocator's work (which takes its own lock inside):
	 * replay must see allocations in the order they are made. */
	pthread_mutex_lock(&session.lock);
	if (session.state == SESSION_FAILED) {
		pthread_mutex_unlock(&session.lock);
		return session.failure;
	}
	int replaying = session.state == SESSION_PLAN || session.state == SESSION_RUN;
	if (replaying)
		replay_alloc_before();
	CUresult r = remat_alloc(p, size, stream, async, &info);
	if (r == CUDA_SUCCESS && session_following()) {
		/* Unwinding the allocating stack costs more than the allocation:
		 * only while a profile may be recorded. */
		int stack = session.state == SESSION_DETECT || session.state == SESSION_PROFILE;
		prof_alloc(*p, info.size, info.rounded, info.small, stack);
		if (replaying)
			replay_alloc(*p, info.size);
	}
	/* The allocation may have swapped something out: from now on every op
	 * must be checked. */
	if (!__atomic_load_n(&remat_session_watch, __ATOMIC_RELAXED))
		session_update_watch();
	pthread_mutex_unlock(&session.lock);
	return r;
}

int session_free(CUdeviceptr p, CUstream stream, int async, CUresult *rc)
{
	*rc = CUDA_SUCCESS;
	if (!p || !remat_alloc_owns(p, NULL))
		return 0;
	if (async && remat_capture_stream(stream)) {
		/* In a capture a free is a graph's free node, which "must be
		 * passed the address of a graph allocation": refused, as the
		 * driver refuses it for its own memory. */
		*rc = CUDA_ERROR_INVALID_VALUE;
		return 1;
	}
	if (!async && remat_capture_strict()) {
		/* What cuMemFree would do: refused, and the capture with it. */
		*rc = remat_drv.cuCtxSynchronize();
		if (*rc != CUDA_SUCCESS)
			return 1;
	}
	pthread_mutex_lock(&session.lock);
	if (session.state == SESSION_PLAN || session.state == SESSION_RUN)
		replay_free(p); /* while the allocator still knows it */
	if (session_following())
		prof_free(p);
	pthread_mutex_unlock(&session.lock);
	if (!async)
		remat_drv.cuCtxSynchronize();
	return remat_free(p, stream, async, rc);
}

void session_function_name(void *func, const char *name, int is_kernel)
{
	pthread_mutex_lock(&session.lock);
	prof_function_name(func, name, is_kernel);
	pthread_mutex_unlock(&session.lock);
}
