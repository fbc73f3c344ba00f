/*
 * capture.c — stream capture, watched: the begin and end of every
 * capture and the thread's interaction mode keep core/capture.c's table,
 * so that what is captured passes through libremat untouched and what a
 * capture forbids libremat does not do itself.
 */
#include "../core/capture.h"
#include "procaddr.h"

#undef cuStreamBeginCapture
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphExecKernelNodeSetParams

typedef CUresult (*begin1_fn)(CUstream);
typedef CUresult (*begin2_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*begin_graph_fn)(CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *,
                                   size_t, CUstreamCaptureMode);
typedef CUresult (*end_fn)(CUstream, CUgraph *);
typedef CUresult (*exchange_fn)(CUstreamCaptureMode *);

static CUresult begun(CUresult r, CUstream s, int pt, CUstreamCaptureMode mode)
{
	if (r == CUDA_SUCCESS && remat_session_active)
		remat_capture_begun(remat_stream(s, pt), mode);
	return r;
}

/* The real function behind door 0 (the exported symbol) or 1 (the twin
 * cuGetProcAddress handed out). */
#define REAL(id, door)                                                                             \
	((door) ? remat_hook_pa_real(&remat_hook_##id) : remat_hook_exp_real(&remat_hook_##id))

/* ---- begin ------------------------------------------------------------- */

#define BEGIN1(id, pt)                                                                             \
	extern struct remat_hook remat_hook_##id;                                                  \
	static CUresult impl_##id(int door, CUstream s)                                            \
	{                                                                                          \
		void *real = REAL(id, door);                                                       \
		if (unlikely(!real))                                                               \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		/* the CUDA 10.0 form: always a global capture */                                  \
		return begun(((begin1_fn)real)(s), s, pt, CU_STREAM_CAPTURE_MODE_GLOBAL);          \
	}                                                                                          \
	REMAT_EXPORT CUresult id(CUstream s);                                                      \
	CUresult id(CUstream s)                                                                    \
	{                                                                                          \
		return impl_##id(0, s);                                                            \
	}                                                                                          \
	static CUresult pa_##id(CUstream s)                                                        \
	{                                                                                          \
		return impl_##id(1, s);                                                            \
	}                                                                                          \
	REMAT_HOOK(id, "cuStreamBeginCapture", pt, 0, id, pa_##id)

#define BEGIN2(id, pt)                                                                             \
	extern struct remat_hook remat_hook_##id;                                                  \
	static CUresult impl_##id(int door, CUstream s, CUstreamCaptureMode m)                     \
	{                                                                                          \
		void *real = REAL(id, door);                                                       \
		if (unlikely(!real))                                                               \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		return begun(((begin2_fn)real)(s, m), s, pt, m);                                   \
	}                                                                                          \
	REMAT_EXPORT CUresult id(CUstream s, CUstreamCaptureMode m);                               \
	CUresult id(CUstream s, CUstreamCaptureMode m)                                             \
	{                                                                                          \
		return impl_##id(0, s, m);                                                         \
	}                                                                                          \
	static CUresult pa_##id(CUstream s, CUstreamCaptureMode m)                                 \
	{                                                                                          \
		return impl_##id(1, s, m);                                                         \
	}                                                                                          \
	REMAT_HOOK(id, "cuStreamBeginCapture", pt, 10010, id, pa_##id)

BEGIN1(cuStreamBeginCapture, 0);
BEGIN1(cuStreamBeginCapture_ptsz, 1);
BEGIN2(cuStreamBeginCapture_v2, 0);
BEGIN2(cuStreamBeginCapture_v2_ptsz, 1);

#define BEGIN_GRAPH_PARAMS                                                                         \
	CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,    \
	    CUstreamCaptureMode m
#define BEGIN_GRAPH(id, pt)                                                                        \
	extern struct remat_hook remat_hook_##id;                                                  \
	static CUresult impl_##id(int door, BEGIN_GRAPH_PARAMS)                                    \
	{                                                                                          \
		void *real = REAL(id, door);                                                       \
		if (unlikely(!real))                                                               \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		return begun(((begin_graph_fn)real)(s, g, deps, edges, n, m), s, pt, m);           \
	}                                                                                          \
	REMAT_EXPORT CUresult id(BEGIN_GRAPH_PARAMS);                                              \
	CUresult id(BEGIN_GRAPH_PARAMS)                                                            \
	{                                                                                          \
		return impl_##id(0, s, g, deps, edges, n, m);                                      \
	}                                                                                          \
	static CUresult pa_##id(BEGIN_GRAPH_PARAMS)                                                \
	{                                                                                          \
		return impl_##id(1, s, g, deps, edges, n, m);                                      \
	}                                                                                          \
	REMAT_HOOK(id, "cuStreamBeginCaptureToGraph", pt, 0, id, pa_##id)

BEGIN_GRAPH(cuStreamBeginCaptureToGraph, 0);
BEGIN_GRAPH(cuStreamBeginCaptureToGraph_ptsz, 1);

/* ---- end --------------------------------------------------------------- */

#define END(id, pt)                                                                                \
	extern struct remat_hook remat_hook_##id;                                                  \
	static CUresult impl_##id(int door, CUstream s, CUgraph *g)                                \
	{                                                                                          \
		void *real = REAL(id, door);                                                       \
		if (unlikely(!real))                                                               \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		CUresult r = ((end_fn)real)(s, g);                                                 \
		/* Ended, well or not, unless it was not this stream's to end. */                  \
		if (remat_session_active && r != CUDA_ERROR_STREAM_CAPTURE_UNMATCHED &&            \
		    r != CUDA_ERROR_ILLEGAL_STATE)                                                 \
			remat_capture_ended(remat_stream(s, pt));                                  \
		return r;                                                                          \
	}                                                                                          \
	REMAT_EXPORT CUresult id(CUstream s, CUgraph *g);                                          \
	CUresult id(CUstream s, CUgraph *g)                                                        \
	{                                                                                          \
		return impl_##id(0, s, g);                                                         \
	}                                                                                          \
	static CUresult pa_##id(CUstream s, CUgraph *g)                                            \
	{                                                                                          \
		return impl_##id(1, s, g);                                                         \
	}                                                                                          \
	REMAT_HOOK(id, "cuStreamEndCapture", pt, 0, id, pa_##id)

END(cuStreamEndCapture, 0);
END(cuStreamEndCapture_ptsz, 1);

extern struct remat_hook remat_hook_cuThreadExchangeStreamCaptureMode;
static CUresult exchange(int door, CUstreamCaptureMode *mode)
{
	void *real = REAL(cuThreadExchangeStreamCaptureMode, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUstreamCaptureMode want = mode ? *mode : CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUresult r = ((exchange_fn)real)(mode);
	if (r == CUDA_SUCCESS && remat_session_active)
		remat_capture_thread_mode(want);
	return r;
}
REMAT_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode);
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	return exchange(0, mode);
}
static CUresult pa_exchange(CUstreamCaptureMode *mode)
{
	return exchange(1, mode);
}
REMAT_HOOK(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode", 0, 0,
           cuThreadExchangeStreamCaptureMode, pa_exchange);
