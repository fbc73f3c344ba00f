/*
 * internal.h — what the files of session/ share: the mode, its lock, and
 * the plan hooks replay calls at iteration boundaries.
 */
#ifndef REMAT_SESSION_INTERNAL_H
#define REMAT_SESSION_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <cuda.h>

#include <time.h>

#include "../acquire/acquire.h"
#include "../core/config.h"
#include "../replay/replay.h"
#include "session.h"

enum session_state {
	SESSION_OFF,
	SESSION_DETECT,
	SESSION_PROFILE,
	SESSION_PLAN,
	SESSION_RUN,
	SESSION_DONE,
	SESSION_FAILED,
};

/* planning.c: the acquisition under way. */
struct session_planning {
	struct acquire_request request;
	uint64_t graph_hash; /* request.graph_hash, 0 after a reset (atomic: the writer reads it) */
	int trace_status;    /* 0 not yet, 1 written, -1 failed (atomic: the writer sets it) */
	int acquiring;       /* acquire_begin was called */
};

/* The session's state.  The two hot-path flags (remat_session_active,
 * remat_session_watch) stay apart, in session.h: interpose/ reads them
 * on every call, without the lock. */
struct session {
	/* One lock for the profiler's and replay's state: taken once per op,
	 * held across the real call only while an iteration is being
	 * profiled. */
	pthread_mutex_t lock;
	enum session_state state;
	CUresult failure; /* FAILED: what every op gets */
	/* This is a forked child: nothing of the parent's is touched (its
	 * locks may be held by threads the child does not have). */
	int forked;
	struct timespec profile_start; /* when the profiled iteration began */
	/* start.c: lazy init at the first CUDA call that needs it */
	pthread_once_t ready_once;
	int ready_status;
	/* frameworks.c: the allocator variables the constructor set */
	struct remat_env_setting frameworks[REMAT_ENV_SETTINGS];
	int nframeworks;
	struct session_planning planning;
};
extern struct session session;

/* session.c: the only writer of the mode and of the two flags. */
void session_set_state(enum session_state s);
/* Swapping armed, or the state changed: recompute remat_session_watch. */
void session_update_watch(void);

/* States in which the live allocations matter: a profile, or replay. */
int session_following(void);
/* The profiler dropped the profile under way: detecting again. */
void session_profile_dropped(void);

/* planning.c: getting a plan for the profile replay follows. */
/* A profile was handed to replay: plans are now for it and this budget. */
void planning_begin(const struct remat_profile *p, int64_t budget);
/* The trace writer's callback (on its thread). */
void planning_trace_written(int ok, uint64_t graph_hash);
/* Forget the acquisition (a new profile comes). */
void planning_reset(void);
extern const struct replay_hooks planning_hooks;

/* swap_in.c: once the allocator swapped something to the host, before
 * every op: what it touches is brought back and pinned; released by
 * session_swap_release once the op is issued. */
void session_swap_in(const struct remat_op *op);
void session_swap_release(void);

/* frameworks.c: the frameworks' allocator variables, set by the
 * constructor; at the first CUDA call, one line (REMAT_LOG=1) for each
 * that the program had set otherwise or changed since. */
void frameworks_set(void);
void frameworks_check(void);

#endif
