/*
 * graphs.c — what an executable graph's launch may touch, read once from
 * the graph it was instantiated from (the driver has no way to read an
 * executable graph): each kernel node's parameters as 8-byte words (the
 * layout from kernels.c, as for a launch), each copy's and set's device
 * ranges.  A node of another kind that can touch memory (a child graph, a
 * conditional node, ...) or a kernel whose layout is unknown makes the
 * graph opaque.  Kept per executable graph until it is destroyed; the
 * session hands it with each launch (op->graph) to the profiler, replay
 * and the swap check.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/driver.h"
#include "../core/log.h"
#include "../core/param_words.h"
#include "internal.h"

struct entry {
	uint64_t exec; /* the CUgraphExec: the map's key */
	struct remat_graph_refs refs;
};

/* The executable graphs read, and what each may touch. */
static struct prof_graphs {
	struct remat_map by_exec; /* records of struct entry */
} gr = {REMAT_MAP_INIT(struct entry)};

static struct entry *find(CUgraphExec exec)
{
	return remat_map_find(&gr.by_exec, (uint64_t)(uintptr_t)exec);
}

static void add(struct remat_graph_refs *r, uint64_t lo, uint64_t hi, size_t *cap)
{
	if (REMAT_GROW(r->range, r->n, *cap)) {
		r->opaque = 1;
		return;
	}
	r->range[r->n][0] = lo;
	r->range[r->n][1] = hi;
	r->n++;
}

/* Every nonzero parameter word may be a pointer the graph touches. */
static void add_words(struct remat_graph_refs *r, struct remat_words it, size_t *cap)
{
	uint64_t v, off;
	while (remat_words_next(&it, &v, &off))
		if (v)
			add(r, v, v + 1, cap);
}

static void read_kernel(struct remat_graph_refs *r, CUgraphNode node, size_t *cap)
{
	CUDA_KERNEL_NODE_PARAMS p;
	if (!remat_drv.cuGraphKernelNodeGetParams ||
	    remat_drv.cuGraphKernelNodeGetParams(node, &p) != CUDA_SUCCESS) {
		r->opaque = 1;
		return;
	}
	r->kernels++;
	if (p.extra) {
		struct remat_op op = {.extra = p.extra};
		size_t size;
		const uint8_t *buf = remat_op_extra_params(&op, &size);
		if (buf)
			add_words(r, remat_words_packed(buf, size), cap);
		else
			r->opaque = 1;
		return;
	}
	struct prof_kinfo *k = prof_kinfo_get(p.func ? (void *)p.func : (void *)p.kern);
	if (k && prof_collective_name(k->name))
		r->collective = 1;
	if (!k || !k->layout_known || (k->nparams && !p.kernelParams)) {
		r->opaque = 1;
		return;
	}
	add_words(r, remat_words_params(p.kernelParams, (const uint32_t(*)[2])k->param, k->nparams),
	          cap);
}

/* The bytes a copy or set side spans from its first byte: rows of width
 * bytes, pitch apart (a 3-D copy's planes are rows too). */
static uint64_t span(size_t width, size_t pitch, size_t height, size_t depth)
{
	size_t lines = (height ? height : 1) * (depth ? depth : 1);
	size_t stride = pitch ? pitch : width;
	return (uint64_t)stride * (lines - 1) + width;
}

