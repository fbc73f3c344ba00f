/*
 * event.c — events: create, record, synchronize, query, elapsed time,
 * destroy.  cudaEvent_t is the driver's CUevent and the flags share values.
 */
#include "rt.h"

static cudaError_t create(CUpti_CallbackId cbid, const char *name, const void *params,
                          cudaEvent_t *event, unsigned flags)
{
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, params, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !event)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess) {
		CUevent ev = NULL;
		e = rt_check(DRV(cuEventCreate, &ev, flags));
		if (e == cudaSuccess)
			*event = (cudaEvent_t)ev;
	}
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	cudaEventCreate_v3020_params p = {event};
	return create(RT_FN(cudaEventCreate_v3020), &p, event, cudaEventDefault);
}

RT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	cudaEventCreateWithFlags_v3020_params p = {event, flags};
	return create(RT_FN(cudaEventCreateWithFlags_v3020), &p, event, flags);
}

static cudaError_t record(int pt, CUpti_CallbackId cbid, const char *name, const void *params,
                          cudaEvent_t event, cudaStream_t stream, unsigned flags, int with_flags)
{
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, params, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(with_flags
		                 ? RT_DRV(pt, cuEventRecordWithFlags, (CUevent)event,
		                          (CUstream)stream, flags)
		                 : RT_DRV(pt, cuEventRecord, (CUevent)event, (CUstream)stream));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	cudaEventRecord_v3020_params p = {event, stream};
	return record(0, RT_FN(cudaEventRecord_v3020), &p, event, stream, 0, 0);
}

RT_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	cudaEventRecord_ptsz_v7000_params p = {event, stream};
	return record(1, RT_FN(cudaEventRecord_ptsz_v7000), &p, event, stream, 0, 0);
}

RT_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                               unsigned int flags)
{
	cudaEventRecordWithFlags_v11010_params p = {event, stream, flags};
	return record(0, RT_FN(cudaEventRecordWithFlags_v11010), &p, event, stream, flags, 1);
}

RT_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                    unsigned int flags)
{
	cudaEventRecordWithFlags_ptsz_v11010_params p = {event, stream, flags};
	return record(1, RT_FN(cudaEventRecordWithFlags_ptsz_v11010), &p, event, stream, flags, 1);
}

RT_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	cudaEventSynchronize_v3020_params p = {event};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaEventSynchronize_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuEventSynchronize, (CUevent)event));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	cudaEventQuery_v3020_params p = {event};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaEventQuery_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuEventQuery, (CUevent)event));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	cudaEventDestroy_v3020_params p = {event};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaEventDestroy_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuEventDestroy, (CUevent)event));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	cudaEventElapsedTime_v12080_params p = {ms, start, end};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaEventElapsedTime_v12080), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !ms)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuEventElapsedTime, ms, (CUevent)start, (CUevent)end));
	return rt_exit(&c, e);
}
