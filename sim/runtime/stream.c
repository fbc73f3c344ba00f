/*
 * stream.c — streams: create, destroy, synchronize, query, wait on an
 * event, and capture status.
 *
 * cudaStream_t and CUstream are the same handle, and the special values
 * (0, cudaStreamLegacy, cudaStreamPerThread) equal the driver's, so
 * streams pass through unchanged.
 */
#include "rt.h"

static cudaError_t create(CUpti_CallbackId cbid, const char *name, const void *params,
                          cudaStream_t *pStream, unsigned flags, int priority, int with_priority)
{
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, params, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !pStream)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess && (flags & ~(unsigned)cudaStreamNonBlocking))
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess) {
		CUstream s = NULL;
		e = rt_check(with_priority ? DRV(cuStreamCreateWithPriority, &s, flags, priority)
		                           : DRV(cuStreamCreate, &s, flags));
		if (e == cudaSuccess)
			*pStream = (cudaStream_t)s;
	}
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	cudaStreamCreate_v3020_params p = {pStream};
	return create(RT_FN(cudaStreamCreate_v3020), &p, pStream, 0, 0, 0);
}

RT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	cudaStreamCreateWithFlags_v5000_params p = {pStream, flags};
	return create(RT_FN(cudaStreamCreateWithFlags_v5000), &p, pStream, flags, 0, 0);
}

RT_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags,
                                                   int priority)
{
	cudaStreamCreateWithPriority_v5050_params p = {pStream, flags, priority};
	return create(RT_FN(cudaStreamCreateWithPriority_v5050), &p, pStream, flags, priority, 1);
}

RT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	cudaStreamDestroy_v5050_params p = {stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaStreamDestroy_v5050), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuStreamDestroy, (CUstream)stream));
	return rt_exit(&c, e);
}

static cudaError_t synchronize(int pt, CUpti_CallbackId cbid, const char *name, cudaStream_t stream)
{
	cudaStreamSynchronize_v3020_params p = {stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(RT_DRV(pt, cuStreamSynchronize, (CUstream)stream));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	return synchronize(0, RT_FN(cudaStreamSynchronize_v3020), stream);
}

RT_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	return synchronize(1, RT_FN(cudaStreamSynchronize_ptsz_v7000), stream);
}

static cudaError_t query(int pt, CUpti_CallbackId cbid, const char *name, cudaStream_t stream)
{
	cudaStreamQuery_v3020_params p = {stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(RT_DRV(pt, cuStreamQuery, (CUstream)stream));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	return query(0, RT_FN(cudaStreamQuery_v3020), stream);
}

RT_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	return query(1, RT_FN(cudaStreamQuery_ptsz_v7000), stream);
}

static cudaError_t wait_event(int pt, CUpti_CallbackId cbid, const char *name, cudaStream_t stream,
                              cudaEvent_t event, unsigned flags)
{
	cudaStreamWaitEvent_v3020_params p = {stream, event, flags};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(
		    RT_DRV(pt, cuStreamWaitEvent, (CUstream)stream, (CUevent)event, flags));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                          unsigned int flags)
{
	return wait_event(0, RT_FN(cudaStreamWaitEvent_v3020), stream, event, flags);
}

RT_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                               unsigned int flags)
{
	return wait_event(1, RT_FN(cudaStreamWaitEvent_ptsz_v7000), stream, event, flags);
}

/* Capture state lives in the driver (cuStreamGetCaptureInfo_v3 for CUDA 13
 * callers); the runtime's enums and edge data share its values and layout. */
static cudaError_t capture_info(int pt, CUpti_CallbackId cbid, const char *name,
                                const cudaStreamGetCaptureInfo_v12030_params *p)
{
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !p->captureStatus_out)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(
		    RT_DRV(pt, cuStreamGetCaptureInfo, (CUstream)p->stream,
		           (CUstreamCaptureStatus *)p->captureStatus_out, (cuuint64_t *)p->id_out,
		           (CUgraph *)p->graph_out, (const CUgraphNode **)p->dependencies_out,
		           (const CUgraphEdgeData **)p->edgeData_out, p->numDependencies_out));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                               enum cudaStreamCaptureStatus *captureStatus_out,
                                               unsigned long long *id_out, cudaGraph_t *graph_out,
                                               const cudaGraphNode_t **dependencies_out,
                                               const cudaGraphEdgeData **edgeData_out,
                                               size_t *numDependencies_out)
{
	cudaStreamGetCaptureInfo_v12030_params p = {
	    stream,       captureStatus_out,  id_out, graph_out, dependencies_out,
	    edgeData_out, numDependencies_out};
	return capture_info(0, RT_FN(cudaStreamGetCaptureInfo_v12030), &p);
}

RT_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(
    cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
    unsigned long long *id_out, cudaGraph_t *graph_out, const cudaGraphNode_t **dependencies_out,
    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	cudaStreamGetCaptureInfo_v12030_params p = {
	    stream,       captureStatus_out,  id_out, graph_out, dependencies_out,
	    edgeData_out, numDependencies_out};
	return capture_info(1, RT_FN(cudaStreamGetCaptureInfo_ptsz_v12030), &p);
}

static cudaError_t is_capturing(int pt, CUpti_CallbackId cbid, const char *name,
                                cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
	cudaStreamIsCapturing_v10000_params p = {stream, status};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !status)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(RT_DRV(pt, cuStreamIsCapturing, (CUstream)stream,
		                    (CUstreamCaptureStatus *)status));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                            enum cudaStreamCaptureStatus *pCaptureStatus)
{
	return is_capturing(0, RT_FN(cudaStreamIsCapturing_v10000), stream, pCaptureStatus);
}

RT_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                                 enum cudaStreamCaptureStatus *pCaptureStatus)
{
	return is_capturing(1, RT_FN(cudaStreamIsCapturing_ptsz_v10000), stream, pCaptureStatus);
}
