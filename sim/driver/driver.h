/*
 * driver.h — the simulated driver's private face: the state shared by the
 * files of sim/driver (contexts, streams, device memory, the
 * clock, statistics, CUPTI hooks).  The public face is cuda.h itself.
 */
#ifndef SIMCUDA_DRIVER_H
#define SIMCUDA_DRIVER_H

#include <cuda.h>
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simcuda_abi.h"
#include "simcuda_internal.h"
#include "simcuda_stats.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- env.c: SIMCUDA_* configuration ------------------------------------ */

struct sim_config {
	uint64_t capacity;          /* SIMCUDA_MEMORY */
	uint64_t granularity;       /* SIMCUDA_GRANULARITY */
	int report;                 /* SIMCUDA_REPORT */
	const char *report_file;    /* SIMCUDA_REPORT_FILE */
	uint64_t fail_alloc;        /* SIMCUDA_FAIL_ALLOC: 1-based, 0 = never */
	uint64_t fail_launch;       /* SIMCUDA_FAIL_LAUNCH */
	uint64_t fail_copy;         /* SIMCUDA_FAIL_COPY: 1-based, 0 = never */
	CUresult fail_launch_error; /* SIMCUDA_FAIL_LAUNCH_ERROR */
	unsigned slow_stream_ms;    /* SIMCUDA_SLOW_STREAM */
	enum { FILL_POISON, FILL_ZERO, FILL_RANDOM } fill; /* SIMCUDA_FILL */
	/* SIMCUDA_FAIL_ALLOC or _LAUNCH=A-B (or A-): a sweep (sweep.c) forks a
	 * child at each of those events from A to B, into SIMCUDA_SWEEP_DIR. */
	enum sim_sweep_kind { SWEEP_NONE, SWEEP_ALLOC, SWEEP_LAUNCH } sweep;
	uint64_t sweep_from, sweep_to;
	const char *sweep_dir;
};
extern struct sim_config sim_cfg;
void sim_config_load(void);

/* ---- profile.c: the device profile (SIMCUDA_DEVICE) -------------------- */

enum sim_figure {
	FIG_LAUNCH,
	FIG_COPY_ISSUE,
	FIG_EVENT,
	FIG_SYNC,
	FIG_STREAM_WAIT,
	FIG_MALLOC,
	FIG_MALLOC_ASYNC,
	FIG_HOST_ALLOC,
	FIG_VMM_CREATE,
	FIG_VMM_MAP,
	FIG_VMM_SET_ACCESS,
	FIG_VMM_UNMAP,
	FIG_VMM_RELEASE,
	FIG_VMM_RESERVE,
	/* Per chunk (granule) of the range a VMM call covers, in enum sim_vmm order. */
	FIG_VMM_CREATE_CHUNK,
	FIG_VMM_MAP_CHUNK,
	FIG_VMM_SET_ACCESS_CHUNK,
	FIG_VMM_UNMAP_CHUNK,
	FIG_VMM_RELEASE_CHUNK,
	FIG_VMM_RESERVE_CHUNK,
	FIG_PCIE_GBPS,
	FIG_HBM_GBPS,
	FIG_FP32_TFLOPS,
	FIG_TF32_TFLOPS,
	FIG_BF16_TFLOPS,
	FIG_KERNEL_FLOOR_NS,
	FIG_COUNT
};
enum sim_vmm {
	VMM_CREATE,
	VMM_MAP,
	VMM_SET_ACCESS,
	VMM_UNMAP,
	VMM_RELEASE,
	VMM_RESERVE,
	VMM_KINDS
};

struct sim_profile {
	const char *device; /* h100, h200, a100, legacy */
	bool legacy;        /* no host costs; kernels by cost_ns, copies as before */
	/* Host time each entry point costs its caller, by CUPTI callback id. */
	uint32_t call_ns[CUPTI_DRIVER_TRACE_CBID_SIZE];
	uint64_t vmm_chunk_ns[VMM_KINDS];
	bool vmm_sync; /* SIMCUDA_VMM_SYNC=device: cuMemUnmap, cuMemSetAccess wait for the device */
	double pcie_bytes_per_ns; /* SIMCUDA_PCIE_GBPS (1 GB/s = 1 byte/ns) */
	double hbm_bytes_per_ns;
	double flops_per_ns[SIMCUDA_MATHS];
	double floor_ns; /* the shortest kernel */
};
extern struct sim_profile sim_prof;
void profile_load(void);

