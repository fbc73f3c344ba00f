/*
 * internal.h — the replay engine's state, shared by engine.c (iterations,
 * checks, divergence), steps.c (evictions and rebuild steps) and verify.c
 * (verification mode).  All of it is touched with the session's lock held.
 */
#ifndef REMAT_REPLAY_INTERNAL_H
#define REMAT_REPLAY_INTERNAL_H

#include "replay.h"

/* One replay source: op k as it was issued in this iteration. */
struct replay_src {
	uint64_t iter;      /* iteration it was recorded in (stale otherwise) */
	struct remat_op op; /* as issued; its params and extra pointers are not kept */
	uint8_t *params;    /* len bytes, allocated once at plan install */
	uint32_t len;
};

struct replay_iv {
	uint64_t lo, hi;
	int32_t buf;
};

/* What run mode did, over every profile of the process (reported at exit). */
struct replay_totals {
	uint64_t replays, evictions, rebuilds_unplanned, offloads;
	uint64_t parked;       /* copies out of parked buffers (park.c) */
	int peak_reset;        /* a replay iteration began: applied_peak means something */
	uint64_t applied_peak; /* physical peak while the plan was applied */
	int64_t budget;
	CUresult error; /* why run mode failed for good (REPLAY_FAIL), else 0 */
};

/* offload_slots.c: the host copies of a plan (one per OFFLOAD step, in
 * plan order) and their slots in the pinned pool, shared by copies whose
 * time on the host (offload to await) does not overlap. */
struct replay_slots {
	int32_t ncopies;
	uint64_t pool_bytes;    /* what the pool needs */
	uint64_t live_peak;     /* the most slot bytes held at once */
	uint64_t sum;           /* the slot bytes of every copy */
	int32_t *copy_of_step;  /* per step of the plan: its copy, -1 not an OFFLOAD */
	int32_t *buf;           /* per copy: its buffer */
	uint64_t *slot, *bytes; /* per copy: offset in the pool, slot size */
	/* per copy (CSR): the copies whose copy back must end before its copy
	 * out starts (the last earlier users of its slot's bytes) */
	uint32_t *after_off;
	int32_t *after;
};
/* 0, or -1 out of memory.  pl is valid (replay_plan_validate). */
int replay_slots_plan(const struct remat_profile *prof, const struct pl_plan *pl,
                      struct replay_slots *s);
void replay_slots_free(struct replay_slots *s);

struct replay_engine {
	struct remat_profile *profile; /* NULL: not running */
	struct replay_hooks hooks;
	struct pl_plan *plan; /* NULL until one arrives */
	int64_t budget;
	int64_t first_iter;      /* process iteration index of run mode's first one */
	int stopped;             /* no plan will come: the session stops run mode */
	int reshaped;            /* the program changed memory it maps: profile again */
	int32_t pos;             /* next op position; -1 lost (after a divergence) */
	int boundary_due;        /* the last op was issued: the boundary comes next */
	int due_tentative;       /* ... guessed from the profile's last op while lost */
	int tentative;           /* pos 0 reached by a guess at the boundary */
	int resync_left;         /* ops to match before a start found while lost counts */
	int observe;             /* the next iteration does not apply the plan */
	int applying;            /* this iteration applies the plan */
	int verifying;           /* this iteration verifies the plan (verify.c) */
	int diverged, ndiverged; /* this iteration; consecutive iterations */
	uint64_t iter;           /* iterations since run mode began */
	int32_t nalloc;          /* allocations seen in this iteration */
	int64_t level;           /* requested bytes of live managed allocations */
	uint8_t *live, *evicted, *transient;
	uint8_t *lost;      /* per buffer: said it could not be rebuilt (warned once) */
	uint64_t *saved;    /* SAVE: transient copy per buffer, 0 none */
	uint64_t *stash;    /* STASH: copy per buffer kept until its UNSTASH, 0 none */
	uint8_t *boundary;  /* per buffer: the plan keeps it unmapped at the boundary */
	uint64_t *bstreams; /* per buffer: stream ids that reference it (bits) */
	int32_t *seq;       /* buffer id of the n-th allocation of the iteration, -1 none */
	int32_t nseq;
	int32_t *src_of; /* per op: index in srcs, -1 none */
	struct replay_src *srcs;
	int32_t nsrcs;
	struct replay_iv *iv; /* evicted live buffers, sorted by address */
	int32_t niv;
	int32_t *by_addr; /* buffer ids sorted by address */
	int warned_src;
	uint64_t lost_ops; /* ops since the engine lost the iteration */
	/* Offload (offload.c), NULL/0 while the plan has none: per buffer where
	 * its content is (REPLAY_OFF_*) and the copy (offload_slots.c) that
	 * holds it; per copy the events ending its copy out and its copy back;
	 * the pinned pool; the copy streams and a scratch event (kept from
	 * plan to plan). */
	uint8_t *off;
	int32_t *off_copy;
	struct replay_slots slots;
	CUevent *out_ev, *back_ev;
	uint8_t *off_pool;
	uint64_t off_pool_bytes;
	/* per buffer the plan parks: 1 + the offset of its host copy in the
	 * pool (0: not parked by the plan); NULL when it parks none */
	uint64_t *park_at;
	CUstream copy_out, copy_in;
	CUevent off_scratch;
	struct replay_totals totals;
};

