/*
 * graph.c — graph instantiation, watched.  A graph launch is one op whose
 * kernels libremat never sees launched; what they touch is read from the
 * graph when it is instantiated (session -> profiler/graphs.c: kernel
 * parameters, copy and set ranges), kept per executable graph, and handed
 * with every launch of it.  Updating an executable graph reads it again
 * (cuGraphExecUpdate) or makes it opaque (a node's parameters set one by
 * one): an opaque graph may touch anything.
 */
#include "hooks.h"

#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphExecKernelNodeSetParams

typedef CUresult (*inst_fn)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
typedef CUresult (*inst_flags_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*inst_params_fn)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
typedef CUresult (*destroy_fn)(CUgraphExec);
typedef CUresult (*update1_fn)(CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *);
typedef CUresult (*update2_fn)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);
typedef CUresult (*set3_fn)(CUgraphExec, CUgraphNode, const void *);
typedef CUresult (*set4_fn)(CUgraphExec, CUgraphNode, const void *, CUcontext);

static CUresult instantiated(CUresult r, CUgraphExec *exec, CUgraph g)
{
	if (r == CUDA_SUCCESS && exec && remat_session_active)
		session_graph_instantiated(*exec, g);
	return r;
}

/* ---- instantiation: cuGraphInstantiate (CUDA 10.0 and 11.0), -WithFlags, -WithParams */

static CUresult inst(struct remat_hook *h, int door, CUgraphExec *e, CUgraph g, CUgraphNode *err,
                     char *log, size_t size)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return instantiated(((inst_fn)real)(e, g, err, log, size), e, g);
}

static CUresult inst_flags(struct remat_hook *h, int door, CUgraphExec *e, CUgraph g,
                           unsigned long long flags)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return instantiated(((inst_flags_fn)real)(e, g, flags), e, g);
}

static CUresult inst_params(struct remat_hook *h, int door, CUgraphExec *e, CUgraph g,
                            CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return instantiated(((inst_params_fn)real)(e, g, p), e, g);
}

#define INST_PARAMS (CUgraphExec * e, CUgraph g, CUgraphNode * err, char *log, size_t size)
REMAT_DOORS(cuGraphInstantiate, "cuGraphInstantiate", 0, 0, INST_PARAMS, inst, e, g, err, log,
            size);
REMAT_DOORS(cuGraphInstantiate_v2, "cuGraphInstantiate", 0, 11000, INST_PARAMS, inst, e, g, err,
            log, size);
REMAT_DOORS(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 0, 0,
            (CUgraphExec * e, CUgraph g, unsigned long long flags), inst_flags, e, g, flags);
REMAT_DOORS(cuGraphInstantiateWithParams, "cuGraphInstantiateWithParams", 0, 0,
            (CUgraphExec * e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p), inst_params, e, g, p);
REMAT_DOORS(cuGraphInstantiateWithParams_ptsz, "cuGraphInstantiateWithParams", 1, 0,
            (CUgraphExec * e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p), inst_params, e, g, p);

/* ---- cuGraphExecDestroy ------------------------------------------------- */

static CUresult exec_destroy(struct remat_hook *h, int door, CUgraphExec e)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((destroy_fn)real)(e);
	if (r == CUDA_SUCCESS && remat_session_active)
		session_graph_destroyed(e);
	return r;
}
REMAT_DOORS(cuGraphExecDestroy, "cuGraphExecDestroy", 0, 0, (CUgraphExec e), exec_destroy, e);

/* ---- cuGraphExecUpdate: the executable graph becomes g ------------------ */

static CUresult updated(CUresult r, CUgraphExec e, CUgraph g)
{
	if (remat_session_active) {
		if (r == CUDA_SUCCESS)
			session_graph_instantiated(e, g);
		else
			session_graph_changed(e); /* what it holds now is not ours to know */
	}
	return r;
}

static CUresult update1(struct remat_hook *h, int door, CUgraphExec e, CUgraph g, CUgraphNode *err,
                        CUgraphExecUpdateResult *res)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return updated(((update1_fn)real)(e, g, err, res), e, g);
}

static CUresult update2(struct remat_hook *h, int door, CUgraphExec e, CUgraph g,
                        CUgraphExecUpdateResultInfo *info)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return updated(((update2_fn)real)(e, g, info), e, g);
}

REMAT_DOORS(cuGraphExecUpdate, "cuGraphExecUpdate", 0, 0,
            (CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res), update1, e,
            g, err, res);
REMAT_DOORS(cuGraphExecUpdate_v2, "cuGraphExecUpdate", 0, 12000,
            (CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info), update2, e, g, info);

/* ---- one node's parameters set in an executable graph: opaque from now - */

static CUresult set3(struct remat_hook *h, int door, CUgraphExec e, CUgraphNode n, const void *p)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((set3_fn)real)(e, n, p);
	if (remat_session_active)
		session_graph_changed(e);
	return r;
}

static CUresult set4(struct remat_hook *h, int door, CUgraphExec e, CUgraphNode n, const void *p,
                     CUcontext c)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((set4_fn)real)(e, n, p, c);
	if (remat_session_active)
		session_graph_changed(e);
	return r;
}

REMAT_DOORS(cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", 0, 0,
            (CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS_v1 *p), set3, e, n, p);
REMAT_DOORS(cuGraphExecKernelNodeSetParams_v2, "cuGraphExecKernelNodeSetParams", 0, 12000,
            (CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p), set3, e, n, p);
REMAT_DOORS(cuGraphExecNodeSetParams, "cuGraphExecNodeSetParams", 0, 0,
            (CUgraphExec e, CUgraphNode n, CUgraphNodeParams *p), set3, e, n, p);
REMAT_DOORS(cuGraphExecMemcpyNodeSetParams, "cuGraphExecMemcpyNodeSetParams", 0, 0,
            (CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D *p, CUcontext c), set4, e, n, p, c);
REMAT_DOORS(cuGraphExecMemsetNodeSetParams, "cuGraphExecMemsetNodeSetParams", 0, 0,
            (CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c), set4, e,
            n, p, c);
