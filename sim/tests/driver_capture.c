/*
 * driver_capture.c — stream capture and graphs: captured work does not
 * run until the graph is launched, runs on every launch (reading host
 * sources at launch time), streams join a capture through events, what a
 * capture forbids is refused and invalidates it (by mode, thread and
 * thread interaction mode), events recorded in a capture cannot be
 * queried, event and memory nodes work as the driver documents, and a
 * graph can be read node by node.
 */
#include "driver_common.h"

#include <pthread.h>

static CUmodule mod;
static CUfunction fill, plus_one;

static int setup(void **state)
{
	(void)state;
	setup_context();
	mod = load_test_module();
	fill = get_fn(mod, "fill_u32");
	plus_one = get_fn(mod, "copy_plus_one");
	return 0;
}

static uint64_t kernels_run(void)
{
	struct simcuda_stats st;
	simcudaGetStats(&st);
	return st.kernels;
}

static unsigned read_u32(CUdeviceptr p)
{
	unsigned v;
	CHECK(cuMemcpyDtoH(&v, p, 4));
	return v;
}

static CUstreamCaptureStatus status_of(CUstream s, cuuint64_t *id)
{
	CUstreamCaptureStatus st;
	CHECK(cuStreamGetCaptureInfo(s, &st, id, NULL, NULL, NULL, NULL));
	return st;
}

static void test_capture_and_replay(void **state)
{
	(void)state;
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, 64 * 4));
	CHECK(cuMemAlloc(&b, 64 * 4));
	CHECK(cuMemsetD32(a, 0, 64));
	CHECK(cuMemsetD32(b, 0, 64));
	CHECK(cuCtxSynchronize());
	static unsigned host[64];
	for (int i = 0; i < 64; i++)
		host[i] = 100;
	uint64_t before = kernels_run();

	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	cuuint64_t id = 0;
	assert_int_equal(status_of(s, &id), CU_STREAM_CAPTURE_STATUS_ACTIVE);
	assert_int_not_equal(id, 0);
	CHECK(cuMemcpyHtoDAsync(a, host, sizeof(host), s));
	int n = 64;
	void *args[] = {&a, &b, &n};
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
	CHECK(cuMemsetD32Async(a, 7, 1, s));
	CUgraph g;
	CHECK(cuStreamEndCapture(s, &g));
	assert_int_equal(status_of(s, NULL), CU_STREAM_CAPTURE_STATUS_NONE);

	/* nothing ran yet */
	CHECK(cuCtxSynchronize());
	assert_int_equal(kernels_run(), before);
	assert_int_equal(read_u32(b), 0);
	size_t count = 0;
	CHECK(cuGraphGetNodes(g, NULL, &count));
	assert_int_equal(count, 3);

	CUgraphExec exec;
	CHECK(cuGraphInstantiate(&exec, g, 0));
	CHECK(cuGraphDestroy(g)); /* the executable graph is a copy */
	CHECK(cuGraphLaunch(exec, s));
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(read_u32(b + 4), 101);
	assert_int_equal(read_u32(a), 7);
	/* the host source is read at each launch */
	for (int i = 0; i < 64; i++)
		host[i] = 200;
	CHECK(cuGraphLaunch(exec, s));
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(read_u32(b + 4), 201);
	assert_int_equal(kernels_run(), before + 2);
	CHECK(cuGraphExecDestroy(exec));
	assert_int_equal(cuGraphLaunch(exec, s), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	CHECK(cuStreamDestroy(s));
}