/* ---- api.c: CUPTI callbacks and correlation ids ------------------------ */

extern const struct simcuda_hooks *_Atomic sim_hooks;

struct api_frame {
	CUpti_CallbackId cbid;
	const char *name;
	const void *params;
	uint32_t correlation;
};
void api_enter(struct api_frame *f, CUpti_CallbackId cbid, const char *name, const void *params);
CUresult api_exit(struct api_frame *f, CUresult result);
/* The correlation id an op enqueued now carries in its activity record. */
uint32_t api_op_correlation(void);
uint32_t api_new_correlation(void);
void api_set_outer(uint32_t id);

/* Every implemented entry point: one branch when nobody subscribed.  The
 * call's host cost goes first, so work it issues starts after it. */
#define API_CALL(fn, params, expr)                                                                 \
	do {                                                                                       \
		clock_host_spend(sim_prof.call_ns[CUPTI_DRIVER_TRACE_CBID_##fn]);                  \
		if (__builtin_expect(                                                              \
		        atomic_load_explicit(&sim_hooks, memory_order_relaxed) == NULL, 1))        \
			return (expr);                                                             \
		struct api_frame frame_;                                                           \
		api_enter(&frame_, CUPTI_DRIVER_TRACE_CBID_##fn, #fn, (params));                   \
		return api_exit(&frame_, (expr));                                                  \
	} while (0)

/* ---- init.c / context.c ------------------------------------------------ */

bool sim_initialized(void);

struct sim_stream;

struct sim_ctx {
	uint32_t id;
	pthread_mutex_t lock; /* stream list, activity state */
	int retain;           /* primary-context retain count */
	unsigned flags;
	bool active;
	/* A launch failure poisons the context: every later call that uses it
	 * returns this error until the context is reset (0: healthy). */
	_Atomic CUresult sticky_error;
	struct sim_stream *streams; /* every stream of the context, legacy included */
	struct sim_stream *legacy;
	/* Last ops of destroyed streams, until the legacy stream or a context
	 * synchronization has waited for them: whether the worker already
	 * finished must not change simulated time, so they are waited for
	 * explicitly rather than through the (shrinking) stream list. */
	struct sim_marker **retired;
	bool *retired_blocking;
	size_t nretired, capretired;
};
extern struct sim_ctx sim_primary;

/* The calling thread's current context, checked: CUDA_ERROR_NOT_INITIALIZED
 * before cuInit, CUDA_ERROR_INVALID_CONTEXT when none is current,
 * CUDA_ERROR_CONTEXT_IS_DESTROYED when it was released or reset, the
 * sticky error once a launch failed in it.  ctx_current_query and
 * ctx_check (a handle) leave out the sticky error: for queries, which
 * still answer in a poisoned context. */
CUresult ctx_current(struct sim_ctx **out);
CUresult ctx_current_query(struct sim_ctx **out);
CUresult ctx_check(CUcontext c, struct sim_ctx **out);
/* The primary context's sticky error (CUDA_SUCCESS while healthy), and
 * poisoning it. */
CUresult ctx_sticky_error(void);
void ctx_poison(CUresult error);
CUresult ctx_synchronize(struct sim_ctx *ctx);

/* ---- handles.c: which handles are alive -------------------------------- */

enum handle_kind {
	H_STREAM = 1,
	H_EVENT,
	H_MODULE,
	H_FUNC,
	H_LIBRARY,
	H_KERNEL,
	H_MEMHANDLE,
	H_GRAPH,
	H_GRAPHEXEC,
	H_GRAPHNODE,
};
void handle_add(const void *p, enum handle_kind kind);
void handle_del(const void *p);
bool handle_is(const void *p, enum handle_kind kind);

/* ---- stream.c: workers, ops, completion markers ------------------------ */

/* Completion of one op; waiters hold references. */
struct sim_marker {
	atomic_int refs;
	bool done;       /* under stream.c's sync_lock */
	uint64_t end_ns; /* simulated completion time, valid when done */
};
void marker_ref(struct sim_marker *m);
void marker_unref(struct sim_marker *m);
/* Blocks until m completed; advances the host's simulated clock to it. */
void marker_wait(struct sim_marker *m);
/* Blocks until m completed and returns its simulated end, leaving the
 * host's clock alone (a worker waiting). */
uint64_t marker_block(struct sim_marker *m);
bool marker_done(struct sim_marker *m);

enum op_kind {
	OP_KERNEL,
	OP_MEMCPY,
	OP_MEMSET,
	OP_HOSTFN,
	OP_RECORD, /* event record: a point in the stream */
	OP_WAIT,   /* cuStreamWaitEvent: only its waits matter */
	OP_ALLOC,  /* cuMemAllocAsync: the range becomes accessible */
	OP_FREE,   /* cuMemFreeAsync: the range becomes inaccessible */
	OP_EXIT,   /* stream destroyed: the worker ends after this */
};

struct sim_func;
struct sim_gmem;
struct sim_hazard;

/* What cuLaunchKernelEx's attributes (or a cooperative entry point) asked
 * of a launch; kept with captured kernels so a graph node reports them. */
struct sim_launch_attrs {
	bool cooperative;
	unsigned cluster[3]; /* 0: no cluster dimension given */
	int priority;
	bool has_priority;
};

struct sim_op {
	struct sim_op *next;
	enum op_kind kind;
	struct sim_marker *marker; /* this op's completion */
	struct sim_marker *waits[4];
	unsigned nwaits;
	struct sim_marker **more_waits; /* legacy stream: one per blocking stream */
	unsigned nmore;
	uint64_t host_floor; /* host's simulated time when enqueued */
	uint32_t correlation;
	/* Copies into device memory still in flight when this op was queued
	 * whose destination it touches (engine.c): checked when it runs. */
	struct sim_hazard *hazards;
	unsigned nhazards;
	union {
		struct {
			struct sim_func *fn;
			simcuda_dim3 grid, block;
			unsigned smem;
			void *params; /* packed copy of the parameters */
			void **args;  /* args[i] points into params */
			struct sim_launch_attrs attrs;
		} kernel;
		struct {
			void *dst;
			const void *src;
			size_t bytes;
			int kind;         /* CUpti_ActivityMemcpyKind */
			void *staging;    /* owned copy of a host source */
			bool pinned_host; /* the host side is page-locked */
		} copy;
		struct {
			void *dst;
			uint32_t value;
			unsigned elem; /* 1, 2 or 4 bytes */
			size_t count;
		} set;
		struct {
			CUhostFn fn;
			void *data;
		} host;
		struct {
			uintptr_t addr;
			uint64_t id;            /* the allocation's (memory.c), once queued */
			struct sim_gmem *graph; /* a graph memory node's allocation, else NULL */
		} mem;
		struct {
			void *event; /* an event node's CUevent (external record/wait), else NULL */
		} ev;
	} u;
};

struct sim_stream {
	struct sim_stream *next; /* in ctx->streams */
	struct sim_ctx *ctx;
	uint32_t id;
	unsigned flags; /* CU_STREAM_NON_BLOCKING */
	int priority;
	bool legacy, per_thread;
	bool dead;         /* destroyed: only its worker still uses it (ctx->lock) */
	_Atomic bool park; /* its worker ends at the next op (sweep.c) */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sim_op *head, *tail;
	struct sim_marker *last;     /* last enqueued op (ctx->lock) */
	_Atomic uint64_t time;       /* simulated time of the last completed op */
	struct sim_capture *capture; /* capture this stream takes part in (ctx->lock) */
};

/* Resolves a CUstream argument: 0 is the legacy stream, or the calling
 * thread's per-thread stream when per_thread (the _ptsz/_ptds entries). */
CUresult stream_resolve(CUstream h, bool per_thread, struct sim_ctx *ctx, struct sim_stream **out);
/* stream_resolve in the calling thread's current context. */
CUresult stream_current(CUstream h, bool per_thread, struct sim_stream **out);
struct sim_op *op_new(enum op_kind kind);
void op_free(struct sim_op *op);
/* Adds a wait for m (a reference is taken). */
void op_wait_on(struct sim_op *op, struct sim_marker *m);
/* Queues op; returns its completion marker with a reference for the
 * caller when want_marker, else NULL. */
struct sim_marker *stream_enqueue(struct sim_stream *s, struct sim_op *op, bool want_marker);
CUresult stream_create(struct sim_ctx *ctx, unsigned flags, int priority, bool legacy,
                       bool per_thread, struct sim_stream **out);
void stream_destroy(struct sim_stream *s);
/* The last enqueued op of s with a reference, or NULL. */
struct sim_marker *stream_last(struct sim_stream *s);
/* For a fork (sweep.c): every worker ended, queued work left queued, the
 * process down to the calling thread; false when other threads stay (the
 * program's own).  streams_resume starts a worker for every stream again. */
bool streams_park(void);
void streams_resume(void);

/* Runs on the worker: executes one op (exec.c). */
void op_execute(struct sim_stream *s, struct sim_op *op, uint64_t start, uint64_t *end);

/* ---- capture.c / graph.c: stream capture and graphs ------------------- */

/* The ops of a graph, in the order they were captured: every dependency
 * (stream order, event waits) points from an earlier op to a later one,
 * so running them in this order on one stream respects all of them. */
struct sim_graph {
	struct sim_op **nodes;
	size_t n, cap;
	bool exec;                /* an executable graph (cuGraphInstantiate's copy) */
	unsigned long long flags; /* exec: the instantiation flags */
	/* A graph with memory nodes has at most one executable graph at a
	 * time; they point at each other until either is destroyed. */
	struct sim_graph *peer;
};

struct sim_capture {
	uint64_t id;
	struct sim_graph *graph;
	CUstreamCaptureMode mode;
	bool invalid;              /* a prohibited call happened: end fails */
	struct sim_stream *origin; /* where it began and must end */
	pthread_t thread;          /* who began it (THREAD_LOCAL mode) */
};

/* Called with every op before it is queued: true when the op was taken
 * (into a capture's graph, or refused because a capture forbids it, then
 * freed) with the call's result in *r; false to queue it normally. */
bool capture_take(struct sim_stream *s, struct sim_op *op, CUresult *r);
/* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (invalidating the capture) when a
 * capture on s, or any capture that forbids unsafe calls when s is NULL, is
 * in progress; else CUDA_SUCCESS. */
CUresult capture_forbids(struct sim_ctx *ctx, struct sim_stream *s);
/* The id of the capture s takes part in, 0 when none. */
uint64_t capture_id_of(struct sim_stream *s);
/* Makes s join the capture with this id (a wait on an event recorded in
 * it): CUDA_ERROR_STREAM_CAPTURE_ISOLATION when that capture is over or s
 * is in another one. */
CUresult capture_join(struct sim_stream *s, uint64_t id);
/* Detaches s from its capture, invalidating it (s is being destroyed). */
void capture_leave(struct sim_stream *s);
struct sim_graph *graph_new(void);
void graph_free(struct sim_graph *g);
/* Appends op (a node from now on: its handle is registered); 0, or -1 out
 * of memory (op untouched). */
int graph_add_node(struct sim_graph *g, struct sim_op *op);
/* A fresh copy of a captured op, ready to queue. */
struct sim_op *op_clone(const struct sim_op *op);
/* Whether an unsafe call (cuMemAlloc, cuCtxSynchronize, cuEventQuery...)
 * from this thread is refused by some capture now: the thread's own
 * interaction mode (cuThreadExchangeStreamCaptureMode) is not RELAXED and
 * it has a non-relaxed capture of its own, or its mode is GLOBAL and
 * another thread has a GLOBAL capture.  Caller holds ctx->lock. */
bool capture_strict_for_me(const struct sim_capture *c);

/* ---- graphmem.c: graph memory nodes ------------------------------------- */

/* cuMemAllocAsync / cuMemFreeAsync on a capturing stream: an allocation
 * node (a fixed address reserved for the graph's lifetime) or a free node
 * (of a graph allocation, from this graph or another). */
CUresult gmem_capture_alloc(struct sim_stream *s, size_t size, CUdeviceptr *out);
CUresult gmem_capture_free(struct sim_stream *s, uintptr_t addr);
void gmem_ref(struct sim_gmem *g);
void gmem_unref(struct sim_gmem *g);
uintptr_t gmem_base(const struct sim_gmem *g);
size_t gmem_size(const struct sim_gmem *g);
/* [p, p+n) lies in a graph allocation's reserved range. */
bool gmem_range_ok(uintptr_t p, size_t n);
/* cuGraphLaunch: checks the memory nodes of exec against what is allocated
 * now, then allocates (charging capacity) and frees in node order as the
 * nodes are queued.  gmem_launch_check: CUDA_ERROR_INVALID_VALUE when an
 * allocation is still live (without AUTO_FREE_ON_LAUNCH) or a free finds
 * nothing to free. */
CUresult gmem_launch_check(const struct sim_graph *exec, bool *auto_free_needed);
/* The allocation of node op is made now (host order): capacity charged;
 * the allocation's id for the queued op. */
CUresult gmem_launch_alloc(const struct sim_op *op, uint64_t *id);

/* ---- clock.c: the deterministic simulated clock ----------------------- */

/* The calling thread's simulated host time (legacy: the process's). */
uint64_t clock_host(void);
/* The caller waited for something that completed at t. */
void clock_host_observe(uint64_t t);
/* The caller spent ns in a driver call. */
void clock_host_spend(uint64_t ns);
/* The latest host time of any thread. */
uint64_t clock_host_latest(void);
uint64_t clock_now(void);
double clock_kernel_ns(const struct sim_func *f, void *const *args, simcuda_dim3 grid,
                       simcuda_dim3 block);
uint64_t clock_copy_ns(size_t bytes, int copy_kind, bool pinned_host);
uint64_t clock_set_ns(size_t bytes);

/* ---- engine.c: the copy engines ---------------------------------------- */

/* With ctx->lock held, as op (its marker set) is queued: a copy between
 * host and device joins its direction's engine (it waits for the engine's
 * previous copy); an op that touches device memory notes the copies into
 * it still in flight (hazards), a host-to-device copy becomes one. */
void engine_enqueue(struct sim_stream *s, struct sim_op *op);
/* On the worker, before op runs from simulated time `start`: aborts with a
 * message when a noted copy into memory op touches ends after start (the
 * op did not wait for it: on a GPU it would read a half-written buffer). */
void engine_check(const struct sim_stream *s, const struct sim_op *op, uint64_t start);
void engine_hazards_free(struct sim_op *op);
/* The completion of op's i-th noted copy (i < op->nhazards). */
struct sim_marker *engine_hazard_done(const struct sim_op *op, unsigned i);

/* ---- fill.c: the contents of fresh memory (SIMCUDA_FILL) --------------- */
/* Fills bytes of memory just mapped (so zeroed) at p by the policy. */
void fresh_fill(void *p, size_t bytes);

/* ---- devmem.c: the device address range and physical capacity -------- */

extern uintptr_t sim_dev_base, sim_dev_end;
static inline bool dev_addr(uintptr_t a)
{
	return a >= sim_dev_base && a < sim_dev_end;
}
int devmem_init(void);
/* Charges bytes of physical memory; CUDA_ERROR_OUT_OF_MEMORY past capacity
 * or when fault injection picks this allocation.  Called on host threads
 * only (a sweep forks there). */
CUresult phys_charge(uint64_t bytes);
void phys_release(uint64_t bytes);
uint64_t phys_in_use(void);

enum range_kind { R_ALLOC, R_RESERVE };
/* Finds room for size bytes aligned to align; 0 when the range is full.
 * fixed, when nonzero, is tried first (a hint, as in cuMemAddressReserve). */
uintptr_t va_take(size_t size, size_t align, uintptr_t fixed, enum range_kind kind);
void va_give(uintptr_t addr);
/* Makes [addr, addr+size) inaccessible again, dropping its pages. */
void va_seal(uintptr_t addr, size_t size);

/* ---- memory.c / vmm.c: validity of device ranges ---------------------- */

/* Whether [p, p+n) lies in live device memory: one cuMemAlloc allocation,
 * or mapped and accessible VMM memory (write: read-write access). */
bool mem_range_ok(uintptr_t p, size_t n, bool write);
bool alloc_range_ok(uintptr_t p, size_t n);
bool vmm_range_ok(uintptr_t p, size_t n, bool write);
/* OP_FREE and OP_ALLOC on the worker, for the allocation `id` at p. */
void alloc_finish_free(uintptr_t p, uint64_t id);
void alloc_make_live(uintptr_t p, uint64_t id);
void alloc_free_all(void); /* the context is destroyed */
/* Graph memory (graphmem.c): an allocation at a fixed, already reserved
 * address whose range is not given back when it is freed (the graph keeps
 * it); alloc_begin_free: the host side of a free (capacity back now). */
CUresult alloc_at(uintptr_t base, size_t size, uint64_t *id);
bool alloc_live_at(uintptr_t base);
/* The freed allocation's id, 0 when p is no live allocation. */
uint64_t alloc_begin_free(uintptr_t p);
/* The graph lets go of the range at base: when an allocation still lives
 * there, its release gives the range back (true); else the caller does. */
bool alloc_disown_range(uintptr_t base);
/* The live allocation or VMM mapping holding p. */
bool alloc_range_of(uintptr_t p, uintptr_t *base, size_t *size);
bool vmm_range_of(uintptr_t p, uintptr_t *base, size_t *size);
/* In a sweep's child: VMM memory, shared with the parent (memfd pages),
 * becomes a copy of its own at the same addresses; 0, or -1 (errno). */
int vmm_unshare(void);

/* ---- pool.c: the default memory pool ----------------------------------- */

bool pool_is_default(CUmemoryPool p);
/* Stream-ordered allocations are the pool's: bytes in (+) and out (-). */
void pool_account(int64_t bytes);

/* ---- pinned.c: page-locked host memory --------------------------------- */

bool pinned_range(const void *p, size_t bytes);
bool pinned_range_of(uintptr_t p, uintptr_t *base, size_t *size);

/* ---- module.c ---------------------------------------------------------- */

struct sim_module;

struct sim_func {
	int is_kernel; /* CUkernel (library) rather than CUfunction */
	const struct simcuda_kernel *k;
	struct sim_module *mod;
	struct sim_func *as_function; /* CUkernel: its CUfunction */
	int max_dynamic_smem;
	int non_portable_cluster; /* clusters of up to 16 blocks rather than 8 */
};

/* ---- occupancy.c ---------------------------------------------------------- */

/* The simulated device: an H100-like GPU. */
#define SIM_SMS         132
#define SIM_SMS_PER_GPC 16 /* a cluster's blocks share one GPC */
#define SIM_SMEM_PER_SM 233472
/* Blocks of `threads` threads with `smem` bytes of dynamic shared memory
 * that fit on one SM at once. */
int occupancy_blocks_per_sm(unsigned threads, size_t smem);

/* ---- fault.c ----------------------------------------------------------- */

void fault_install(void);
/* What the calling worker is executing, named by a fault message. */
void fault_set_op(const char *kind, const char *name, uint32_t stream_id);
void *fault_thread_init(void); /* returns the alternate stack */
void fault_thread_fini(void *stack);

/* ---- sweep.c: fault sweeps that share the run's prefix ----------------- */

/* Before the n-th event of kind (the counter not yet moved): in a sweep
 * covering n, forks the child in which event n fails and waits for it. */
void sweep_point(enum sim_sweep_kind kind, uint64_t n);

/* ---- stats.c ----------------------------------------------------------- */

/* A sweep's child reports as a process of its own, into path. */
void stats_adopt(const char *path);

extern struct sim_counters {
	atomic_uint_fast64_t ops, kernels, memcpy, memset, host_funcs, allocs, frees;
	atomic_uint_fast64_t peak_physical, sim_time_ns, faults_injected;
	atomic_uint_fast64_t vmm_calls[VMM_KINDS]; /* by whoever made them */
} sim_stats;

#endif
