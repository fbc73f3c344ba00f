/*
 * profiler.h — the public face of profiler/: finding the training
 * iteration in the stream of ops, recording one iteration in full, and the
 * profile that recording hands over — written as the trace
 * (docs/trace-format.md) and, in run mode, what replay/ checks later
 * iterations against and replays from.
 *
 * Every function here is called with the session's lock held (session/),
 * except prof_trace_write, prof_publish_join and prof_profile_put.
 */
#ifndef REMAT_PROFILER_H
#define REMAT_PROFILER_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include "../core/op.h"

/* ---- the profile ---------------------------------------------------------- */

struct prof_buf {
	uint64_t addr, size, rounded;
	int small, persistent;
	/* Live across the boundary, and the first access of each iteration
	 * proved to overwrite all of it: its content there is never read. */
	int dead_across;
	int64_t alloc_at, free_at, alloc_seq; /* -1: before / still live / not inside */
	/* A region of a long-lived allocation (docs/trace-format.md): the
	 * allocation's address and the region's offset in it.  map_addr and
	 * rounded are the whole chunks inside the region, what eviction
	 * unmaps; a whole allocation has map_addr == addr. */
	int region;
	uint64_t alloc_addr, alloc_off, map_addr;
	/* The shared chunk runs it is one of the buffers of, each as its index
	 * in the profile's shared + 1 (0: none): at most its first and its
	 * last chunk are shared. */
	uint32_t shared[2];
	char **site; /* "function+0xoff (object)", innermost first */
	size_t nsite;
};

/* Where eviction unmaps buffer u: its whole chunks, rounded bytes from
 * here. */
static inline uint64_t prof_buf_map_addr(const struct prof_buf *u)
{
	return u->region ? u->map_addr : u->addr;
}

/* A run of chunks of a split allocation that no region holds whole, with
 * the same regions in each (docs/trace-format.md, "Shared chunks"):
 * buffers first .. first + n - 1 (regions of one allocation are numbered
 * in address order).  It is needed while one of them is mapped: run mode
 * unmaps it when the last of them is evicted and maps it back before the
 * first is rebuilt.  Its bytes are part of edge_bytes. */
struct prof_shared {
	uint64_t addr, bytes;
	int32_t first;
	uint32_t n;
};

/* A launched function: its name and how its parameters are laid out (what
 * a replay needs to rebuild kernelParams from the recorded bytes). */
struct prof_kernel {
	char *name;
	int layout_known;
	size_t nparams;
	uint32_t (*param)[2]; /* offset, size */
	uint32_t param_bytes;
};

struct prof_ref {
	int32_t buf;
	uint64_t off;      /* byte offset into the buffer */
	int64_t param_off; /* byte offset in the parameters; -1 for copies */
};

struct prof_op {
	int kind;         /* enum remat_op_kind */
	const char *via;  /* static string */
	int32_t kernel;   /* index in kernels, -1 when not a kernel */
	const char *name; /* kernel name (owned by the kernel entry) or op name */
	unsigned grid[3], block[3], shmem;
	int32_t stream; /* index in the profile's streams */
	uint64_t params_off, params_len;
	struct prof_ref *refs;
	size_t nrefs;
	/* Buffer ids, each once: what it changed, and everything else it
	 * references (kernels list there every buffer a parameter points into). */
	int32_t *reads, *writes;
	size_t nreads, nwrites;
	/* Buffers among writes it changes only in part: what it leaves keeps
	 * the prior version, which its replay then needs. */
	int32_t *partial;
	size_t npartial;
	uint64_t bytes;
	int copy; /* enum remat_copy_kind */
	unsigned value;
	int64_t duration_ns;
	int replayable;
	const char *why_not; /* static string, "" when replayable */
	/* What later iterations are checked against (replay/). */
	void *func;       /* CUfunction/CUkernel as launched */
	CUstream cstream; /* as issued (stream ids merge NULL and CU_STREAM_LEGACY) */
	int via_extra;    /* parameters came packed in `extra` */
	/* correlation ids of the API calls that issued it, for CUPTI */
	uint32_t corr_driver, corr_runtime;
	uint32_t swap_copies;   /* libremat's swap copies issued inside the op's call, before it */
	uint32_t graph_kernels; /* graph launch: its kernel nodes (CUPTI reports each) */
	/* libremat's host copies before and after the op (delta.c), made inside
	 * its call: CUPTI reports them under the id of a runtime call */
	uint32_t own_copies[2];
	/* kernel: its launch attributes (cuLaunchKernelEx's; a cooperative entry
	 * point's as CU_LAUNCH_ATTRIBUTE_COOPERATIVE), replayed with it */
	CUlaunchAttribute *attrs;
	uint32_t nattrs;
	int collective; /* an NCCL kernel: never replayed, nothing copied around it */
};

