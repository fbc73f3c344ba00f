/*
 * graph.c — graph instantiation, watched.  A graph launch is one op whose
 * kernels libremat never sees launched; what they touch is read from the
 * graph when it is instantiated (session -> profiler/graphs.c: kernel
 * parameters, copy and set ranges), kept per executable graph, and handed
 * with every launch of it.  Updating an executable graph reads it again
 * (cuGraphExecUpdate) or makes it opaque (a node's parameters set one by
 * one): an opaque graph may touch anything.
 */
#include "procaddr.h"

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

/* The real function behind door 0 (the exported symbol) or 1 (the twin
 * cuGetProcAddress handed out). */
static void *real_of(struct remat_hook *h, int door)
{
	return door ? remat_hook_pa_real(h) : remat_hook_exp_real(h);
}

static CUresult instantiated(CUresult r, CUgraphExec *exec, CUgraph g)
{
	if (r == CUDA_SUCCESS && exec && remat_session_active)
		session_graph_instantiated(*exec, g);
	return r;
}

/* ---- cuGraphInstantiate (CUDA 10.0 and 11.0 forms) ---------------------- */

static CUresult inst(struct remat_hook *h, int door, CUgraphExec *e, CUgraph g, CUgraphNode *err,
                     char *log, size_t size)
{
	void *real = real_of(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return instantiated(((inst_fn)real)(e, g, err, log, size), e, g);
}

#define INST(id, minver)                                                                           \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log,           \
	                         size_t size);                                                     \
	CUresult id(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log, size_t size)           \
	{                                                                                          \
		return inst(&remat_hook_##id, 0, e, g, err, log, size);                            \
	}                                                                                          \
	static CUresult pa_##id(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log,            \
	                        size_t size)                                                       \
	{                                                                                          \
		return inst(&remat_hook_##id, 1, e, g, err, log, size);                            \
	}                                                                                          \
	REMAT_HOOK(id, "cuGraphInstantiate", 0, minver, id, pa_##id)

INST(cuGraphInstantiate, 0);
INST(cuGraphInstantiate_v2, 11000);

/* ---- cuGraphInstantiateWithFlags ---------------------------------------- */

extern struct remat_hook remat_hook_cuGraphInstantiateWithFlags;
static CUresult inst_flags(int door, CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	void *real = real_of(&remat_hook_cuGraphInstantiateWithFlags, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return instantiated(((inst_flags_fn)real)(e, g, flags), e, g);
}
REMAT_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g,
                                                  unsigned long long flags);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	return inst_flags(0, e, g, flags);
}
static CUresult pa_inst_flags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	return inst_flags(1, e, g, flags);
}
REMAT_HOOK(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", 0, 0,
           cuGraphInstantiateWithFlags, pa_inst_flags);

/* ---- cuGraphInstantiateWithParams --------------------------------------- */