static void read_copy(struct remat_graph_refs *r, CUgraphNode node, size_t *cap)
{
	CUDA_MEMCPY3D c;
	if (!remat_drv.cuGraphMemcpyNodeGetParams ||
	    remat_drv.cuGraphMemcpyNodeGetParams(node, &c) != CUDA_SUCCESS) {
		r->opaque = 1;
		return;
	}
	if (c.srcMemoryType == CU_MEMORYTYPE_DEVICE || c.srcMemoryType == CU_MEMORYTYPE_UNIFIED) {
		uint64_t lo = c.srcDevice + c.srcXInBytes +
		              (uint64_t)c.srcPitch * (c.srcY + (uint64_t)c.srcZ * c.srcHeight);
		add(r, lo, lo + span(c.WidthInBytes, c.srcPitch, c.Height, c.Depth), cap);
	}
	if (c.dstMemoryType == CU_MEMORYTYPE_DEVICE || c.dstMemoryType == CU_MEMORYTYPE_UNIFIED) {
		uint64_t lo = c.dstDevice + c.dstXInBytes +
		              (uint64_t)c.dstPitch * (c.dstY + (uint64_t)c.dstZ * c.dstHeight);
		add(r, lo, lo + span(c.WidthInBytes, c.dstPitch, c.Height, c.Depth), cap);
	}
	if (c.srcMemoryType == CU_MEMORYTYPE_ARRAY || c.dstMemoryType == CU_MEMORYTYPE_ARRAY)
		r->opaque = 1;
}

static void read_set(struct remat_graph_refs *r, CUgraphNode node, size_t *cap)
{
	CUDA_MEMSET_NODE_PARAMS m;
	if (!remat_drv.cuGraphMemsetNodeGetParams ||
	    remat_drv.cuGraphMemsetNodeGetParams(node, &m) != CUDA_SUCCESS) {
		r->opaque = 1;
		return;
	}
	add(r, m.dst, m.dst + span(m.width * m.elementSize, m.pitch, m.height, 1), cap);
}

static void read_graph(struct remat_graph_refs *r, CUgraph g)
{
	memset(r, 0, sizeof(*r));
	size_t n = 0, cap = 0;
	if (!remat_drv.cuGraphGetNodes || !remat_drv.cuGraphNodeGetType ||
	    remat_drv.cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS) {
		r->opaque = 1;
		return;
	}
	CUgraphNode *nodes = malloc((n ? n : 1) * sizeof(*nodes));
	if (!nodes || remat_drv.cuGraphGetNodes(g, nodes, &n) != CUDA_SUCCESS) {
		free(nodes);
		r->opaque = 1;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType t;
		if (remat_drv.cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS) {
			r->opaque = 1;
			continue;
		}
		switch (t) {
		case CU_GRAPH_NODE_TYPE_KERNEL:
			read_kernel(r, nodes[i], &cap);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			read_copy(r, nodes[i], &cap);
			break;
		case CU_GRAPH_NODE_TYPE_MEMSET:
			read_set(r, nodes[i], &cap);
			break;
		/* Nodes that touch no device memory of the program's, or only
		 * the graph's own (its memory nodes). */
		case CU_GRAPH_NODE_TYPE_EMPTY:
		case CU_GRAPH_NODE_TYPE_HOST:
		case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
		case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
		case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
		case CU_GRAPH_NODE_TYPE_MEM_FREE:
			break;
		default:
			r->opaque = 1;
			break;
		}
	}
	free(nodes);
}

void prof_graph_read(CUgraphExec exec, CUgraph g)
{
	struct entry *e = find(exec);
	if (e)
		free(e->refs.range);
	else if (!(e = remat_map_insert(&gr.by_exec, (uint64_t)(uintptr_t)exec)))
		return; /* unknown: treated as opaque at launch */
	read_graph(&e->refs, g);
	remat_log(REMAT_LOG_DEBUG,
	          "graph %p: %u kernel node(s), %zu parameter word(s) and ranges%s", (void *)exec,
	          e->refs.kernels, e->refs.n,
	          e->refs.opaque ? "; opaque (a node that cannot be read)" : "");
}

void prof_graph_forget(CUgraphExec exec)
{
	struct entry e;
	if (remat_map_remove(&gr.by_exec, (uint64_t)(uintptr_t)exec, &e) == 0)
		free(e.refs.range);
}

void prof_graph_opaque(CUgraphExec exec)
{
	struct entry *e = find(exec);
	if (e)
		e->refs.opaque = 1;
}

const struct remat_graph_refs *prof_graph_refs(CUgraphExec exec)
{
	struct entry *e = find(exec);
	return e ? &e->refs : NULL;
}
