/*
 * event.c — events: a recorded event is the completion marker of a
 * zero-length op in its stream, so it completes in stream order and
 * carries that point's simulated time.  An event last recorded in a
 * capture marks a point of the graph being built, not of any stream:
 * querying, synchronizing or timing it is CUDA_ERROR_CAPTURED_EVENT until
 * it is recorded again (by a stream, or by an event record node of a
 * launched graph).  Querying and synchronizing are "unsafe" calls that a
 * strict capture refuses (capture.c).
 */
#include "driver.h"

#include <stdlib.h>

struct sim_event {
	unsigned flags;
	struct sim_ctx *ctx;
	struct sim_marker *m; /* latest record; NULL: never recorded */
	uint64_t capture_id;  /* recorded in this capture (m is then NULL) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult event_of(CUevent h, struct sim_event **out)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!handle_is(h, H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = (struct sim_event *)h;
	return CUDA_SUCCESS;
}

/* The event's recorded marker with a reference, or NULL. */
static struct sim_marker *event_marker(struct sim_event *e)
{
	pthread_mutex_lock(&lock);
	struct sim_marker *m = e->m;
	if (m)
		marker_ref(m);
	pthread_mutex_unlock(&lock);
	return m;
}

static CUresult event_create(CUevent *ph, unsigned flags)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (ph == NULL || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
	                                       CU_EVENT_INTERPROCESS)))
		return CUDA_ERROR_INVALID_VALUE;
	if (flags & CU_EVENT_INTERPROCESS)
		return (flags & CU_EVENT_DISABLE_TIMING) ? CUDA_ERROR_NOT_SUPPORTED
		                                         : CUDA_ERROR_INVALID_VALUE;
	struct sim_event *e = calloc(1, sizeof(*e));
	if (e == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->flags = flags;
	e->ctx = ctx;
	handle_add(e, H_EVENT);
	*ph = (CUevent)e;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	cuEventCreate_params p = {phEvent, Flags};
	API_CALL(cuEventCreate, &p, event_create(phEvent, Flags));
}

static CUresult event_record(CUevent h, CUstream hs, unsigned flags, bool per_thread)
{
	struct sim_event *e;
	struct sim_stream *s;
	CUresult r = event_of(h, &e);
	if (r == CUDA_SUCCESS)
		r = stream_resolve(hs, per_thread, e->ctx, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	/* In a capture the event marks a point of the graph: a stream that
	 * waits for it joins the capture.  RECORD_EXTERNAL also makes it an
	 * event record node, which records the event whenever the graph runs. */
	uint64_t capture = capture_id_of(s);
	struct sim_marker *m = NULL;
	if (capture == 0) {
		struct sim_op *op = op_new(OP_RECORD);
		if (capture_take(s, op, &r))
			return r;
		m = stream_enqueue(s, op, true);
	} else if (flags & CU_EVENT_RECORD_EXTERNAL) {
		struct sim_op *op = op_new(OP_RECORD);
		op->u.ev.event = h;
		if (!capture_take(s, op, &r)) {
			op_free(op); /* the capture ended in between */
			return CUDA_ERROR_ILLEGAL_STATE;
		}
		if (r != CUDA_SUCCESS)
			return r;
	}
	pthread_mutex_lock(&lock);
	struct sim_marker *old = e->m;
	e->m = m;
	e->capture_id = capture;
	pthread_mutex_unlock(&lock);
	marker_unref(old);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
	cuEventRecord_params p = {hEvent, hStream};
	API_CALL(cuEventRecord, &p, event_record(hEvent, hStream, 0, false));
}

CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
EXPORT CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
	cuEventRecord_ptsz_params p = {hEvent, hStream};
	API_CALL(cuEventRecord_ptsz, &p, event_record(hEvent, hStream, 0, true));
}

EXPORT CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	cuEventRecordWithFlags_params p = {hEvent, hStream, flags};
	API_CALL(cuEventRecordWithFlags, &p, event_record(hEvent, hStream, flags, false));
}

CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags);
EXPORT CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
                                                    unsigned int flags)
{
	cuEventRecordWithFlags_ptsz_params p = {hEvent, hStream, flags};
	API_CALL(cuEventRecordWithFlags_ptsz, &p, event_record(hEvent, hStream, flags, true));
}

/* CUDA_ERROR_CAPTURED_EVENT when e was last recorded in a capture. */
static CUresult not_captured(struct sim_event *e)
{
	pthread_mutex_lock(&lock);
	bool captured = e->capture_id != 0;
	pthread_mutex_unlock(&lock);
	return captured ? CUDA_ERROR_CAPTURED_EVENT : CUDA_SUCCESS;
}

