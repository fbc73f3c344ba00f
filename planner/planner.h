/*
 * planner.h — the public face of planner/: the op-graph model of one
 * training iteration, graph and plan file I/O, the plan evaluator and the
 * planners.  Link $(BUILD)/libplanner.a with -ljansson -lglpk -lm.
 *
 * Every function that can fail returns a PL_* status and writes one
 * human-readable message (naming the file and location) into err (for
 * pl_plan_make, into its result's error).
 */
#ifndef LIBREMAT_PLANNER_H
#define LIBREMAT_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "../plan/plan.h"

enum pl_status {
	PL_OK = 0,
	PL_EINTERNAL = 1, /* out of memory, solver failure, a plan the evaluator rejects */
	PL_EINPUT = 2,    /* bad file, bad option value */
	PL_EBUDGET = 3,   /* no plan found fits the budget */
};

/* Buffer versions: a version is named by the op that wrote it. */
#define PL_VER_FRESH (-2) /* allocated in the iteration, never written yet */
#define PL_VER_PRE   (-1) /* content from before the iteration */

#define PL_REF_READ  1u /* real read: the op depends on the version it sees */
#define PL_REF_WRITE 2u /* the op changes the buffer */
#define PL_REF_PARTIAL                                                                             \
	4u /* the write covers only part of the buffer: the bytes it leaves                        \
	    * keep the prior version, so the op also depends on it (READ) */

struct pl_ref {
	int32_t buf;    /* buffer id */
	int32_t ver;    /* version the op sees before it runs */
	uint32_t flags; /* PL_REF_*; 0 = referenced only (conservative read of a fresh buffer) */
};

struct pl_op {
	const char *name;
	int64_t
	    duration_ns;  /* unknown durations (-1 in the trace) get the mean of the known ones */
	uint32_t ref_off; /* refs of this op: g->refs[ref_off .. ref_off + nrefs) */
	uint32_t nrefs;
	uint8_t replayable;
	uint8_t kind; /* PL_KIND_* */
	/* A collective (NCCL): never replayed, and no buffer is evicted
	 * across it (a gap spanning one is no candidate). */
	uint8_t collective;
	const char *why_not;
	/* What a trace says beyond the model (docs/trace-format.md), for the
	 * tools that show it; planners ignore it.  A graph file may leave it out. */
	uint8_t measured; /* duration_ns is from the file (else the mean of the known ones) */
	int32_t stream;   /* stream id, 0 when not given */
	int64_t bytes;    /* memcpy/memset: bytes moved */
	const char *via;  /* entry point that issued the op, "" when not given */
	const char *copy; /* memcpy: HtoD | DtoH | DtoD | HtoH, else "" */
};

enum pl_kind { PL_KIND_KERNEL, PL_KIND_MEMCPY, PL_KIND_MEMSET, PL_KIND_HOST_FUNC, PL_KIND_OTHER };

struct pl_buffer {
	int64_t size;     /* bytes requested */
	int64_t rounded;  /* physical bytes (0 for small packed ones) */
	int32_t alloc_at; /* first op after the allocation; -1 = before the iteration */
	int32_t free_at;  /* first op after the free; -1 = live at the end */
	uint8_t small;    /* packed into a shared chunk: never evicted */
	uint8_t persistent;
	/* Live across the iteration boundary (alloc_at = free_at = -1) and its
	 * content there is never read: the first access in the iteration is a
	 * full overwrite.  Only a graph or trace that says so sets it. */
	uint8_t dead_across;
	/* Never evicted nor rebuilt (remat-plan --exclude): verification found
	 * that replaying its writers does not reproduce its bytes. */
	uint8_t excluded;
	const char *name; /* may be "" */
	const char *site; /* allocating call stack, innermost first, one frame per line; "" */
	/* The shared chunk groups it is one of the buffers of, each as its
	 * index in g->shared + 1 (0: none); a buffer is in two at most. */
	uint32_t shared[2];
};

/* Chunks several buffers share (regions of one allocation whose ends fall
 * inside a chunk; docs/graph-format.md): mapped while at least one of its
 * buffers is.  Its buffers: g->shared_bufs[off .. off + n). */
struct pl_shared {
	int64_t bytes;
	uint32_t off, n;
};

/* A trace's sections beyond ops and buffers (docs/trace-format.md), for the
 * tools that show them; empty (is_trace 0, numbers -1) for a graph file. */
struct pl_trace_info {
	int is_trace;
	const char *device; /* "" when not given */
	int64_t device_memory;
	int32_t period, iterations_seen;
	int64_t duration_ns; /* sum of op durations the profiler measured */
	int64_t peak_bytes;  /* highest managed physical usage in the iteration */
	int cupti_available; /* 0: no durations, no cross-check (cupti_note says why) */
	int64_t cupti_kernels, cupti_launches, cupti_mismatch;
	const char *cupti_note;
};

