/*
 * graph.c — stream capture and graphs: begin/end capture, instantiate,
 * launch, destroy.  The driver records and replays; the runtime's handles
 * and capture modes are the driver's.
 */
#include "rt.h"

static cudaError_t begin_capture(int pt, CUpti_CallbackId cbid, const char *name,
                                 cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	cudaStreamBeginCapture_v10000_params p = {stream, mode};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(
		    RT_DRV(pt, cuStreamBeginCapture, (CUstream)stream, (CUstreamCaptureMode)mode));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	return begin_capture(0, RT_FN(cudaStreamBeginCapture_v10000), stream, mode);
}

RT_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                                  enum cudaStreamCaptureMode mode)
{
	return begin_capture(1, RT_FN(cudaStreamBeginCapture_ptsz_v10000), stream, mode);
}

static cudaError_t end_capture(int pt, CUpti_CallbackId cbid, const char *name, cudaStream_t stream,
                               cudaGraph_t *graph)
{
	cudaStreamEndCapture_v10000_params p = {stream, graph};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !graph)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(RT_DRV(pt, cuStreamEndCapture, (CUstream)stream, (CUgraph *)graph));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	return end_capture(0, RT_FN(cudaStreamEndCapture_v10000), stream, pGraph);
}

RT_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{
	return end_capture(1, RT_FN(cudaStreamEndCapture_ptsz_v10000), stream, pGraph);
}

static cudaError_t instantiate(CUpti_CallbackId cbid, const char *name, const void *params,
                               cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, params, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !exec)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(
		    DRV(cuGraphInstantiateWithFlags, (CUgraphExec *)exec, (CUgraph)graph, flags));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                           unsigned long long flags)
{
	cudaGraphInstantiate_v12000_params p = {pGraphExec, graph, flags};
	return instantiate(RT_FN(cudaGraphInstantiate_v12000), &p, pGraphExec, graph, flags);
}

RT_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                    unsigned long long flags)
{
	cudaGraphInstantiateWithFlags_v11040_params p = {pGraphExec, graph, flags};
	return instantiate(RT_FN(cudaGraphInstantiateWithFlags_v11040), &p, pGraphExec, graph,
	                   flags);
}

static cudaError_t launch_graph(int pt, CUpti_CallbackId cbid, const char *name,
                                cudaGraphExec_t exec, cudaStream_t stream)
{
	cudaGraphLaunch_v10000_params p = {exec, stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(RT_DRV(pt, cuGraphLaunch, (CUgraphExec)exec, (CUstream)stream));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return launch_graph(0, RT_FN(cudaGraphLaunch_v10000), graphExec, stream);
}

RT_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return launch_graph(1, RT_FN(cudaGraphLaunch_ptsz_v10000), graphExec, stream);
}

RT_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	cudaGraphExecDestroy_v10000_params p = {graphExec};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaGraphExecDestroy_v10000), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuGraphExecDestroy, (CUgraphExec)graphExec));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	cudaGraphDestroy_v10000_params p = {graph};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaGraphDestroy_v10000), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuGraphDestroy, (CUgraph)graph));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	cudaThreadExchangeStreamCaptureMode_v10010_params p = {mode};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaThreadExchangeStreamCaptureMode_v10010), &p, NULL,
	                         RT_NO_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode *)mode));
	return rt_exit(&c, e);
}
