/*
 * plan.h — the plan model, one type for remat-plan (planner/, which makes,
 * evaluates and writes plans) and for the runtime (acquire/ reads plan
 * files into it, replay/ executes it).  On disk: docs/plan-format.md.
 *
 * Op positions and buffer ids are those of the graph (trace) the plan was
 * made for.
 */
#ifndef REMAT_PLAN_H
#define REMAT_PLAN_H

#include <stddef.h>
#include <stdint.h>

enum pl_step_kind {
	PL_STEP_MAP,     /* map buffer arg's physical memory again (same address) */
	PL_STEP_SAVE,    /* copy live buffer arg aside (a transient copy) */
	PL_STEP_REPLAY,  /* re-launch op arg with the parameter bytes of this iteration */
	PL_STEP_RESTORE, /* copy buffer arg back from its saved copy, free the copy */
	PL_STEP_RELEASE, /* unmap buffer arg (a transient or an intermediate no longer needed) */
	PL_STEP_STASH,   /* copy buffer arg aside into its stash, which outlives the position */
	PL_STEP_UNSTASH, /* copy buffer arg back from its stash and free the stash */
	/* Version 3, offload to page-locked host memory: */
	PL_STEP_OFFLOAD,  /* copy buffer arg to its host copy on the device-to-host copy stream */
	PL_STEP_PREFETCH, /* map buffer arg, copy its host copy back on the host-to-device stream */
	PL_STEP_AWAIT,    /* the op's stream waits for arg's prefetch; the host copy is freed */
};
#define PL_STEP_KINDS 10
/* Whether a kind moves data to or from host memory (plan version 3). */
#define PL_STEP_IS_OFFLOAD(k)                                                                      \
	((k) == PL_STEP_OFFLOAD || (k) == PL_STEP_PREFETCH || (k) == PL_STEP_AWAIT)

/* The step names of the plan format, indexed by enum pl_step_kind. */
extern const char *const pl_step_names[PL_STEP_KINDS];

struct pl_step {
	int32_t kind; /* enum pl_step_kind */
	int32_t arg;  /* buffer id, or op position for REPLAY */
};

struct pl_plan {
	int32_t nops;
	uint64_t graph_hash;
	int64_t budget; /* bytes */
	char planner[16];
	/* CSR lists per op position p: before[p] = steps[step_off[p] .. step_off[p+1]),
	 * evict_after[p] = evict[evict_off[p] .. evict_off[p+1]). */
	uint32_t *step_off; /* nops + 1 entries */
	struct pl_step *steps;
	uint32_t *evict_off; /* nops + 1 entries */
	int32_t *evict;
	/* Buffers live across the iteration boundary that the plan keeps
	 * unmapped there (dead across it); NULL when none. */
	int32_t nboundary;
	int32_t *boundary;
	/* Buffers live across the boundary that no op of the iteration
	 * touches, kept on the host while the plan applies (version 3,
	 * "parked_on_host"): copied out and unmapped once when the plan starts
	 * applying, copied back when it stops.  NULL when none. */
	int32_t nparked;
	int32_t *parked;
	/* Informational figures written with the plan (-1 unknown). */
	int64_t baseline_peak, peak, recompute_ns, iteration_ns;
	/* Plans that offload: the copy engines' bandwidth they were made for
	 * (GB/s, each direction; 0 when the plan does not offload), the time
	 * the model says copies stick out of compute, the host memory its
	 * copies need at most (-1 unknown). */
	double offload_gbps;
	int64_t stall_ns, host_bytes;
};

/* Builds a plan from unordered (position, step) and (position, buffer)
 * entries; steps at one position keep the order they were added in. */
struct pl_plan_builder;
struct pl_plan_builder *pl_builder_new(int32_t nops);
int pl_builder_step(struct pl_plan_builder *b, int32_t pos, int32_t kind, int32_t arg);
int pl_builder_evict(struct pl_plan_builder *b, int32_t pos, int32_t buf);
struct pl_plan *pl_builder_finish(struct pl_plan_builder *b); /* frees b */

/* A plan with nops positions and room for nsteps steps and nevict
 * evictions, all offsets 0 (the caller fills the CSR arrays); NULL when
 * out of memory. */
struct pl_plan *pl_plan_alloc(int32_t nops, size_t nsteps, size_t nevict);
struct pl_plan *pl_plan_empty(int32_t nops);
void pl_plan_free(struct pl_plan *p);

/* ---- file.c ---- */
/* The whole file at path, NUL-terminated (*n bytes before the NUL), in
 * a malloc'd buffer; NULL with a message naming the file. */
char *pl_file_read(const char *path, size_t *n, char *err, size_t errlen);

/* ---- checksum.c: the checksum of a plan file (docs/plan-format.md) ----
 * A plan file ends with
 *     "checksum": "0x<16 lower-case hex digits>",
 *     "end": true
 *   }
 * and the checksum is FNV-1a 64 of every byte before that "checksum" key. */

/* FNV-1a 64 of n bytes. */
uint64_t pl_checksum_of(const char *bytes, size_t n);
/* The offset of the "checksum" key that ends the file (the bytes before it
 * are what it covers), its value in *stated; -1 when the file does not end
 * with that member and "end": true. */
long pl_checksum_locate(const char *bytes, size_t n, uint64_t *stated);
/* For a file without a checksum that ends with `, "end": true }`: the
 * offset of its "end" key (where the checksum member goes), else -1. */
long pl_checksum_unsealed_end(const char *bytes, size_t n);
/* The end of a plan file whose bytes so far hash to h: the checksum member,
 * "end": true and the closing brace.  Its length, or -1 when n is short
 * (PL_CHECKSUM_TAIL_MAX is enough). */
#define PL_CHECKSUM_TAIL_MAX 64
int pl_checksum_tail(uint64_t h, char *out, size_t n);

#endif
