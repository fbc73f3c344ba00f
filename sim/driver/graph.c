/*
 * graph.c — graphs as captured: a list of ops (kernels, copies, memsets,
 * host functions, event records and waits, memory allocations and frees)
 * run in capture order.  cuGraphInstantiate takes a copy; cuGraphLaunch
 * queues a fresh copy of each op on the stream, so a launch is ordered
 * like any other work on that stream.  Building graphs node by node
 * (cuGraphAdd*Node) is not simulated; reading them is (graphnode.c).
 */
#include "module.h"

#include <stdlib.h>
#include <string.h>

/* Guards the peer links between graphs with memory nodes and their
 * executable graph. */
static pthread_mutex_t peer_lock = PTHREAD_MUTEX_INITIALIZER;

CUresult event_node_record(CUevent h, struct sim_marker *m);
struct sim_marker *event_node_marker(CUevent h);

struct sim_graph *graph_new(void)
{
	return calloc(1, sizeof(struct sim_graph));
}

int graph_add_node(struct sim_graph *g, struct sim_op *op)
{
	if (g->n == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 16;
		struct sim_op **nn = realloc(g->nodes, nc * sizeof(*nn));
		if (nn == NULL)
			return -1;
		g->nodes = nn;
		g->cap = nc;
	}
	g->nodes[g->n++] = op;
	handle_add(op, H_GRAPHNODE);
	return 0;
}

static bool mem_node(const struct sim_op *op)
{
	return (op->kind == OP_ALLOC || op->kind == OP_FREE) && op->u.mem.graph;
}

static void node_free(struct sim_op *op)
{
	handle_del(op);
	if (mem_node(op))
		gmem_unref(op->u.mem.graph);
	op_free(op);
}

void graph_free(struct sim_graph *g)
{
	if (g == NULL)
		return;
	pthread_mutex_lock(&peer_lock);
	if (g->peer)
		g->peer->peer = NULL;
	pthread_mutex_unlock(&peer_lock);
	for (size_t i = 0; i < g->n; i++)
		node_free(g->nodes[i]);
	free(g->nodes);
	free(g);
}

struct sim_op *op_clone(const struct sim_op *op)
{
	struct sim_op *c = op_new(op->kind);
	c->u = op->u;
	if (mem_node(op))
		gmem_ref(op->u.mem.graph);
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
	for (size_t i = 0; i < from->n; i++) {
		struct sim_op *op = op_clone(from->nodes[i]);
		if (op == NULL) {
			graph_free(g);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		graph_add_node(g, op); /* room was made above */
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
	bool has_mem = false;
	for (size_t i = 0; i < g->n; i++)
		has_mem |= mem_node(g->nodes[i]);
	/* "If hGraph contains any allocation or free nodes, there can be at
	 * most one executable graph in existence for that graph at a time." */
	pthread_mutex_lock(&peer_lock);
	bool busy = has_mem && g->peer;
	pthread_mutex_unlock(&peer_lock);
	if (busy)
		return CUDA_ERROR_INVALID_VALUE;
	r = copy_graph(g, &exec);
	if (r != CUDA_SUCCESS)
		return r;
	exec->exec = true;
	exec->flags = flags;
	if (has_mem) {
		pthread_mutex_lock(&peer_lock);
		g->peer = exec;
		exec->peer = g;
		pthread_mutex_unlock(&peer_lock);
	}
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
	/* The legacy stream while a blocking stream captures, before anything
	 * is queued. */
	struct sim_op *probe = op_new(OP_WAIT);
	if (capture_take(s, probe, &r))
		return r;
	op_free(probe);
	bool auto_free = false;
	r = gmem_launch_check(g, &auto_free);
	if (r != CUDA_SUCCESS)
		return r;
	for (size_t i = 0; i < g->n; i++) {
		const struct sim_op *node = g->nodes[i];
		uint64_t id = 0;
		if (node->kind == OP_ALLOC && node->u.mem.graph) {
			uintptr_t base = gmem_base(node->u.mem.graph);
			/* AUTO_FREE_ON_LAUNCH: what the last launch left allocated
			 * is freed first, in stream order. */
			uint64_t last =
			    auto_free && alloc_live_at(base) ? alloc_begin_free(base) : 0;
			if (last) {
				struct sim_op *f = op_new(OP_FREE);
				f->u.mem.addr = base;
				f->u.mem.id = last;
				stream_enqueue(s, f, false);
			}
			r = gmem_launch_alloc(node, &id);
			if (r != CUDA_SUCCESS)
				return r;
		} else if (node->kind == OP_FREE && node->u.mem.graph) {
			id = alloc_begin_free(node->u.mem.addr);
			if (!id)
				return CUDA_ERROR_INVALID_VALUE;
		}
		struct sim_op *op = op_clone(node);
		if (op == NULL)
			return CUDA_ERROR_OUT_OF_MEMORY;
		if (op->kind == OP_WAIT && op->u.ev.event) {
			struct sim_marker *m = event_node_marker(op->u.ev.event);
			op_wait_on(op, m);
			marker_unref(m);
		}
		if (mem_node(op)) {
			gmem_unref(op->u.mem.graph); /* the queued copy is not a node */
			op->u.mem.graph = NULL;
			op->u.mem.id = id;
		}
		if (op->kind == OP_RECORD && op->u.ev.event) {
			struct sim_marker *m = stream_enqueue(s, op, true);
			event_node_record(node->u.ev.event, m);
			marker_unref(m);
		} else {
			stream_enqueue(s, op, false);
		}
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
