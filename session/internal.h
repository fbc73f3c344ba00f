/*
 * internal.h — what the files of session/ share: the mode, its lock, and
 * the plan hooks replay calls at iteration boundaries.
 */
#ifndef REMAT_SESSION_INTERNAL_H
#define REMAT_SESSION_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <cuda.h>

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

/* One lock for the profiler's and replay's state: taken once per op, held
 * across the real call only while an iteration is being profiled. */
extern pthread_mutex_t session_lock;
extern enum session_state session_state;

/* session.c: the only writer of the mode and of the two flags. */
void session_set_state(enum session_state s);
/* Swapping armed, or the state changed: recompute remat_session_watch. */
void session_update_watch(void);

/* This is a forked child: nothing of the parent's is touched (its locks
 * may be held by threads the child does not have). */
extern int session_forked;
/* FAILED: what every op gets. */
extern CUresult session_failure;
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

/* frameworks.c: the frameworks' allocator variables, set by the
 * constructor; at the first CUDA call, one line (REMAT_LOG=1) for each
 * that the program had set otherwise or changed since. */
void frameworks_set(void);
void frameworks_check(void);

#endif
