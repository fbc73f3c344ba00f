/*
 * capture.c — stream capture, watched: the begin and end of every
 * capture and the thread's interaction mode keep core/capture.c's table,
 * so that what is captured passes through libremat untouched and what a
 * capture forbids libremat does not do itself.
 */
#include "../core/capture.h"
#include "hooks.h"

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

/* ---- begin ------------------------------------------------------------- */

/* The CUDA 10.0 form: always a global capture. */
static CUresult begin1(struct remat_hook *h, int door, CUstream s)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return begun(((begin1_fn)real)(s), s, h->per_thread, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

static CUresult begin2(struct remat_hook *h, int door, CUstream s, CUstreamCaptureMode m)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return begun(((begin2_fn)real)(s, m), s, h->per_thread, m);
}

static CUresult begin_graph(struct remat_hook *h, int door, CUstream s, CUgraph g,
                            const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,
                            CUstreamCaptureMode m)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return begun(((begin_graph_fn)real)(s, g, deps, edges, n, m), s, h->per_thread, m);
}

REMAT_DOORS(cuStreamBeginCapture, "cuStreamBeginCapture", 0, 0, (CUstream s), begin1, s);
REMAT_DOORS(cuStreamBeginCapture_ptsz, "cuStreamBeginCapture", 1, 0, (CUstream s), begin1, s);
REMAT_DOORS(cuStreamBeginCapture_v2, "cuStreamBeginCapture", 0, 10010,
            (CUstream s, CUstreamCaptureMode m), begin2, s, m);
REMAT_DOORS(cuStreamBeginCapture_v2_ptsz, "cuStreamBeginCapture", 1, 10010,
            (CUstream s, CUstreamCaptureMode m), begin2, s, m);

#define BEGIN_GRAPH_PARAMS                                                                         \
	(CUstream s, CUgraph g, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n,   \
	 CUstreamCaptureMode m)
REMAT_DOORS(cuStreamBeginCaptureToGraph, "cuStreamBeginCaptureToGraph", 0, 0, BEGIN_GRAPH_PARAMS,
            begin_graph, s, g, deps, edges, n, m);
REMAT_DOORS(cuStreamBeginCaptureToGraph_ptsz, "cuStreamBeginCaptureToGraph", 1, 0,
            BEGIN_GRAPH_PARAMS, begin_graph, s, g, deps, edges, n, m);

/* ---- end --------------------------------------------------------------- */

static CUresult end(struct remat_hook *h, int door, CUstream s, CUgraph *g)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((end_fn)real)(s, g);
	/* Ended, well or not, unless it was not this stream's to end. */
	if (remat_session_active && r != CUDA_ERROR_STREAM_CAPTURE_UNMATCHED &&
	    r != CUDA_ERROR_ILLEGAL_STATE)
		remat_capture_ended(remat_stream(s, h->per_thread));
	return r;
}

REMAT_DOORS(cuStreamEndCapture, "cuStreamEndCapture", 0, 0, (CUstream s, CUgraph *g), end, s, g);
REMAT_DOORS(cuStreamEndCapture_ptsz, "cuStreamEndCapture", 1, 0, (CUstream s, CUgraph *g), end, s,
            g);

static CUresult exchange(struct remat_hook *h, int door, CUstreamCaptureMode *mode)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUstreamCaptureMode want = mode ? *mode : CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUresult r = ((exchange_fn)real)(mode);
	if (r == CUDA_SUCCESS && remat_session_active)
		remat_capture_thread_mode(want);
	return r;
}
REMAT_DOORS(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode", 0, 0,
            (CUstreamCaptureMode * mode), exchange, mode);