static void test_fork_join(void **state)
{
	(void)state;
	CUstream s1, s2, other;
	CUevent fork, join, outside;
	CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&outside, 0));
	CHECK(cuEventRecord(outside, other));
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, 4));
	CHECK(cuMemAlloc(&b, 4));
	unsigned v = 41;
	int n = 1;
	void *fargs[] = {&a, &v, &n}, *pargs[] = {&a, &b, &n};

	CHECK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	CHECK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s1, fargs, NULL));
	CHECK(cuEventRecord(fork, s1));
	CHECK(cuStreamWaitEvent(s2, fork, 0)); /* s2 joins the capture */
	cuuint64_t id1, id2;
	assert_int_equal(status_of(s1, &id1), CU_STREAM_CAPTURE_STATUS_ACTIVE);
	assert_int_equal(status_of(s2, &id2), CU_STREAM_CAPTURE_STATUS_ACTIVE);
	assert_int_equal(id1, id2);
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 1, 1, 1, 0, s2, pargs, NULL));
	/* a dependency on work from outside the capture is refused */
	assert_int_equal(cuStreamWaitEvent(s2, outside, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
	CHECK(cuEventRecord(join, s2));
	CHECK(cuStreamWaitEvent(s1, join, 0));
	CUgraph g;
	assert_int_equal(cuStreamEndCapture(s2, &g), CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	assert_int_equal(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	assert_null(g);
	assert_int_equal(status_of(s2, NULL), CU_STREAM_CAPTURE_STATUS_NONE);

	/* again, ending where it began */
	CHECK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	CHECK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, s1, fargs, NULL));
	CHECK(cuEventRecord(fork, s1));
	CHECK(cuStreamWaitEvent(s2, fork, 0));
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 1, 1, 1, 0, s2, pargs, NULL));
	CHECK(cuEventRecord(join, s2));
	CHECK(cuStreamWaitEvent(s1, join, 0));
	CHECK(cuStreamEndCapture(s1, &g));
	CUgraphExec exec;
	CHECK(cuGraphInstantiateWithFlags(&exec, g, 0));
	CHECK(cuGraphLaunch(exec, other));
	CHECK(cuStreamSynchronize(other));
	assert_int_equal(read_u32(b), 42);
	CHECK(cuGraphExecDestroy(exec));
	CHECK(cuGraphDestroy(g));
	CHECK(cuEventDestroy(fork));
	CHECK(cuEventDestroy(join));
	CHECK(cuEventDestroy(outside));
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	CHECK(cuStreamDestroy(s1));
	CHECK(cuStreamDestroy(s2));
	CHECK(cuStreamDestroy(other));
}

