/*
 * streamapi.c — the cuStream* entry points and cuLaunchHostFunc, each in
 * its legacy and per-thread-default-stream (_ptsz) form, and the capture
 * status queries (capture itself: capture.c).
 */
#include "driver.h"

#include <stdlib.h>

CUresult event_wait_marker(CUevent h, struct sim_marker **out, uint64_t *capture_id);

static CUresult create(CUstream *ph, unsigned flags, int priority)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (ph == NULL || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	/* Out-of-range priorities are clamped, as the driver does. */
	if (priority > 0)
		priority = 0;
	if (priority < -5)
		priority = -5;
	struct sim_stream *s;
	r = stream_create(ctx, flags, priority, false, false, &s);
	if (r == CUDA_SUCCESS)
		*ph = (CUstream)s;
	return r;
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	cuStreamCreate_params p = {phStream, Flags};
	API_CALL(cuStreamCreate, &p, create(phStream, Flags, 0));
}

EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                                   int priority)
{
	cuStreamCreateWithPriority_params p = {phStream, flags, priority};
	API_CALL(cuStreamCreateWithPriority, &p, create(phStream, flags, priority));
}

static CUresult destroy(CUstream h)
{
	struct sim_stream *s;
	/* The special streams cannot be destroyed. */
	if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
		return sim_initialized() ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = stream_current(h, false, &s);
	if (r == CUDA_SUCCESS) {
		capture_leave(s);
		stream_destroy(s);
	}
	return r;
}

EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	cuStreamDestroy_v2_params p = {hStream};
	API_CALL(cuStreamDestroy_v2, &p, destroy(hStream));
}

static CUresult sync(CUstream h, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r == CUDA_SUCCESS)
		r = capture_forbids(s->ctx, s);
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_marker *m = stream_last(s);
	if (m) {
		marker_wait(m);
		marker_unref(m);
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	cuStreamSynchronize_params p = {hStream};
	API_CALL(cuStreamSynchronize, &p, sync(hStream, false));
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream);
EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
	cuStreamSynchronize_ptsz_params p = {hStream};
	API_CALL(cuStreamSynchronize_ptsz, &p, sync(hStream, true));
}

static CUresult query(CUstream h, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r == CUDA_SUCCESS)
		r = capture_forbids(s->ctx, s);
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_marker *m = stream_last(s);
	bool done = m == NULL || marker_done(m);
	marker_unref(m);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	cuStreamQuery_params p = {hStream};
	API_CALL(cuStreamQuery, &p, query(hStream, false));
}

CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream);
EXPORT CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
	cuStreamQuery_ptsz_params p = {hStream};
	API_CALL(cuStreamQuery_ptsz, &p, query(hStream, true));
}

static CUresult wait_event(CUstream h, CUevent e, unsigned flags, bool per_thread)
{
	struct sim_stream *s;
	struct sim_marker *m = NULL;
	uint64_t capture = 0;
	CUresult r = stream_current(h, per_thread, &s);
	if (r == CUDA_SUCCESS)
		r = event_wait_marker(e, &m, &capture);
	if (r != CUDA_SUCCESS)
		return r;
	if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) {
		marker_unref(m);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if ((flags & CU_EVENT_WAIT_EXTERNAL) && capture_id_of(s)) {
		/* An event wait node: each launch waits for the event's latest
		 * record at that time. */
		marker_unref(m);
		struct sim_op *op = op_new(OP_WAIT);
		op->u.ev.event = e;
		if (capture_take(s, op, &r))
			return r;
		op_free(op); /* the capture ended in between */
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	if (capture) {
		marker_unref(m);
		return capture_join(s, capture);
	}
	if (m == NULL)
		return CUDA_SUCCESS; /* never recorded: nothing to wait for */
	if (capture_id_of(s)) {
		/* A dependency on work outside the capture. */
		marker_unref(m);
		return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
	}
	struct sim_op *op = op_new(OP_WAIT);
	op_wait_on(op, m);
	marker_unref(m);
	if (capture_take(s, op, &r))
		return r;
	stream_enqueue(s, op, false);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	cuStreamWaitEvent_params p = {hStream, hEvent, Flags};
	API_CALL(cuStreamWaitEvent, &p, wait_event(hStream, hEvent, Flags, false));
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
EXPORT CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	cuStreamWaitEvent_ptsz_params p = {hStream, hEvent, Flags};
	API_CALL(cuStreamWaitEvent_ptsz, &p, wait_event(hStream, hEvent, Flags, true));
}

static CUresult get_id(CUstream h, unsigned long long *id, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (id == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*id = s->id;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
	cuStreamGetId_params p = {hStream, streamId};
	API_CALL(cuStreamGetId, &p, get_id(hStream, streamId, false));
}

CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId);
EXPORT CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
	cuStreamGetId_ptsz_params p = {hStream, streamId};
	API_CALL(cuStreamGetId_ptsz, &p, get_id(hStream, streamId, true));
}