/* One profiled iteration.  Immutable once prof_finish hands it over; shared
 * by the trace writer and replay, freed by the last prof_profile_put. */
struct remat_profile {
	int refs; /* holders (atomic) */
	uint64_t graph_hash;
	int pid;
	char *cmdline;
	char device[256];
	uint64_t device_memory, granularity;
	uint64_t period, iterations_seen, profiled, start_op;
	int64_t duration_ns;
	uint64_t persistent_bytes, peak_bytes, small_pool_bytes;
	/* Chunks of split allocations that no region holds whole: never
	 * evicted, counted like the small pool. */
	uint64_t edge_bytes;
	/* The part of edge_bytes that regions share (prof_shared). */
	struct prof_shared *shared;
	size_t nshared;
	/* a copy inside device memory: copy_fixed_ns + bytes / copy_bytes_per_us
	 * µs (copy_rate.c); copy_bytes_per_us 0 when not measured */
	int64_t copy_fixed_ns, copy_bytes_per_us;
	struct prof_buf *bufs;
	size_t nbufs;
	struct prof_kernel *kernels;
	size_t nkernels, capkernels;
	struct prof_op *ops;
	size_t nops;
	uint8_t *params;
	size_t params_len, params_cap;
	/* The streams ops were issued on, by id (0: the legacy stream). */
	CUstream *streams;
	int nstreams;
	int64_t level0; /* requested bytes of live managed allocations at op 0 */
	int cupti_available;
	const char *cupti_note; /* why durations are unknown, "" otherwise */
	uint64_t cupti_kernels, cupti_launches;
	int64_t cupti_mismatch;
	/* Device time in the profiled iteration (CUPTI, 0 without it): every
	 * record (the ops' and libremat's copies and proof launches; [0]
	 * kernels, [1] copies, [2] sets), and the ops' own. */
	uint64_t profiled_ns[3], ops_ns;
};

/* The physical peak of one unmodified iteration as the planning model
 * counts it (what remat-plan calls the baseline peak): a percentage
 * budget is of this. */
int64_t prof_baseline_peak(const struct remat_profile *p);

/* Launches kernel op q (o as issued: function, grid, block, shared
 * memory) on st as the program did: with its launch attributes through
 * cuLaunchKernelEx, plain cuLaunchKernel when it had none.  Replays use
 * it, and the profile's second run of a kernel (delta.c). */
CUresult prof_launch_as(const struct prof_op *q, const struct remat_op *o, CUstream st,
                        void **params, void **extra);

/* Drops one holder; the last frees the profile. */
void prof_profile_put(struct remat_profile *p);

/* Writes the profile to dir on a thread of its own; the caller's holder
 * passes to it.  done(ok, the profile's graph hash) runs on that thread once
 * the trace is written or has failed (one message). */
void prof_publish(struct remat_profile *p, const char *dir,
                  void (*done)(int ok, uint64_t graph_hash));
/* Waits for the writer (at exit). */
void prof_publish_join(void);