extern struct replay_engine replay_engine;

/* iter_clock.c: wall-clock time per iteration, with and without the plan. */
enum replay_clock_kind { REPLAY_CLOCK_SKIP, REPLAY_CLOCK_UNMODIFIED, REPLAY_CLOCK_PLAN };
void replay_clock_start(void);
void replay_clock_boundary(enum replay_clock_kind kind);
void replay_clock_report(void);

/* steps.c */
/* Runs the steps before op position q on stream s, up to the first that
 * fails (its error returned; what they mapped is evicted again).  mode 0: as planned;
 * 1 recovery, running ahead of the ops after a divergence at cur (replays
 * of ops not issued yet are skipped, live buffers are never released);
 * 2 verification (live buffers are never released). */
CUresult replay_steps(int32_t q, CUstream s, int mode, int32_t cur);
void replay_evict_after(int32_t p, CUstream s);
/* Maps buffer b's chunks back for work on s; a failure is logged as
 * "WHAT of buffer b does not fit" (what NULL: not logged). */
CUresult replay_map_buf(int32_t b, CUstream s, const char *what);
/* Unmaps buffer b just mapped for s, once s is done with it (only s used it). */
void replay_unmap_fresh(int32_t b, CUstream s);
/* At an iteration boundary: the buffers the plan keeps unmapped there are
 * unmapped when this iteration applies it (keep), mapped again (content
 * undefined: their first use overwrites them) when it does not. */
void replay_boundary_buffers(int keep);
/* Frees every saved and stashed copy (the plan stops, or this iteration
 * no longer applies it). */
void replay_copies_free(CUstream s);
/* Rebuilds every evicted live buffer (divergence, an unplanned access, a
 * failed rebuild).  What cannot be rebuilt stays unmapped, counted in
 * *newly_lost (if not NULL) the first time; the first error is returned.
 * The caller says so, once. */
CUresult replay_rebuild_all(CUstream s, int32_t *newly_lost);
void replay_capture(int32_t pos, const struct remat_op *op);
CUresult replay_launch(int32_t k, CUstream s);
int32_t replay_find_evicted(uint64_t lo, uint64_t hi);
void replay_iv_add(int32_t b);
void replay_iv_del(int32_t b);
/* Takes out of the evicted list, in one pass, each buffer starting in
 * [lo, hi) for which drop(b) answers 1 (drop may change b's state). */
