/*
 * capture.c — stream capture.  Between cuStreamBeginCapture and
 * cuStreamEndCapture, work issued to the capturing stream (and to streams
 * that join it by waiting on an event recorded in it) is recorded into a
 * graph instead of running.  What a capture forbids is refused the way the
 * real driver refuses it, and invalidates the capture:
 *  - synchronizing with a capturing stream (cuStreamSynchronize/Query,
 *    cuCtxSynchronize): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
 *  - "unsafe" calls (cuMemAlloc, cuMemFree, cuCtxSynchronize, cuEventQuery,
 *    cuEventSynchronize) from a thread whose interaction mode is not
 *    RELAXED while it has a non-relaxed capture of its own, or while
 *    another thread has a GLOBAL capture and its own mode is GLOBAL (the
 *    default; cuThreadExchangeStreamCaptureMode changes it): the same;
 *  - work on the legacy stream, which would implicitly depend on a
 *    capturing blocking stream (in any mode): CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
 *  - waiting on an event from outside the capture:
 *    CUDA_ERROR_STREAM_CAPTURE_ISOLATION (unless CU_EVENT_WAIT_EXTERNAL
 *    makes it an event wait node).
 * Stream-ordered allocations and frees become graph memory nodes
 * (graphmem.c); external event records and waits become event nodes.
 */
#include "driver.h"

#include <stdlib.h>

static _Atomic uint64_t next_capture_id = 1;
/* The calling thread's capture interaction mode (GLOBAL = 0 by default). */
static __thread CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

bool capture_strict_for_me(const struct sim_capture *c)
{
	if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED ||
	    c->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return false;
	if (pthread_equal(c->thread, pthread_self()))
		return true;
	return thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
	       c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
}

/* Caller holds ctx->lock. */
static struct sim_capture *find(struct sim_ctx *ctx, uint64_t id)
{
	for (struct sim_stream *t = ctx->streams; t; t = t->next)
		if (t->capture && t->capture->id == id)
			return t->capture;
	return NULL;
}