struct pl_graph {
	char *name;
	uint64_t hash; /* trace graph_hash, the graph file's hash, or a hash of its content */
	int64_t granularity;
	int64_t small_pool_bytes;
	/* small pool plus persistent bytes not listed as buffers, the shared
	 * chunks not included (a file's const_bytes includes them) */
	int64_t const_bytes;
	int64_t iteration_ns; /* sum of op durations */
	/* A copy inside device memory (a save, restore, stash or unstash)
	 * takes copy_fixed_ns + bytes / copy_bytes_per_us µs, as the profiler
	 * measured it; copy_bytes_per_us 0: not measured, copies count as free. */
	int64_t copy_fixed_ns, copy_bytes_per_us;
	int32_t nops, nbufs;
	uint32_t nrefs;
	struct pl_op *ops; /* in iteration order; op i is at position i */
	struct pl_buffer *bufs;
	struct pl_ref *refs;
	int32_t nshared;
	struct pl_shared *shared;
	int32_t *shared_bufs;
	char *strings; /* storage behind the name pointers */
	struct pl_trace_info trace;
	/* Derived by pl_graph_finish(): */
	int64_t *live; /* baseline physical bytes while op p runs (nops entries) */
	int64_t baseline_peak;
};

/* ---- loading and saving graphs ---- */

/* A trace directory (docs/trace-format.md). */
int pl_graph_load_trace(const char *dir, struct pl_graph **out, char *err, size_t errlen);
/* A graph JSON file: docs/graph-format.md, or a networkx node-link graph
 * (Checkmate training graphs, random layered DAGs), recognised by content. */
int pl_graph_load_json(const char *path, struct pl_graph **out, char *err, size_t errlen);
/* A directory is read as a trace, anything else as a graph JSON file. */
int pl_graph_load(const char *path, struct pl_graph **out, char *err, size_t errlen);
/* Writes docs/graph-format.md. */
int pl_graph_save_json(const struct pl_graph *g, const char *path, char *err, size_t errlen);
void pl_graph_free(struct pl_graph *g);
/* The op-level lower bound of any plan's peak: the largest, over ops, of
 * the constant and persistent bytes plus the op's own buffers. */
int64_t pl_graph_lower_bound(const struct pl_graph *g);
/* Formats the hash as "0x%016llx" into buf (at least 19 bytes). */
const char *pl_hash_str(uint64_t h, char *buf);

/* ---- plans (docs/plan-format.md; the model is plan/plan.h) ---- */

/* Loads a plan; with g non-NULL also checks its graph_hash, op count and
 * references.  A plan whose checksum does not match its bytes is refused. */
int pl_plan_load_json(const char *path, const struct pl_graph *g, struct pl_plan **out, char *err,
                      size_t errlen);
/* Writes the plan, its checksum last. */
int pl_plan_save_json(const struct pl_plan *p, const char *path, char *err, size_t errlen);
/* Gives a plan edited by hand the checksum of its new content, in place,
 * once it reads back as a plan (remat-plan --rehash). */
int pl_plan_rehash(const char *path, char *err, size_t errlen);
void pl_plan_free(struct pl_plan *p);

/* ---- the evaluator ---- */

struct pl_eval {
	int64_t *curve; /* nops entries: highest physical bytes during op p and its rebuild steps */
	int64_t peak;
	int32_t peak_at;
	int64_t recompute_ns; /* sum of replayed op durations */
	/* Offload (plan version 3), timed on one compute stream and one copy
	 * engine per direction at the plan's offload_gbps: the time compute
	 * waits for copies (a prefetch not done at its await, an offload not
	 * done where the buffer is evicted), the most host memory the copies
	 * hold at once, the offloads, and the iteration's modelled time
	 * (op durations + replays + stalls). */
	int64_t stall_ns, host_peak, time_ns;
	int32_t offloads;
	int32_t replays;
	int32_t evicted_buffers; /* distinct buffers evicted at least once */
	int64_t evictions;       /* evict_after entries */
	int valid;
	char error[256]; /* first violation when !valid */
};

/* Simulates the plan op by op; 0 on success (even if the plan is invalid:
 * see e->valid), PL_EINTERNAL on allocation failure.  Free with pl_eval_free. */
int pl_evaluate(const struct pl_graph *g, const struct pl_plan *p, struct pl_eval *e);
void pl_eval_free(struct pl_eval *e);

/* ---- budgets ---- */

/* The grammar of core/budget.h ("12G", "1536M", "4096", "1.5G", "50%"); a
 * percentage is of baseline_peak.  K/M/G/T are powers of 1024. */
int pl_parse_budget(const char *s, int64_t baseline_peak, int64_t *out, char *err, size_t errlen);

/* ---- planners ---- */

/* ilp: every other planner, then the ILP from the best of them;
 * chain: the program over the chain of stages (planners/structure.c). */