static CUresult inst_params(struct remat_hook *h, int door, CUgraphExec *e, CUgraph g,
                            CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	void *real = real_of(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return instantiated(((inst_params_fn)real)(e, g, p), e, g);
}

#define INST_PARAMS(id, pt)                                                                        \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p);     \
	CUresult id(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)                   \
	{                                                                                          \
		return inst_params(&remat_hook_##id, 0, e, g, p);                                  \
	}                                                                                          \
	static CUresult pa_##id(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)       \
	{                                                                                          \
		return inst_params(&remat_hook_##id, 1, e, g, p);                                  \
	}                                                                                          \
	REMAT_HOOK(id, "cuGraphInstantiateWithParams", pt, 0, id, pa_##id)

INST_PARAMS(cuGraphInstantiateWithParams, 0);
INST_PARAMS(cuGraphInstantiateWithParams_ptsz, 1);

/* ---- cuGraphExecDestroy ------------------------------------------------- */

extern struct remat_hook remat_hook_cuGraphExecDestroy;
static CUresult exec_destroy(int door, CUgraphExec e)
{
	void *real = real_of(&remat_hook_cuGraphExecDestroy, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((destroy_fn)real)(e);
	if (r == CUDA_SUCCESS && remat_session_active)
		session_graph_destroyed(e);
	return r;
}
REMAT_EXPORT CUresult cuGraphExecDestroy(CUgraphExec e);
CUresult cuGraphExecDestroy(CUgraphExec e)
{
	return exec_destroy(0, e);
}
static CUresult pa_exec_destroy(CUgraphExec e)
{
	return exec_destroy(1, e);
}
REMAT_HOOK(cuGraphExecDestroy, "cuGraphExecDestroy", 0, 0, cuGraphExecDestroy, pa_exec_destroy);

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

extern struct remat_hook remat_hook_cuGraphExecUpdate, remat_hook_cuGraphExecUpdate_v2;
static CUresult update1(int door, CUgraphExec e, CUgraph g, CUgraphNode *err,
                        CUgraphExecUpdateResult *res)
{
	void *real = real_of(&remat_hook_cuGraphExecUpdate, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return updated(((update1_fn)real)(e, g, err, res), e, g);
}
REMAT_EXPORT CUresult cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphNode *err,
                                        CUgraphExecUpdateResult *res);
CUresult cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res)
{
	return update1(0, e, g, err, res);
}
static CUresult pa_update1(CUgraphExec e, CUgraph g, CUgraphNode *err, CUgraphExecUpdateResult *res)
{
	return update1(1, e, g, err, res);
}
REMAT_HOOK(cuGraphExecUpdate, "cuGraphExecUpdate", 0, 0, cuGraphExecUpdate, pa_update1);

static CUresult update2(int door, CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	void *real = real_of(&remat_hook_cuGraphExecUpdate_v2, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	return updated(((update2_fn)real)(e, g, info), e, g);
}
REMAT_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g,
                                           CUgraphExecUpdateResultInfo *info);
CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	return update2(0, e, g, info);
}
static CUresult pa_update2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
	return update2(1, e, g, info);
}
REMAT_HOOK(cuGraphExecUpdate_v2, "cuGraphExecUpdate", 0, 12000, cuGraphExecUpdate_v2, pa_update2);

/* ---- one node's parameters set in an executable graph: opaque from now - */

static CUresult set3(struct remat_hook *h, int door, CUgraphExec e, CUgraphNode n, const void *p)
{
	void *real = real_of(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((set3_fn)real)(e, n, p);
	if (remat_session_active)
		session_graph_changed(e);
	return r;
}

#define SET3(id, base, minver, PTYPE)                                                              \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(CUgraphExec e, CUgraphNode n, PTYPE p);                           \
	CUresult id(CUgraphExec e, CUgraphNode n, PTYPE p)                                         \
	{                                                                                          \
		return set3(&remat_hook_##id, 0, e, n, p);                                         \
	}                                                                                          \
	static CUresult pa_##id(CUgraphExec e, CUgraphNode n, PTYPE p)                             \
	{                                                                                          \
		return set3(&remat_hook_##id, 1, e, n, p);                                         \
	}                                                                                          \
	REMAT_HOOK(id, base, 0, minver, id, pa_##id)

SET3(cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", 0,
     const CUDA_KERNEL_NODE_PARAMS_v1 *);
SET3(cuGraphExecKernelNodeSetParams_v2, "cuGraphExecKernelNodeSetParams", 12000,
     const CUDA_KERNEL_NODE_PARAMS *);
SET3(cuGraphExecNodeSetParams, "cuGraphExecNodeSetParams", 0, CUgraphNodeParams *);

static CUresult set4(struct remat_hook *h, int door, CUgraphExec e, CUgraphNode n, const void *p,
                     CUcontext c)
{
	void *real = real_of(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ((set4_fn)real)(e, n, p, c);
	if (remat_session_active)
		session_graph_changed(e);
	return r;
}

#define SET4(id, PTYPE)                                                                            \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT CUresult id(CUgraphExec e, CUgraphNode n, PTYPE p, CUcontext c);              \
	CUresult id(CUgraphExec e, CUgraphNode n, PTYPE p, CUcontext c)                            \
	{                                                                                          \
		return set4(&remat_hook_##id, 0, e, n, p, c);                                      \
	}                                                                                          \
	static CUresult pa_##id(CUgraphExec e, CUgraphNode n, PTYPE p, CUcontext c)                \
	{                                                                                          \
		return set4(&remat_hook_##id, 1, e, n, p, c);                                      \
	}                                                                                          \
	REMAT_HOOK(id, #id, 0, 0, id, pa_##id)

SET4(cuGraphExecMemcpyNodeSetParams, const CUDA_MEMCPY3D *);
SET4(cuGraphExecMemsetNodeSetParams, const CUDA_MEMSET_NODE_PARAMS *);