bool capture_take(struct sim_stream *s, struct sim_op *op, CUresult *r)
{
	struct sim_ctx *ctx = s->ctx;
	pthread_mutex_lock(&ctx->lock);
	struct sim_capture *c = s->capture;
	bool taken = true;
	if (c && (op->kind == OP_ALLOC || op->kind == OP_FREE) && !op->u.mem.graph) {
		/* Only graph memory nodes are stream-ordered memory in a graph. */
		c->invalid = true;
		*r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	} else if (c) {
		/* Captured copies read their host source when the graph runs. */
		if (op->kind == OP_MEMCPY && op->u.copy.staging) {
			free(op->u.copy.staging);
			op->u.copy.staging = NULL;
		}
		if (graph_add_node(c->graph, op)) {
			pthread_mutex_unlock(&ctx->lock);
			op_free(op);
			*r = CUDA_ERROR_OUT_OF_MEMORY;
			return true;
		}
		op = NULL;
		*r = CUDA_SUCCESS;
	} else if (s->legacy) {
		/* The legacy stream would wait for capturing blocking streams. */
		taken = false;
		for (struct sim_stream *t = ctx->streams; t; t = t->next)
			if (t->capture && !(t->flags & CU_STREAM_NON_BLOCKING)) {
				t->capture->invalid = true;
				taken = true;
			}
		*r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	} else {
		taken = false;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (taken && op)
		op_free(op);
	return taken;
}

CUresult capture_forbids(struct sim_ctx *ctx, struct sim_stream *s)
{
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&ctx->lock);
	if (s) {
		if (s->capture) {
			s->capture->invalid = true;
			r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	} else {
		for (struct sim_stream *t = ctx->streams; t; t = t->next)
			if (t->capture && capture_strict_for_me(t->capture)) {
				t->capture->invalid = true;
				r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
			}
	}
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

uint64_t capture_id_of(struct sim_stream *s)
{
	pthread_mutex_lock(&s->ctx->lock);
	uint64_t id = s->capture ? s->capture->id : 0;
	pthread_mutex_unlock(&s->ctx->lock);
	return id;
}

CUresult capture_join(struct sim_stream *s, uint64_t id)
{
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&s->ctx->lock);
	struct sim_capture *c = find(s->ctx, id);
	if (c == NULL || (s->capture && s->capture != c))
		r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
	else if (s->legacy)
		r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
	else
		s->capture = c;
	pthread_mutex_unlock(&s->ctx->lock);
	return r;
}

void capture_leave(struct sim_stream *s)
{
	struct sim_ctx *ctx = s->ctx;
	pthread_mutex_lock(&ctx->lock);
	struct sim_capture *c = s->capture;
	if (c && c->origin != s) {
		c->invalid = true;
		s->capture = NULL;
		c = NULL;
	} else if (c) {
		/* The origin goes away: so does the capture. */
		for (struct sim_stream *t = ctx->streams; t; t = t->next)
			if (t->capture == c)
				t->capture = NULL;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (c) {
		graph_free(c->graph);
		free(c);
	}
}

/* ---- entry points ------------------------------------------------------- */

static CUresult exchange_mode(CUstreamCaptureMode *mode)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (mode == NULL || (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
	                     *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	                     *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
		return CUDA_ERROR_INVALID_VALUE;
	CUstreamCaptureMode old = thread_mode;
	thread_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	cuThreadExchangeStreamCaptureMode_params p = {mode};
	API_CALL(cuThreadExchangeStreamCaptureMode, &p, exchange_mode(mode));
}

static CUresult begin(CUstream h, CUstreamCaptureMode mode, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	if (s->legacy)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	struct sim_capture *c = calloc(1, sizeof(*c));
	struct sim_graph *g = graph_new();
	if (c == NULL || g == NULL) {
		free(c);
		graph_free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*c = (struct sim_capture){.id = atomic_fetch_add(&next_capture_id, 1),
	                          .graph = g,
	                          .mode = mode,
	                          .origin = s,
	                          .thread = pthread_self()};
	pthread_mutex_lock(&s->ctx->lock);
	if (s->capture)
		r = CUDA_ERROR_ILLEGAL_STATE;
	else
		s->capture = c;
	pthread_mutex_unlock(&s->ctx->lock);
	if (r != CUDA_SUCCESS) {
		graph_free(g);
		free(c);
	}
	return r;
}

EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	cuStreamBeginCapture_v2_params p = {hStream, mode};
	API_CALL(cuStreamBeginCapture_v2, &p, begin(hStream, mode, false));
}

CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	cuStreamBeginCapture_v2_ptsz_params p = {hStream, mode};
	API_CALL(cuStreamBeginCapture_v2_ptsz, &p, begin(hStream, mode, true));
}

/* The CUDA 10.0 form: always a global capture. */
#undef cuStreamBeginCapture
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream);
EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
	cuStreamBeginCapture_params p = {hStream};
	API_CALL(cuStreamBeginCapture, &p, begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, false));
}

CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream);
EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
	cuStreamBeginCapture_ptsz_params p = {hStream};
	API_CALL(cuStreamBeginCapture_ptsz, &p,
	         begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, true));
}

static CUresult end(CUstream h, CUgraph *out, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_ctx *ctx = s->ctx;
	pthread_mutex_lock(&ctx->lock);
	struct sim_capture *c = s->capture;
	if (c == NULL) {
		pthread_mutex_unlock(&ctx->lock);
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	if (c->origin != s) {
		c->invalid = true;
		pthread_mutex_unlock(&ctx->lock);
		return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	}
	for (struct sim_stream *t = ctx->streams; t; t = t->next)
		if (t->capture == c)
			t->capture = NULL;
	pthread_mutex_unlock(&ctx->lock);
	struct sim_graph *g = c->graph;
	bool invalid = c->invalid;
	free(c);
	if (invalid) {
		graph_free(g);
		*out = NULL;
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	handle_add(g, H_GRAPH);
	*out = (CUgraph)g;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	cuStreamEndCapture_params p = {hStream, phGraph};
	API_CALL(cuStreamEndCapture, &p, end(hStream, phGraph, false));
}

CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
	cuStreamEndCapture_ptsz_params p = {hStream, phGraph};
	API_CALL(cuStreamEndCapture_ptsz, &p, end(hStream, phGraph, true));
}