static void test_forbidden_calls(void **state)
{
	(void)state;
	CUstream s, blocking;
	CUgraph g;
	CUdeviceptr p;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&blocking, 0));
	assert_int_equal(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
	                 CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);

	/* synchronizing with the capturing stream */
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	assert_int_equal(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL),
	                 CUDA_ERROR_ILLEGAL_STATE);
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(status_of(s, NULL), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* an unsafe call during a global capture; allowed when relaxed */
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	assert_int_equal(cuMemAlloc(&p, 16), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	CHECK(cuMemAlloc(&p, 16));
	/* a graph cannot free memory it did not allocate */
	assert_int_equal(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuStreamEndCapture(s, &g));
	CHECK(cuGraphDestroy(g));
	CHECK(cuMemFree(p));

	/* the legacy stream would implicitly wait for a capturing blocking
	 * stream, whatever the mode */
	CUdeviceptr r;
	CHECK(cuMemAlloc(&r, 16));
	CHECK(cuStreamBeginCapture(blocking, CU_STREAM_CAPTURE_MODE_RELAXED));
	assert_int_equal(cuMemsetD32Async(r, 0, 4, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	assert_int_equal(cuStreamEndCapture(blocking, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* with the capture over, the legacy stream works again */
	CHECK(cuMemsetD32Async(r, 0, 4, NULL));
	CHECK(cuMemFree(r));
	CHECK(cuStreamDestroy(s));
	CHECK(cuStreamDestroy(blocking));
}

/* ---- modes: who may make unsafe calls during whose capture ------------- */

struct probe {
	CUcontext ctx;
	CUstreamCaptureMode mode; /* the probing thread's interaction mode */
	CUresult alloc;           /* what its cuMemAlloc got */
};

static void *unsafe_call(void *arg)
{
	struct probe *p = arg;
	CHECK(cuCtxSetCurrent(p->ctx));
	CUstreamCaptureMode m = p->mode;
	CHECK(cuThreadExchangeStreamCaptureMode(&m));
	CUdeviceptr d = 0;
	p->alloc = cuMemAlloc(&d, 64);
	if (p->alloc == CUDA_SUCCESS)
		CHECK(cuMemFree(d));
	return NULL;
}

/* An unsafe call from another thread with the given interaction mode,
 * during a capture begun in `capture_mode`: what it got, and whether the
 * capture survived. */
static CUresult other_thread(CUstreamCaptureMode capture_mode, CUstreamCaptureMode thread_mode,
                             bool *survived)
{
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	struct probe p = {.mode = thread_mode};
	CHECK(cuCtxGetCurrent(&p.ctx));
	CHECK(cuStreamBeginCapture(s, capture_mode));
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, unsafe_call, &p), 0);
	pthread_join(t, NULL);
	CUgraph g = NULL;
	CUresult end = cuStreamEndCapture(s, &g);
	*survived = end == CUDA_SUCCESS;
	if (g)
		CHECK(cuGraphDestroy(g));
	CHECK(cuStreamDestroy(s));
	return p.alloc;
}

static void test_capture_modes(void **state)
{
	(void)state;
	bool ok;
	/* GLOBAL: refused in every other thread whose own mode is GLOBAL */
	assert_int_equal(
	    other_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_GLOBAL, &ok),
	    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	assert_false(ok);
	CHECK(
	    other_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, &ok));
	assert_true(ok);
	CHECK(other_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_RELAXED, &ok));
	assert_true(ok);
	/* THREAD_LOCAL and RELAXED captures leave other threads alone */
	CHECK(
	    other_thread(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, CU_STREAM_CAPTURE_MODE_GLOBAL, &ok));
	assert_true(ok);
	CHECK(other_thread(CU_STREAM_CAPTURE_MODE_RELAXED, CU_STREAM_CAPTURE_MODE_GLOBAL, &ok));
	assert_true(ok);

	/* the capturing thread: refused in GLOBAL and THREAD_LOCAL captures,
	 * unless it switched itself to RELAXED (what PyTorch's caching
	 * allocator does around cudaMalloc during a capture) */
	CUstream s;
	CUgraph g;
	CUdeviceptr d;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL,
	                               CU_STREAM_CAPTURE_MODE_THREAD_LOCAL};
	for (int i = 0; i < 2; i++) {
		CHECK(cuStreamBeginCapture(s, modes[i]));
		assert_int_equal(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
		assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
		CHECK(cuStreamBeginCapture(s, modes[i]));
		CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
		CHECK(cuThreadExchangeStreamCaptureMode(&m));
		assert_int_equal(m, CU_STREAM_CAPTURE_MODE_GLOBAL); /* the default */
		CHECK(cuMemAlloc(&d, 16));
		CHECK(cuThreadExchangeStreamCaptureMode(&m));
		CHECK(cuStreamEndCapture(s, &g));
		CHECK(cuGraphDestroy(g));
		CHECK(cuMemFree(d));
	}
	CUstreamCaptureMode bad = (CUstreamCaptureMode)7;
	assert_int_equal(cuThreadExchangeStreamCaptureMode(&bad), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuStreamDestroy(s));
}

/* ---- events and captures ------------------------------------------------ */

struct event_probe {
	CUcontext ctx;
	CUevent ev;
	CUresult query, sync;
};

static void *query_event(void *arg)
{
	struct event_probe *p = arg;
	CHECK(cuCtxSetCurrent(p->ctx));
	p->query = cuEventQuery(p->ev);
	p->sync = cuEventSynchronize(p->ev);
	return NULL;
}

static void test_captured_events(void **state)
{
	(void)state;
	CUstream s, other;
	CUevent ev, before;
	CUgraph g;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&ev, 0));
	CHECK(cuEventCreate(&before, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventRecord(before, other));

	/* an event last recorded in a capture cannot be queried, even after
	 * the capture, until it is recorded again */
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	CHECK(cuEventRecord(ev, s));
	assert_int_equal(cuEventQuery(ev), CUDA_ERROR_CAPTURED_EVENT);
	assert_int_equal(cuEventSynchronize(ev), CUDA_ERROR_CAPTURED_EVENT);
	CHECK(cuStreamEndCapture(s, &g));
	CHECK(cuGraphDestroy(g));
	assert_int_equal(cuEventQuery(ev), CUDA_ERROR_CAPTURED_EVENT);
	float ms;
	assert_int_equal(cuEventElapsedTime(&ms, ev, ev), CUDA_ERROR_CAPTURED_EVENT);
	CHECK(cuEventRecord(ev, other));
	CHECK(cuEventSynchronize(ev));

	/* querying an event from before the capture, in another thread: refused
	 * (and the capture lost) during a global capture; fine in a relaxed one */
	struct event_probe p = {.ev = before};
	CHECK(cuCtxGetCurrent(&p.ctx));
	CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL,
	                               CU_STREAM_CAPTURE_MODE_RELAXED};
	for (int i = 0; i < 2; i++) {
		CHECK(cuStreamBeginCapture(s, modes[i]));
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, query_event, &p), 0);
		pthread_join(t, NULL);
		CUresult end = cuStreamEndCapture(s, &g);
		if (i == 0) {
			assert_int_equal(p.query, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
			assert_int_equal(end, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
		} else {
			CHECK(p.query);
			CHECK(p.sync);
			CHECK(end);
			CHECK(cuGraphDestroy(g));
		}
	}
	CHECK(cuEventDestroy(ev));
	CHECK(cuEventDestroy(before));
	CHECK(cuStreamDestroy(s));
	CHECK(cuStreamDestroy(other));
}

