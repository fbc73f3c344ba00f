/*
 * internal.h — the replay engine's state, shared by engine.c (iterations,
 * checks, divergence), steps.c (evictions and rebuild steps) and
 * verify.c (verification mode).  Everything here is guarded by E.lock.
 */
#ifndef REMAT_REPLAY_INTERNAL_H
#define REMAT_REPLAY_INTERNAL_H

#include <pthread.h>

#include "replay.h"
#include "rplan.h"

/* One replay source: op k as it was issued in this iteration. */
struct replay_src {
	uint64_t iter; /* iteration it was recorded in (stale otherwise) */
	void *func;
	unsigned grid[3], block[3], shmem;
	uint64_t dst, src, bytes;
	unsigned value, elem;
	uint8_t *params; /* params_len bytes, allocated once at plan install */
	uint32_t len;
};

struct replay_iv {
	uint64_t lo, hi;
	int32_t buf;
};

enum acq_phase {
	ACQ_WAIT_TRACE, /* the trace writer has not finished */
	ACQ_PENDING,    /* acquire_begin called, polling */
	ACQ_NONE,       /* no plan for good: unmodified */
	ACQ_HAVE,       /* E.plan is set */
};

struct replay_engine {
	pthread_mutex_t lock;
	struct replay_profile *P;
	struct rplan *plan;
	uint64_t budget;
	int acq;                 /* enum acq_phase (engine.c) */
	int trace_status;        /* 0 not yet, 1 written, -1 failed (atomic) */
	int32_t pos;             /* next op position; -1 lost (after a divergence) */
	int tentative;           /* pos 0 reached by a guess at the boundary */
	int applying;            /* this iteration applies the plan */
	int verifying;           /* this iteration verifies the plan (verify.c) */
	int diverged, ndiverged; /* this iteration; consecutive iterations */
	uint64_t iter;           /* iterations since run mode began */
	int32_t nalloc;          /* allocations seen in this iteration */
	int64_t level;           /* requested bytes of live managed allocations */
	uint8_t *live, *evicted, *transient;
	uint64_t *saved;    /* SAVE: transient copy per buffer, 0 none */
	uint64_t *bstreams; /* per buffer: stream ids that reference it (bits) */
	int32_t *src_of;    /* per op: index in srcs, -1 none */
	struct replay_src *srcs;
	int32_t nsrcs;
	struct replay_iv *iv; /* evicted live buffers, sorted by address */
	int32_t niv;
	int32_t *by_addr; /* buffer ids sorted by address */
	uint64_t replays, evictions, rebuilds_unplanned;
	int warned_src;
	uint64_t lost_ops; /* ops since the engine lost the iteration */
	int reprofiles;
	int peak_reset;        /* a replay iteration began: applied_peak means something */
	uint64_t applied_peak; /* physical peak while the plan was applied */
};

extern struct replay_engine E;

/* steps.c */
/* Runs the steps before op position q on stream s.  mode 0: as planned;
 * 1 recovery, running ahead of the ops after a divergence at cur (replays
 * of ops not issued yet are skipped, live buffers are never released);
 * 2 verification (live buffers are never released). */
int replay_steps(int32_t q, CUstream s, int mode, int32_t cur);
void replay_evict_after(int32_t p, CUstream s);
/* Rebuilds every evicted live buffer (divergence, an unplanned access). */
void replay_rebuild_all(CUstream s);
void replay_capture(int32_t pos, const struct remat_op *op);
int replay_launch(int32_t k, CUstream s);
int32_t replay_find_evicted(uint64_t lo, uint64_t hi);
void replay_iv_add(int32_t b);
void replay_iv_del(int32_t b);
int32_t replay_buf_at(uint64_t addr);
int replay_plan_install(struct rplan *pl);
void replay_plan_drop(void);

/* engine.c */
void replay_no_plan(void);

/* verify.c */
/* Before op pos of a verification iteration, instead of its steps. */
void replay_verify_begin(int32_t pos, CUstream s);
void replay_verify_end_iteration(void);
int replay_verify_wanted(void);

#endif