static CUresult event_query(CUevent h)
{
	struct sim_event *e;
	CUresult r = event_of(h, &e);
	if (r == CUDA_SUCCESS)
		r = not_captured(e);
	if (r == CUDA_SUCCESS)
		r = capture_forbids(e->ctx, NULL);
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_marker *m = event_marker(e);
	bool done = m == NULL || marker_done(m);
	marker_unref(m);
	return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	cuEventQuery_params p = {hEvent};
	API_CALL(cuEventQuery, &p, event_query(hEvent));
}

static CUresult event_sync(CUevent h)
{
	struct sim_event *e;
	CUresult r = event_of(h, &e);
	if (r == CUDA_SUCCESS)
		r = not_captured(e);
	if (r == CUDA_SUCCESS)
		r = capture_forbids(e->ctx, NULL);
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_marker *m = event_marker(e);
	if (m) {
		marker_wait(m);
		marker_unref(m);
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	cuEventSynchronize_params p = {hEvent};
	API_CALL(cuEventSynchronize, &p, event_sync(hEvent));
}

static CUresult event_destroy(CUevent h)
{
	struct sim_event *e;
	CUresult r = event_of(h, &e);
	if (r != CUDA_SUCCESS)
		return r;
	handle_del(e);
	marker_unref(e->m);
	free(e);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
	cuEventDestroy_v2_params p = {hEvent};
	API_CALL(cuEventDestroy_v2, &p, event_destroy(hEvent));
}

static CUresult elapsed(float *ms, CUevent hs, CUevent he)
{
	struct sim_event *s, *e;
	CUresult r = event_of(hs, &s);
	if (r == CUDA_SUCCESS)
		r = event_of(he, &e);
	if (r != CUDA_SUCCESS)
		return r;
	if (ms == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if ((s->flags | e->flags) & CU_EVENT_DISABLE_TIMING)
		return CUDA_ERROR_INVALID_HANDLE;
	r = not_captured(s);
	if (r == CUDA_SUCCESS)
		r = not_captured(e);
	if (r != CUDA_SUCCESS)
		return r;
	struct sim_marker *ms_ = event_marker(s), *me = event_marker(e);
	if (ms_ == NULL || me == NULL)
		r = CUDA_ERROR_INVALID_HANDLE; /* never recorded */
	else if (!marker_done(ms_) || !marker_done(me))
		r = CUDA_ERROR_NOT_READY;
	else
		*ms = (float)(((double)me->end_ns - (double)ms_->end_ns) / 1e6);
	marker_unref(ms_);
	marker_unref(me);
	return r;
}

EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	cuEventElapsedTime_v2_params p = {pMilliseconds, hStart, hEnd};
	API_CALL(cuEventElapsedTime_v2, &p, elapsed(pMilliseconds, hStart, hEnd));
}

#undef cuEventElapsedTime
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	cuEventElapsedTime_params p = {pMilliseconds, hStart, hEnd};
	API_CALL(cuEventElapsedTime, &p, elapsed(pMilliseconds, hStart, hEnd));
}

/* For cuStreamWaitEvent (streamapi.c): the recorded point, or the capture
 * it was recorded in. */
CUresult event_wait_marker(CUevent h, struct sim_marker **out, uint64_t *capture_id)
{
	struct sim_event *e;
	CUresult r = event_of(h, &e);
	if (r == CUDA_SUCCESS) {
		*out = event_marker(e);
		pthread_mutex_lock(&lock);
		*capture_id = e->capture_id;
		pthread_mutex_unlock(&lock);
	}
	return r;
}

/* Event nodes of a launched graph (graph.c): the event's latest record as
 * a wait node finds it, and the record a record node makes. */
struct sim_marker *event_node_marker(CUevent h)
{
	if (!handle_is(h, H_EVENT))
		return NULL;
	return event_marker((struct sim_event *)h);
}

CUresult event_node_record(CUevent h, struct sim_marker *m)
{
	if (!handle_is(h, H_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	struct sim_event *e = (struct sim_event *)h;
	marker_ref(m);
	pthread_mutex_lock(&lock);
	struct sim_marker *old = e->m;
	e->m = m;
	e->capture_id = 0;
	pthread_mutex_unlock(&lock);
	marker_unref(old);
	return CUDA_SUCCESS;
}
