/*
 * graph.c — graphs as captured: a list of ops (kernels, copies, memsets,
 * host functions) run in capture order.  cuGraphInstantiate takes a copy;
 * cuGraphLaunch queues a fresh copy of each op on the stream, so a launch
 * is ordered like any other work on that stream.  Building graphs node by
 * node (cuGraphAdd*Node) is not simulated.
 */
#include "module.h"

#include <stdlib.h>
#include <string.h>

struct sim_graph *graph_new(void)
{
	return calloc(1, sizeof(struct sim_graph));
}

void graph_free(struct sim_graph *g)
{
	if (g == NULL)
		return;
	for (size_t i = 0; i < g->n; i++)
		op_free(g->nodes[i]);
	free(g->nodes);
	free(g);
}

struct sim_op *op_clone(const struct sim_op *op)
{
	struct sim_op *c = op_new(op->kind);
	c->u = op->u;
	if (op->kind == OP_KERNEL) {
		const struct simcuda_kernel *k = op->u.kernel.fn->k;
		size_t bytes = k->param_bytes ? k->param_bytes : 1;
		c->u.kernel.params = malloc(bytes);
		c->u.kernel.args = calloc(k->nparams ? k->nparams : 1, sizeof(void *));
		if (c->u.kernel.params == NULL || c->u.kernel.args == NULL) {
			free(c->u.kernel.params);
			free(c->u.kernel.args);
			free(c);
			return NULL;
		}
		memcpy(c->u.kernel.params, op->u.kernel.params, bytes);
		for (unsigned i = 0; i < k->nparams; i++)
			c->u.kernel.args[i] = (char *)c->u.kernel.params + k->param_offset[i];
	} else if (op->kind == OP_MEMCPY) {
		c->u.copy.staging = NULL;
	}
	return c;
}

static CUresult copy_graph(const struct sim_graph *from, struct sim_graph **out)
{
	struct sim_graph *g = graph_new();
	if (g == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->nodes = calloc(from->n ? from->n : 1, sizeof(*g->nodes));
	if (g->nodes == NULL) {
		free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	g->cap = from->n;
	for (; g->n < from->n; g->n++) {
		g->nodes[g->n] = op_clone(from->nodes[g->n]);
		if (g->nodes[g->n] == NULL) {
			graph_free(g);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	*out = g;
	return CUDA_SUCCESS;
}

static CUresult graph_of(const void *h, enum handle_kind kind, struct sim_graph **out)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (!handle_is(h, kind))
		return CUDA_ERROR_INVALID_VALUE;
	*out = (struct sim_graph *)h;
	return CUDA_SUCCESS;
}

static CUresult create(CUgraph *out, unsigned flags)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_graph *g = graph_new();
	if (g == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	handle_add(g, H_GRAPH);
	*out = (CUgraph)g;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	cuGraphCreate_params p = {phGraph, flags};
	API_CALL(cuGraphCreate, &p, create(phGraph, flags));
}

static CUresult destroy(void *h, enum handle_kind kind)
{
	struct sim_graph *g;
	CUresult r = graph_of(h, kind, &g);
	if (r != CUDA_SUCCESS)
		return r;
	handle_del(g);
	graph_free(g);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
	cuGraphDestroy_params p = {hGraph};
	API_CALL(cuGraphDestroy, &p, destroy(hGraph, H_GRAPH));
}

EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	cuGraphExecDestroy_params p = {hGraphExec};
	API_CALL(cuGraphExecDestroy, &p, destroy(hGraphExec, H_GRAPHEXEC));
}

static CUresult get_nodes(CUgraph h, CUgraphNode *nodes, size_t *count)
{
	struct sim_graph *g;
	CUresult r = graph_of(h, H_GRAPH, &g);
	if (r != CUDA_SUCCESS)
		return r;
	if (count == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes) {
		size_t n = *count < g->n ? *count : g->n;
		for (size_t i = 0; i < n; i++)
			nodes[i] = (CUgraphNode)g->nodes[i];
		for (size_t i = n; i < *count; i++)
			nodes[i] = NULL;
	}
	*count = g->n;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	cuGraphGetNodes_params p = {hGraph, nodes, numNodes};
	API_CALL(cuGraphGetNodes, &p, get_nodes(hGraph, nodes, numNodes));
}

static CUresult instantiate(CUgraphExec *out, CUgraph h, unsigned long long flags)
{
	struct sim_graph *g, *exec;
	CUresult r = graph_of(h, H_GRAPH, &g);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL ||
	    (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
	                                   CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
	                                   CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)))
		return CUDA_ERROR_INVALID_VALUE;
	r = copy_graph(g, &exec);
	if (r != CUDA_SUCCESS)
		return r;
	handle_add(exec, H_GRAPHEXEC);
	*out = (CUgraphExec)exec;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                    unsigned long long flags)
{
	cuGraphInstantiateWithFlags_params p = {phGraphExec, hGraph, flags};
	API_CALL(cuGraphInstantiateWithFlags, &p, instantiate(phGraphExec, hGraph, flags));
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                       CUgraphNode *phErrorNode, char *logBuffer,
                                       size_t bufferSize);
EXPORT CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUgraphNode *phErrorNode, char *logBuffer,
                                              size_t bufferSize)
{
	cuGraphInstantiate_v2_params p = {phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize};
	if (phErrorNode)
		*phErrorNode = NULL;
	if (logBuffer && bufferSize)
		logBuffer[0] = '\0';
	API_CALL(cuGraphInstantiate_v2, &p, instantiate(phGraphExec, hGraph, 0));
}

static CUresult launch_graph(CUgraphExec h, CUstream hs, bool per_thread)
{
	struct sim_graph *g;
	struct sim_stream *s;
	CUresult r = graph_of(h, H_GRAPHEXEC, &g);
	if (r == CUDA_SUCCESS)
		r = stream_resolve(hs, per_thread, &sim_primary, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (capture_id_of(s))
		return CUDA_ERROR_NOT_SUPPORTED; /* child graphs are not simulated */
	for (size_t i = 0; i < g->n; i++) {
		struct sim_op *op = op_clone(g->nodes[i]);
		if (op == NULL)
			return CUDA_ERROR_OUT_OF_MEMORY;
		if (capture_take(s, op, &r))
			return r;
		stream_enqueue(s, op, false);
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	cuGraphLaunch_params p = {hGraphExec, hStream};
	API_CALL(cuGraphLaunch, &p, launch_graph(hGraphExec, hStream, false));
}

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	cuGraphLaunch_ptsz_params p = {hGraphExec, hStream};
	API_CALL(cuGraphLaunch_ptsz, &p, launch_graph(hGraphExec, hStream, true));
}