/* External event record and wait nodes run at each launch: the record
 * node records the event on the launching stream, the wait node waits for
 * the event's record as it stands at launch. */
static void test_event_nodes(void **state)
{
	(void)state;
	CUstream s, other;
	CUevent done, gate;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
	CHECK(cuEventCreate(&gate, CU_EVENT_DISABLE_TIMING));
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, 4));
	CHECK(cuMemAlloc(&b, 4));
	unsigned v = 9;
	int n = 1;
	void *fargs[] = {&a, &v, &n}, *pargs[] = {&a, &b, &n};

	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	/* waiting on an event from outside is an isolation error, unless the
	 * wait is external: then it is a node */
	CHECK(cuStreamWaitEvent(s, gate, CU_EVENT_WAIT_EXTERNAL));
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 1, 1, 1, 0, s, pargs, NULL));
	CHECK(cuEventRecordWithFlags(done, s, CU_EVENT_RECORD_EXTERNAL));
	CUgraph g;
	CHECK(cuStreamEndCapture(s, &g));
	size_t count = 0;
	CHECK(cuGraphGetNodes(g, NULL, &count));
	assert_int_equal(count, 3);
	CUgraphNode nodes[3];
	CHECK(cuGraphGetNodes(g, nodes, &count));
	CUgraphNodeType t;
	CHECK(cuGraphNodeGetType(nodes[0], &t));
	assert_int_equal(t, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
	CHECK(cuGraphNodeGetType(nodes[2], &t));
	assert_int_equal(t, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
	CUevent got;
	CHECK(cuGraphEventWaitNodeGetEvent(nodes[0], &got));
	assert_ptr_equal(got, gate);
	CHECK(cuGraphEventRecordNodeGetEvent(nodes[2], &got));
	assert_ptr_equal(got, done);
	CUgraphExec exec;
	CHECK(cuGraphInstantiate(&exec, g, 0));

	/* the wait node waits for `gate` as recorded now: a fill on `other`
	 * that the graph's kernel must see */
	CHECK(cuLaunchKernel(fill, 1, 1, 1, 1, 1, 1, 0, other, fargs, NULL));
	CHECK(cuEventRecord(gate, other));
	CHECK(cuGraphLaunch(exec, s));
	/* the record node records `done` on s: waiting for it waits for the
	 * graph's kernel */
	CHECK(cuEventSynchronize(done));
	assert_int_equal(read_u32(b), 10);
	CHECK(cuGraphExecDestroy(exec));
	CHECK(cuGraphDestroy(g));
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	CHECK(cuEventDestroy(done));
	CHECK(cuEventDestroy(gate));
	CHECK(cuStreamDestroy(s));
	CHECK(cuStreamDestroy(other));
}

/* ---- graph memory nodes ------------------------------------------------- */

static size_t free_memory(void)
{
	size_t fr, total;
	CHECK(cuMemGetInfo(&fr, &total));
	return fr;
}

static void test_memory_nodes(void **state)
{
	(void)state;
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr out;
	CHECK(cuMemAlloc(&out, 4 * 64));
	int n = 64;
	unsigned v = 5;

	/* graph A allocates t (kept after it ends) and fills it; graph B adds
	 * one into `out` and frees t */
	CUdeviceptr t = 0;
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(cuMemAllocAsync(&t, 4 * 64, s));
	assert_int_not_equal(t, 0);
	void *fargs[] = {&t, &v, &n};
	CHECK(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, s, fargs, NULL));
	CUgraph ga, gb;
	CHECK(cuStreamEndCapture(s, &ga));
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	void *pargs[] = {&t, &out, &n};
	CHECK(cuLaunchKernel(plus_one, 1, 1, 1, 64, 1, 1, 0, s, pargs, NULL));
	CHECK(cuMemFreeAsync(t, s));
	CHECK(cuStreamEndCapture(s, &gb));

	CUgraphNode nodes[2];
	size_t count = 2;
	CHECK(cuGraphGetNodes(ga, nodes, &count));
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	CHECK(cuGraphMemAllocNodeGetParams(nodes[0], &ap));
	assert_int_equal(ap.dptr, t);
	assert_int_equal(ap.bytesize, 4 * 64);
	CHECK(cuGraphGetNodes(gb, nodes, &count));
	CUdeviceptr fp;
	CHECK(cuGraphMemFreeNodeGetParams(nodes[1], &fp));
	assert_int_equal(fp, t);
	/* the node getters check the node's type */
	assert_int_equal(cuGraphMemAllocNodeGetParams(nodes[1], &ap), CUDA_ERROR_INVALID_VALUE);

	CUgraphExec ea, eb, again;
	CHECK(cuGraphInstantiate(&ea, ga, 0));
	/* one executable graph at a time for a graph with memory nodes */
	assert_int_equal(cuGraphInstantiate(&again, ga, 0), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuGraphInstantiate(&eb, gb, 0));
	/* B frees what is not allocated yet */
	assert_int_equal(cuGraphLaunch(eb, s), CUDA_ERROR_INVALID_VALUE);

	size_t before = free_memory();
	for (int i = 0; i < 3; i++) {
		CHECK(cuGraphLaunch(ea, s));
		assert_true(free_memory() < before); /* charged at the launch */
		/* A again while t is live: refused (no AUTO_FREE_ON_LAUNCH) */
		assert_int_equal(cuGraphLaunch(ea, s), CUDA_ERROR_INVALID_VALUE);
		CHECK(cuGraphLaunch(eb, s));
		CHECK(cuStreamSynchronize(s));
		assert_int_equal(read_u32(out + 4 * 63), 6);
		assert_int_equal(free_memory(), before);
	}
	/* graph memory freed outside any graph */
	CHECK(cuGraphLaunch(ea, s));
	CHECK(cuMemFreeAsync(t, s));
	CHECK(cuStreamSynchronize(s));
	CHECK(cuGraphExecDestroy(ea));

	/* AUTO_FREE_ON_LAUNCH: the launch frees what the last one left */
	CHECK(
	    cuGraphInstantiateWithFlags(&ea, ga, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
	cuuint64_t flags;
	CHECK(cuGraphExecGetFlags(ea, &flags));
	assert_int_equal(flags, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	CHECK(cuGraphLaunch(ea, s));
	CHECK(cuGraphLaunch(ea, s));
	CHECK(cuStreamSynchronize(s));
	assert_int_equal(read_u32(t), 5);
	CHECK(cuGraphExecDestroy(ea));
	CHECK(cuGraphExecDestroy(eb));
	CHECK(cuGraphDestroy(ga));
	CHECK(cuGraphDestroy(gb));
	/* the graphs are gone; the allocation the last launch made stays until
	 * it is freed */
	assert_int_equal(read_u32(t + 4), 5);
	CHECK(cuMemFree(t));
	assert_int_equal(free_memory(), before);
	CHECK(cuMemFree(out));
	CHECK(cuStreamDestroy(s));
}

/* The child: graph memory is inaccessible before its allocation node ran. */
static int touch_graph_memory_early(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUfunction f = get_fn(m, "fill_u32");
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr t;
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(cuMemAllocAsync(&t, 64, s));
	CUgraph g;
	CHECK(cuStreamEndCapture(s, &g));
	unsigned v = 1;
	int n = 1;
	void *args[] = {&t, &v, &n};
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
	CHECK(cuStreamSynchronize(s));
	return 0;
}

static void test_memory_node_fault(void **state)
{
	(void)state;
	struct child_result r = run_child("graph-memory-early", NULL);
	assert_died_with(&r, "touched unmapped device address");
}

/* ---- reading a graph ---------------------------------------------------- */

static void test_node_getters(void **state)
{
	(void)state;
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, 256));
	CHECK(cuMemAlloc(&b, 256));
	static unsigned host[16];
	int n = 16;
	void *pargs[] = {&a, &b, &n};
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CHECK(cuLaunchKernel(plus_one, 2, 1, 1, 8, 1, 1, 0, s, pargs, NULL));
	CHECK(cuMemcpyHtoDAsync(a, host, sizeof(host), s));
	CHECK(cuMemcpyDtoDAsync(b, a, 64, s));
	CHECK(cuMemsetD16Async(b + 64, 0x1234, 8, s));
	CUgraph g;
	CHECK(cuStreamEndCapture(s, &g));
	CUgraphNode nodes[4];
	size_t count = 4;
	CHECK(cuGraphGetNodes(g, nodes, &count));
	assert_int_equal(count, 4);

	CUgraphNodeType t;
	CHECK(cuGraphNodeGetType(nodes[0], &t));
	assert_int_equal(t, CU_GRAPH_NODE_TYPE_KERNEL);
	CUDA_KERNEL_NODE_PARAMS kp;
	CHECK(cuGraphKernelNodeGetParams(nodes[0], &kp));
	assert_ptr_equal(kp.func, plus_one);
	assert_int_equal(kp.gridDimX, 2);
	assert_int_equal(kp.blockDimX, 8);
	/* the parameter values as captured, not the caller's variables */
	CUdeviceptr a_kept = a;
	a = 0;
	n = 3;
	assert_int_equal(*(CUdeviceptr *)kp.kernelParams[0], a_kept);
	assert_int_equal(*(CUdeviceptr *)kp.kernelParams[1], b);
	assert_int_equal(*(int *)kp.kernelParams[2], 16);
	a = a_kept;

	CUDA_MEMCPY3D cp;
	CHECK(cuGraphNodeGetType(nodes[1], &t));
	assert_int_equal(t, CU_GRAPH_NODE_TYPE_MEMCPY);
	CHECK(cuGraphMemcpyNodeGetParams(nodes[1], &cp));
	assert_int_equal(cp.srcMemoryType, CU_MEMORYTYPE_HOST);
	assert_ptr_equal(cp.srcHost, host);
	assert_int_equal(cp.dstMemoryType, CU_MEMORYTYPE_DEVICE);
	assert_int_equal(cp.WidthInBytes, sizeof(host));
	CHECK(cuGraphMemcpyNodeGetParams(nodes[2], &cp));
	assert_int_equal(cp.srcMemoryType, CU_MEMORYTYPE_DEVICE);
	assert_int_equal(cp.dstDevice, b);
	assert_int_equal(cp.WidthInBytes, 64);
	CUDA_MEMSET_NODE_PARAMS sp;
	CHECK(cuGraphMemsetNodeGetParams(nodes[3], &sp));
	assert_int_equal(sp.dst, b + 64);
	assert_int_equal(sp.elementSize, 2);
	assert_int_equal(sp.width, 8);
	assert_int_equal(sp.value, 0x1234);
	assert_int_equal(cuGraphMemsetNodeGetParams(nodes[0], &sp), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGraphNodeGetType((CUgraphNode)&sp, &t), CUDA_ERROR_INVALID_VALUE);

	/* an executable graph's nodes are its own */
	CUgraphExec exec;
	CHECK(cuGraphInstantiate(&exec, g, 0));
	CHECK(cuGraphDestroy(g));
	assert_int_equal(cuGraphNodeGetType(nodes[0], &t), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuGraphExecDestroy(exec));
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	CHECK(cuStreamDestroy(s));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "graph-memory-early"))
		return touch_graph_memory_early();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capture_and_replay), cmocka_unit_test(test_fork_join),
	    cmocka_unit_test(test_forbidden_calls),    cmocka_unit_test(test_capture_modes),
	    cmocka_unit_test(test_captured_events),    cmocka_unit_test(test_event_nodes),
	    cmocka_unit_test(test_memory_nodes),       cmocka_unit_test(test_memory_node_fault),
	    cmocka_unit_test(test_node_getters),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