enum pl_planner {
	PL_PLANNER_NONE,
	PL_PLANNER_GREEDY,
	PL_PLANNER_DTR,
	PL_PLANNER_ILP,
	PL_PLANNER_CHAIN
};

struct pl_options {
	enum pl_planner planner;
	/* the whole planning, from start to plan (min-peak search included);
	 * 0 = default (30 s).  Counted from `started` (pl_now(); 0 = when
	 * pl_plan_make is called), so a caller can count its loading in. */
	double time_limit_s;
	double started;
	/* stop improving once the gap to the bound is at most this (0.01) */
	double gap_tol;
	int segments;    /* offer chain-segment candidates (default 1) */
	int max_segment; /* longest segment in buffers; 0 = default (8) */
	int strict;      /* replays may not read buffers rebuilt at the same position */
	/* 2 (default): plans may use stashes and keep buffers unmapped at the
	 * boundary (plan format version 2); 1: only what a version 1 runtime
	 * executes */
	int plan_version;
	int no_min_peak; /* on PL_EBUDGET skip the search for the smallest peak */
	int verbose;
	int progress; /* a line per stage on stderr (pl_progress) */
	/* > 0: buffers may also be offloaded to page-locked host memory over
	 * copy engines of this many GB/s each direction (plan version 3); 0
	 * (default): keep or recompute only (remat-plan --offload-gbps, which
	 * libremat passes the copy rate it measured unless REMAT_OFFLOAD=0). */
	double offload_gbps;
	/* with offload_gbps: nothing is recomputed (remat-plan --offload-only,
	 * for comparisons) */
	int offload_only;
	/* pl_sweep_run: how many budgets (at least 2; remat-plan --sweep N) */
	int32_t sweep_points;
};

struct pl_result {
	int64_t baseline_peak, peak, budget;
	int64_t recompute_ns, iteration_ns;
	int64_t stall_ns; /* copies sticking out of compute (offload), in the model */
	int32_t offloads;
	int32_t evicted_buffers, replays;
	double solve_s;
	/* The best proven lower bound of the recompute cost of any plan within
	 * the budget, whichever planner makes it (search/bound.c), and the gap of the
	 * plan to it: (recompute - bound) / recompute, 0 when both are 0. */
	int64_t bound_ns;
	double gap;
	char planner[16];   /* planner that produced the plan (ilp may fall back to a heuristic) */
	int64_t min_peak;   /* on PL_EBUDGET: the smallest budget this planner meets (it
	                     * makes a plan when asked for it again) */
	int64_t peak_bound; /* no plan of any planner has a lower peak */
	int32_t candidates;
	char error[1024]; /* pl_plan_make's message when it fails */
};

void pl_options_default(struct pl_options *o);
/* Monotonic seconds, the clock of pl_options.started. */
double pl_now(void);
/* Plans for budget bytes.  On PL_EBUDGET res->min_peak says what is reachable.
 * The returned plan has passed pl_evaluate with peak <= budget.  The
 * message of a failure is in res->error. */
int pl_plan_make(const struct pl_graph *g, int64_t budget, const struct pl_options *o,
                 struct pl_plan **out, struct pl_result *res);
const char *pl_planner_name(enum pl_planner p);
/* search/progress.c: with o->progress, "remat-plan: progress: <s> s: <fmt...>" on stderr. */
void pl_progress(const struct pl_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int pl_planner_parse(const char *s, enum pl_planner *out);

/* ---- the budget curve (search/sweep.c) ---- */

struct pl_sweep_point {
	int64_t budget, peak, recompute_ns, bound_ns;
	double gap, solve_s;
	char planner[16];
};

struct pl_sweep {
	int64_t baseline_peak, min_peak, peak_bound, iteration_ns;
	int32_t npoints; /* by budget, descending; recompute never rises as it falls */
	struct pl_sweep_point *points;
	double solve_s;
	/* what pl_sweep_load_json read of the graph: its name and hash */
	char graph[256];
	uint64_t graph_hash;
};

/* Plans at budgets from the baseline down to the smallest this planner
 * meets (o->sweep_points of them, evenly spaced, that one last), sharing the
 * candidates and the chain between them, within o->time_limit_s in all.
 * A plan for a budget also meets every larger one, so each point keeps
 * the cheapest plan found at or below its budget: the curve is
 * monotone. */
int pl_sweep_run(const struct pl_graph *g, const struct pl_options *o, struct pl_sweep *out,
                 char *err, size_t errlen);
int pl_sweep_save_json(const struct pl_graph *g, const struct pl_sweep *sw, const char *path,
                       char *err, size_t errlen);
/* Reads what pl_sweep_save_json wrote (graph name and hash into
 * out->graph, out->graph_hash). */
int pl_sweep_load_json(const char *path, struct pl_sweep *out, char *err, size_t errlen);
void pl_sweep_free(struct pl_sweep *sw);

#endif
