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
#include "internal.h"

struct entry {
	CUgraphExec exec;
	struct remat_graph_refs refs;
};

/* The executable graphs read, and what each may touch. */
static struct prof_graphs {
	struct entry *tab;
	size_t ntab, captab;
} gr;

static struct entry *find(CUgraphExec exec)
{
	for (size_t i = 0; i < gr.ntab; i++)
		if (gr.tab[i].exec == exec)
			return &gr.tab[i];
	return NULL;
}

static void add(struct remat_graph_refs *r, uint64_t lo, uint64_t hi, size_t *cap)
{
	if (r->n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = realloc(r->range, c * sizeof(*r->range));
		if (!p) {
			r->opaque = 1;
			return;
		}
		r->range = p;
		*cap = c;
	}
	r->range[r->n][0] = lo;
	r->range[r->n][1] = hi;
	r->n++;
}

static void add_words(struct remat_graph_refs *r, const uint8_t *buf, size_t off, size_t size,
                      size_t *cap)
{
	/* Words at 8-aligned offsets of the packed parameters, as a launch's. */
	for (size_t w = (off + 7) & ~(size_t)7; w + 8 <= off + size; w += 8) {
		uint64_t v;
		memcpy(&v, buf + (w - off), 8);
		if (v)
			add(r, v, v + 1, cap);
	}
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
			add_words(r, buf, 0, size, cap);
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
	for (size_t j = 0; j < k->nparams; j++)
		add_words(r, p.kernelParams[j], k->param[j][0], k->param[j][1], cap);
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
	if (!e) {
		if (gr.ntab == gr.captab) {
			size_t c = gr.captab ? gr.captab * 2 : 16;
			struct entry *t = realloc(gr.tab, c * sizeof(*t));
			if (!t)
				return; /* unknown: treated as opaque at launch */
			gr.tab = t;
			gr.captab = c;
		}
		e = &gr.tab[gr.ntab++];
		e->exec = exec;
	} else {
		free(e->refs.range);
	}
	read_graph(&e->refs, g);
	remat_log(REMAT_LOG_DEBUG,
	          "graph %p: %u kernel node(s), %zu parameter word(s) and ranges%s", (void *)exec,
	          e->refs.kernels, e->refs.n,
	          e->refs.opaque ? "; opaque (a node that cannot be read)" : "");
}

void prof_graph_forget(CUgraphExec exec)
{
	struct entry *e = find(exec);
	if (!e)
		return;
	free(e->refs.range);
	*e = gr.tab[--gr.ntab];
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