/* Writes trace.json and params.bin into dir (created when missing) under
 * temporary names, renamed into place, trace.json last.  0, or -1 with one
 * message in err. */
int prof_trace_write(const struct remat_profile *p, const char *dir, char *err, size_t errlen);

/* ---- detecting and recording ---------------------------------------------- */

enum prof_step {
	PROF_DETECTING, /* not part of a profile (yet) */
	PROF_RECORD,    /* op->pos of the profiled iteration: call prof_op_after */
	PROF_COMPLETE,  /* the profiled iteration is over; this op starts the next */
	PROF_GIVE_UP,   /* no iteration to profile (message logged) */
};

/* Every op while the iteration is looked for and profiled.  On PROF_RECORD
 * the op's inputs are copied to the host already; the caller holds its
 * lock across the real call so that the copies after it see only its
 * writes.  On PROF_COMPLETE, prof_finish hands the profile over. */
enum prof_step prof_op(struct remat_op *op);
void prof_op_after(struct remat_op *op, CUresult rc);
/* Ops in the profiled iteration (valid from PROF_RECORD on). */
size_t prof_period(void);
/* The finished profile (one holder: the caller), or NULL when out of
 * memory; the iteration index of the op that completed it goes in
 * first_iter. */
struct remat_profile *prof_finish(int64_t *first_iter);
/* Where the profiled iteration should begin, from its data flow
 * (boundary.c): an op index, 0 when op 0 is good enough (a cut must halve
 * the bytes live across it: written in one iteration, read in the next);
 * those bytes at op 0 in *now, at the cut in *best. */
size_t prof_better_boundary(const struct remat_profile *p, int64_t *now, int64_t *best);
/* After prof_finish: the iteration begins shift ops later; look for that
 * boundary and profile again.  Once per search for the iteration: 0 when
 * it was done already (the profile stands). */
int prof_recut(size_t shift);
/* The program is about to change the extents of memory it maps itself
 * (alloc.h): a profile under way is dropped, its regions would be cut
 * wrong. */
void prof_reshaped(void);
/* Starts over: look for the iteration again (a new profile). */
void prof_restart(void);
/* At exit: one message when a profile was under way. */
void prof_shutdown(void);

/* Managed allocations, as the allocator hands them out and takes them back
 * (always, while libremat is active: a later profile needs the live set).
 * stack: capture the allocating call stack (for the trace). */
void prof_alloc(CUdeviceptr p, size_t size, size_t rounded, int small, int stack);
void prof_free(CUdeviceptr p);
/* Requested bytes of live managed allocations. */
int64_t prof_live_bytes(void);

/* Names learnt when the program looks a function up. */
void prof_function_name(void *func, const char *name, int is_kernel);

/* ---- graphs (graphs.c) ------------------------------------------------------ */

/* An executable graph was instantiated from g (or updated to it): its
 * nodes are read now.  Forgotten when destroyed; opaque once changed node
 * by node. */
void prof_graph_read(CUgraphExec exec, CUgraph g);
void prof_graph_forget(CUgraphExec exec);
void prof_graph_opaque(CUgraphExec exec);
/* What a launch of exec may touch; NULL when it was never read. */
const struct remat_graph_refs *prof_graph_refs(CUgraphExec exec);

/* ---- for the swap net (session/swap_in.c) --------------------------------- */

/* Kernel func's parameter layout (per parameter: its offset and size in
 * the packed parameters): 1 when known, else 0. */
int prof_kernel_params(void *func, const uint32_t (**param)[2], size_t *nparams);
/* Work libremat issues itself on this thread from on = 1 to on = 0 (the
 * swapped allocations brought back before an op): CUPTI records of it are
 * not the program's. */
void prof_own_work(int on);
/* The copies that brought back what this thread's next op touches: n (0
 * none); counted for the op when it is inside a runtime call, where CUPTI
 * files them under the call's id, which the op's own copy shares. */
void prof_swap_copies(uint32_t n);

#endif
