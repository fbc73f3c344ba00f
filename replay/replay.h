/*
 * replay.h — the public face of run mode's replay engine (replay/): what
 * the profiler hands over once an iteration is profiled, and the calls
 * interpose/ and profiler/ make for every op and managed allocation from
 * then on.
 *
 * Each iteration is checked op by op against the profiled one.  While a
 * plan is applied, buffers are evicted after the ops the plan names and
 * rebuilt before the ops that need them, by replaying the ops that wrote
 * them with this iteration's parameter bytes (engine.c, steps.c).
 */
#ifndef REMAT_REPLAY_H
#define REMAT_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include "../profiler/profiler.h"

/* One op of the profiled iteration, as later iterations must repeat it. */
struct replay_op {
	int kind; /* enum remat_op_kind */
	void *func;
	void *kinfo; /* struct remat_kinfo (profiler/internal.h) */
	unsigned grid[3], block[3], shmem;
	CUstream stream;
	int32_t stream_id;
	uint32_t params_len;
	int via_extra;
	int copy; /* enum remat_copy_kind, resolved */
	uint64_t bytes;
	int replayable;
	uint32_t wr_off, nwr;   /* buffers it writes: replay_profile.wr[wr_off ..] */
	uint32_t ref_off, nref; /* buffers it references: replay_profile.ref[ref_off ..] */
	uint64_t sig;
};

struct replay_buf {
	uint64_t addr, size, rounded;
	int small;
	int64_t alloc_at, free_at, alloc_seq;
};

struct replay_profile {
	uint64_t graph_hash;
	int32_t nops, nbufs;
	struct replay_op *ops;
	struct replay_buf *bufs;
	int32_t *wr, *ref;
	/* buffer id of the n-th allocation of the iteration */
	int32_t *seq;
	int32_t nseq;
	CUstream streams[64];
	int nstreams;
	int64_t level0;     /* managed bytes live when op 0 was issued */
	int64_t first_iter; /* index of the first iteration after the profile (for logs) */
};

void replay_profile_free(struct replay_profile *p);

/* The profiled iteration is complete (ownership of p passes); the op
 * being issued now is op 0 of the next iteration.  budget: bytes; level:
 * requested bytes of live managed allocations now. */
void replay_start(struct replay_profile *p, uint64_t budget, int64_t level);

enum { REPLAY_CONTINUE = 0, REPLAY_REPROFILE = 1 };
/* Around the real call of every op in run mode.  REPLAY_REPROFILE: the
 * engine gave up on this profile (repeated divergence); the profiler
 * starts over, and replay_op_end is not called for this op. */
int replay_op_begin(struct remat_op *op);
void replay_op_end(struct remat_op *op, CUresult rc);
/* Managed allocations in run mode. */
void replay_alloc(CUdeviceptr p, size_t size);
void replay_free(CUdeviceptr p);
/* The trace writer finished: ok 1, or 0 (nothing to plan from). */
void replay_trace_written(int ok);
void replay_shutdown(void);

#endif
