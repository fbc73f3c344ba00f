/*
 * graphmem.c — graph memory nodes.  cuMemAllocAsync on a capturing
 * stream reserves an address range for the graph's lifetime and records
 * an allocation node; each launch allocates there (capacity charged when
 * the launch is issued, the range accessible once the stream reaches the
 * node) and a free node — in the same graph, another graph, or a plain
 * cuMemFreeAsync/cuMemFree — gives it back.  As the driver documents:
 * a graph is not launched again while an allocation of its last launch is
 * still live, unless instantiated with AUTO_FREE_ON_LAUNCH (the launch
 * then frees it first); a free node must find its allocation live.
 */
#include "driver.h"

#include <stdlib.h>
#include <unistd.h>

struct sim_gmem {
	uintptr_t base;
	size_t size, span;
	int refs; /* nodes holding it (graphs and executable graphs) */
	struct sim_gmem *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_gmem *all; /* every reserved range, for range checks */

void gmem_ref(struct sim_gmem *g)
{
	pthread_mutex_lock(&lock);
	g->refs++;
	pthread_mutex_unlock(&lock);
}

void gmem_unref(struct sim_gmem *g)
{
	pthread_mutex_lock(&lock);
	bool last = --g->refs == 0;
	if (last)
		for (struct sim_gmem **p = &all; *p; p = &(*p)->next)
			if (*p == g) {
				*p = g->next;
				break;
			}
	pthread_mutex_unlock(&lock);
	if (!last)
		return;
	/* Memory still allocated there stays until freed, then its range goes
	 * back ("graph destruction does not free unfreed allocations"). */
	if (!alloc_disown_range(g->base))
		va_give(g->base);
	free(g);
}

uintptr_t gmem_base(const struct sim_gmem *g)
{
	return g->base;
}

size_t gmem_size(const struct sim_gmem *g)
{
	return g->size;
}

bool gmem_range_ok(uintptr_t p, size_t n)
{
	pthread_mutex_lock(&lock);
	bool ok = false;
	for (struct sim_gmem *g = all; g && !ok; g = g->next)
		ok = p >= g->base && n <= g->size && p - g->base <= g->size - n;
	pthread_mutex_unlock(&lock);
	return ok;
}

static struct sim_gmem *find_base(uintptr_t base)
{
	for (struct sim_gmem *g = all; g; g = g->next)
		if (g->base == base)
			return g;
	return NULL;
}

/* A memory node of s's capture holding one reference to g (given). */
static CUresult add_node(struct sim_stream *s, enum op_kind kind, uintptr_t addr,
                         struct sim_gmem *g)
{
	struct sim_op *op = op_new(kind);
	op->u.mem.addr = addr;
	op->u.mem.graph = g;
	CUresult r;
	if (!capture_take(s, op, &r)) {
		/* The capture ended in between: nothing to record into. */
		op->u.mem.graph = NULL;
		op_free(op);
		gmem_unref(g);
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	return r;
}

CUresult gmem_capture_alloc(struct sim_stream *s, size_t size, CUdeviceptr *out)
{
	if (out == NULL || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (size + page - 1) & ~(page - 1);
	size_t align = span >= (2u << 20) ? (2u << 20) : page;
	struct sim_gmem *g = calloc(1, sizeof(*g));
	if (g == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	g->base = va_take(span, align, 0, R_ALLOC);
	if (g->base == 0) {
		free(g);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	g->size = size;
	g->span = span;
	g->refs = 1; /* the node */
	pthread_mutex_lock(&lock);
	g->next = all;
	all = g;
	pthread_mutex_unlock(&lock);
	CUresult r = add_node(s, OP_ALLOC, g->base, g);
	if (r == CUDA_SUCCESS)
		*out = (CUdeviceptr)g->base;
	return r;
}

CUresult gmem_capture_free(struct sim_stream *s, uintptr_t addr)
{
	pthread_mutex_lock(&lock);
	struct sim_gmem *g = find_base(addr);
	if (g)
		g->refs++;
	pthread_mutex_unlock(&lock);
	/* Only graph allocations can be freed by a graph. */
	if (g == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	return add_node(s, OP_FREE, addr, g);
}

CUresult gmem_launch_check(const struct sim_graph *exec, bool *auto_free)
{
	*auto_free = (exec->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0;
	/* Allocation state as the nodes will find it, in node order: an
	 * allocation or a free of this launch changes it for the later ones. */
	size_t n = 0;
	for (size_t i = 0; i < exec->n; i++)
		n += (exec->nodes[i]->kind == OP_ALLOC || exec->nodes[i]->kind == OP_FREE) &&
		     exec->nodes[i]->u.mem.graph;
	if (n == 0)
		return CUDA_SUCCESS;
	uintptr_t *seen = calloc(n, sizeof(*seen));
	bool *live = calloc(n, sizeof(*live));
	CUresult r = seen && live ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	size_t nseen = 0;
	for (size_t i = 0; r == CUDA_SUCCESS && i < exec->n; i++) {
		const struct sim_op *op = exec->nodes[i];
		if ((op->kind != OP_ALLOC && op->kind != OP_FREE) || !op->u.mem.graph)
			continue;
		uintptr_t a = op->u.mem.addr;
		size_t k = 0;
		while (k < nseen && seen[k] != a)
			k++;
		if (k == nseen) {
			seen[nseen] = a;
			live[nseen++] = alloc_live_at(a);
		}
		if (op->kind == OP_ALLOC) {
			if (live[k] && !*auto_free)
				r = CUDA_ERROR_INVALID_VALUE; /* unfreed since the last launch */
			live[k] = true;
		} else {
			if (!live[k])
				r = CUDA_ERROR_INVALID_VALUE; /* nothing to free */
			live[k] = false;
		}
	}
	free(seen);
	free(live);
	return r;
}

CUresult gmem_launch_alloc(const struct sim_op *op, uint64_t *id)
{
	const struct sim_gmem *g = op->u.mem.graph;
	return alloc_at(g->base, g->size, id);
}