static CUresult get_ctx(CUstream h, CUcontext *pctx, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (pctx == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)s->ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	cuStreamGetCtx_params p = {hStream, pctx};
	API_CALL(cuStreamGetCtx, &p, get_ctx(hStream, pctx, false));
}

CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx);
EXPORT CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
	cuStreamGetCtx_ptsz_params p = {hStream, pctx};
	API_CALL(cuStreamGetCtx_ptsz, &p, get_ctx(hStream, pctx, true));
}

static CUresult get_flags(CUstream h, unsigned *flags, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (flags == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*flags = s->flags;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	cuStreamGetFlags_params p = {hStream, flags};
	API_CALL(cuStreamGetFlags, &p, get_flags(hStream, flags, false));
}

CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags);
EXPORT CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
	cuStreamGetFlags_ptsz_params p = {hStream, flags};
	API_CALL(cuStreamGetFlags_ptsz, &p, get_flags(hStream, flags, true));
}

static CUresult get_priority(CUstream h, int *prio, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (prio == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*prio = s->priority;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
	cuStreamGetPriority_params p = {hStream, priority};
	API_CALL(cuStreamGetPriority, &p, get_priority(hStream, priority, false));
}

CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority);
EXPORT CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
	cuStreamGetPriority_ptsz_params p = {hStream, priority};
	API_CALL(cuStreamGetPriority_ptsz, &p, get_priority(hStream, priority, true));
}

/* ---- capture status ---------------------------------------------------- */

static CUresult capture_info(CUstream h, CUstreamCaptureStatus *status, cuuint64_t *id,
                             CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *ndeps, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (status == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t cid = 0;
	bool invalid = false;
	pthread_mutex_lock(&s->ctx->lock);
	if (s->capture) {
		cid = s->capture->id;
		invalid = s->capture->invalid;
	}
	pthread_mutex_unlock(&s->ctx->lock);
	*status = cid == 0  ? CU_STREAM_CAPTURE_STATUS_NONE
	          : invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
	                    : CU_STREAM_CAPTURE_STATUS_ACTIVE;
	/* Graph, dependencies and edges of a capture are not exposed. */
	if (id)
		*id = cid;
	if (graph)
		*graph = NULL;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (ndeps)
		*ndeps = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream,
                                                  CUstreamCaptureStatus *captureStatus_out,
                                                  cuuint64_t *id_out, CUgraph *graph_out,
                                                  const CUgraphNode **dependencies_out,
                                                  const CUgraphEdgeData **edgeData_out,
                                                  size_t *numDependencies_out)
{
	cuStreamGetCaptureInfo_v3_params p = {
	    hStream,      captureStatus_out,  id_out, graph_out, dependencies_out,
	    edgeData_out, numDependencies_out};
	API_CALL(cuStreamGetCaptureInfo_v3, &p,
	         capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
	                      edgeData_out, numDependencies_out, false));
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out,
                                                size_t *numDependencies_out);
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                       CUstreamCaptureStatus *captureStatus_out,
                                                       cuuint64_t *id_out, CUgraph *graph_out,
                                                       const CUgraphNode **dependencies_out,
                                                       const CUgraphEdgeData **edgeData_out,
                                                       size_t *numDependencies_out)
{
	cuStreamGetCaptureInfo_v3_ptsz_params p = {
	    hStream,      captureStatus_out,  id_out, graph_out, dependencies_out,
	    edgeData_out, numDependencies_out};
	API_CALL(cuStreamGetCaptureInfo_v3_ptsz, &p,
	         capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
	                      edgeData_out, numDependencies_out, true));
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream,
                                           CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out,
                                           size_t *numDependencies_out);
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream,
                                                  CUstreamCaptureStatus *captureStatus_out,
                                                  cuuint64_t *id_out, CUgraph *graph_out,
                                                  const CUgraphNode **dependencies_out,
                                                  size_t *numDependencies_out)
{
	cuStreamGetCaptureInfo_v2_params p = {hStream,   captureStatus_out, id_out,
	                                      graph_out, dependencies_out,  numDependencies_out};
	API_CALL(cuStreamGetCaptureInfo_v2, &p,
	         capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
	                      numDependencies_out, false));
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                size_t *numDependencies_out);
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                       CUstreamCaptureStatus *captureStatus_out,
                                                       cuuint64_t *id_out, CUgraph *graph_out,
                                                       const CUgraphNode **dependencies_out,
                                                       size_t *numDependencies_out)
{
	cuStreamGetCaptureInfo_v2_ptsz_params p = {
	    hStream, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out};
	API_CALL(cuStreamGetCaptureInfo_v2_ptsz, &p,
	         capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
	                      numDependencies_out, true));
}

EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	cuStreamIsCapturing_params p = {hStream, captureStatus};
	API_CALL(cuStreamIsCapturing, &p,
	         capture_info(hStream, captureStatus, NULL, NULL, NULL, NULL, NULL, false));
}

CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
EXPORT CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream,
                                                 CUstreamCaptureStatus *captureStatus)
{
	cuStreamIsCapturing_ptsz_params p = {hStream, captureStatus};
	API_CALL(cuStreamIsCapturing_ptsz, &p,
	         capture_info(hStream, captureStatus, NULL, NULL, NULL, NULL, NULL, true));
}

/* ---- host functions ---------------------------------------------------- */

static CUresult host_func(CUstream h, CUhostFn fn, void *data, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (fn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_op *op = op_new(OP_HOSTFN);
	op->u.host.fn = fn;
	op->u.host.data = data;
	if (capture_take(s, op, &r))
		return r;
	stream_enqueue(s, op, false);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	cuLaunchHostFunc_params p = {hStream, fn, userData};
	API_CALL(cuLaunchHostFunc, &p, host_func(hStream, fn, userData, false));
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
EXPORT CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	cuLaunchHostFunc_ptsz_params p = {hStream, fn, userData};
	API_CALL(cuLaunchHostFunc_ptsz, &p, host_func(hStream, fn, userData, true));
}

/* cuStreamAddCallback: the older form of cuLaunchHostFunc, whose callback
 * also gets the stream and a status (always success here). */
struct stream_callback {
	CUstreamCallback fn;
	CUstream stream;
	void *data;
};

static void run_callback(void *arg)
{
	struct stream_callback *cb = arg;
	cb->fn(cb->stream, CUDA_SUCCESS, cb->data);
	free(cb);
}

static CUresult add_callback(CUstream h, CUstreamCallback fn, void *data, unsigned flags,
                             bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (fn == NULL || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* Not allowed in a capture (cuLaunchHostFunc is). */
	r = capture_forbids(s->ctx, s);
	if (r != CUDA_SUCCESS)
		return r;
	struct stream_callback *cb = malloc(sizeof(*cb));
	if (cb == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*cb = (struct stream_callback){fn, h, data};
	struct sim_op *op = op_new(OP_HOSTFN);
	op->u.host.fn = run_callback;
	op->u.host.data = cb;
	if (capture_take(s, op, &r)) {
		free(cb);
		return r;
	}
	stream_enqueue(s, op, false);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                            void *userData, unsigned int flags)
{
	cuStreamAddCallback_params p = {hStream, callback, userData, flags};
	API_CALL(cuStreamAddCallback, &p, add_callback(hStream, callback, userData, flags, false));
}

CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                          void *userData, unsigned int flags);
EXPORT CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                                 void *userData, unsigned int flags)
{
	cuStreamAddCallback_ptsz_params p = {hStream, callback, userData, flags};
	API_CALL(cuStreamAddCallback_ptsz, &p,
	         add_callback(hStream, callback, userData, flags, true));
}

static CUresult stream_device(CUstream h, CUdevice *d, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(h, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (d == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*d = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
	cuStreamGetDevice_params p = {hStream, device};
	API_CALL(cuStreamGetDevice, &p, stream_device(hStream, device, false));
}

CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device);
EXPORT CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
	cuStreamGetDevice_ptsz_params p = {hStream, device};
	API_CALL(cuStreamGetDevice_ptsz, &p, stream_device(hStream, device, true));
}

/* The CUDA 10.1 form of the capture query. */
#undef cuStreamGetCaptureInfo
CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out);
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream,
                                               CUstreamCaptureStatus *captureStatus_out,
                                               cuuint64_t *id_out)
{
	cuStreamGetCaptureInfo_params p = {hStream, captureStatus_out, id_out};
	API_CALL(cuStreamGetCaptureInfo, &p,
	         capture_info(hStream, captureStatus_out, id_out, NULL, NULL, NULL, NULL, false));
}

CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                             CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out);
EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                                    CUstreamCaptureStatus *captureStatus_out,
                                                    cuuint64_t *id_out)
{
	cuStreamGetCaptureInfo_ptsz_params p = {hStream, captureStatus_out, id_out};
	API_CALL(cuStreamGetCaptureInfo_ptsz, &p,
	         capture_info(hStream, captureStatus_out, id_out, NULL, NULL, NULL, NULL, true));
}