void replay_iv_drop(uint64_t lo, uint64_t hi, int (*drop)(int32_t b));
int32_t replay_buf_at(uint64_t addr);
/* 0, or -1 (plan freed, why says what is wrong with it, nothing printed)
 * when it does not pass replay_plan_validate. */
int replay_plan_install(struct pl_plan *pl, char *why, size_t n);
void replay_plan_drop(void);
/* validate.c: op k of profile p can be replayed (its parameters can be
 * rebuilt from recorded bytes). */
int replay_op_replayable(const struct remat_profile *p, int32_t k);

/* validate.c: runs plan pl against the profile as the engine would, with
 * budget bytes.  0 when every step is legal, every op and replay reads
 * what it read in the profiled iteration and the memory stays within the
 * budget (its peak in *peak, when not NULL); -1 with the first wrong step
 * in why. */
int replay_plan_validate(const struct remat_profile *prof, const struct pl_plan *pl, int64_t budget,
                         int64_t *peak, char *why, size_t n);

/* launch_attrs.c */
/* Whether op was launched with the attributes the profile's op was. */
int replay_attrs_same(const struct prof_op *q, const struct remat_op *op);

/* offload.c */
enum {
	REPLAY_OFF_NONE,
	REPLAY_OFF_LEAVING,
	REPLAY_OFF_HOST,
	REPLAY_OFF_COMING,
	REPLAY_OFF_PARKED /* on the host for as long as the plan applies (park.c) */
};
/* After validation: the pinned pool and copy streams the plan's offload
 * needs; 0, or -1 with why (everything undone). */
int replay_offload_install(const struct pl_plan *pl, char *why, size_t n);
void replay_offload_drop(void);
/* One OFFLOAD, PREFETCH or AWAIT step (the plan's steps[step]) for op stream
 * s (mode as replay_steps). */
CUresult replay_offload_step(int kind, int32_t b, uint32_t step, CUstream s, int mode);
/* Buffer b (every buffer) mapped with its content again on stream s,
 * whatever its offload state; what cannot be stays unmapped. */
CUresult replay_offload_restore(int32_t b, CUstream s);
CUresult replay_offload_restore_all(CUstream s);

/* park.c */
/* At a boundary where the plan starts applying: each parked buffer not
 * on the host yet is copied there and unmapped; the first error, which
 * leaves that one mapped (the caller does not apply the plan). */
CUresult replay_park_all(void);
/* Parked buffer b mapped and whole again on s (synchronously); on an
 * error it stays unmapped with its host copy. */
CUresult replay_park_restore(int32_t b, CUstream s);
/* The program frees the allocation [p, p + size): the host copies of the
 * buffers parked in it are dropped. */
void replay_park_forget(CUdeviceptr p, size_t size);

/* graph.c */
/* The evicted buffer a graph launch touches (its nodes' parameter words and
 * ranges, as read at instantiation), or -1; any evicted buffer when the
 * graph could not be read. */
int32_t replay_graph_touches_evicted(const struct remat_op *op);

/* engine.c */
/* No plan for good: back to the unmodified job. */
void replay_no_plan(void);

/* verify.c */
/* Before op pos of a verification iteration, instead of its steps. */
void replay_verify_begin(int32_t pos, CUstream s);
void replay_verify_end_iteration(void);
int replay_verify_wanted(void);
/* Buffer b is never to be evicted: the job is planned again without it at
 * the verification iteration's end.  1 when newly excluded. */
int replay_verify_exclude(int32_t b);

/* verify_windows.c: what the plan keeps off the device, poisoned in the
 * verification iteration.  begin: before op pos, before verify.c's
 * replay_verify_begin; 1 when replay_verify_windows_end must follow the
 * program's call.  unpoison_all: every poisoned buffer gets its content
 * back (the iteration ends or diverges). */
int replay_verify_windows_begin(int32_t pos, const struct remat_op *op);
void replay_verify_windows_end(int32_t pos, const struct remat_op *op);
void replay_verify_unpoison_all(void);

#endif
