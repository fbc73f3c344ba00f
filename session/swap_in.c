/*
 * swap_in.c — the swap net's op check: once the allocator has swapped
 * something to the host (alloc/swap.c: the device was full before a plan
 * applied), every op is looked at before anything else sees it, in every
 * state: the allocations its parameter words, copy or set ranges point
 * into are marked used and pinned, and those on the host come back first.
 * So the profiler's write sets, the replay engine and the op itself only
 * ever see resident buffers; the swaps are no ops of the program (not
 * recorded, no index).  Here because it needs the allocator and what the
 * profiler knows of kernels, and the session is what sits above both.
 */
#include "../alloc/alloc.h"
#include "../core/log.h"
#include "../core/param_words.h"
#include "../profiler/profiler.h"
#include "internal.h"

#define MAX_RANGES 512 /* 4 KiB of parameters: a longer tail is taken in batches */
#define MAX_PINS   256

/* What this thread's op in flight pinned, released after its real call. */
static __thread struct swap_pins {
	uint64_t addr[MAX_PINS];
	size_t n;
} pins;

struct batch {
	uint64_t stamp;
	uint64_t lohi[2 * MAX_RANGES];
	size_t n;
	int swapped; /* -1: too many to pin, bring back everything */
};

static void flush(struct batch *b)
{
	if (!b->n || b->swapped < 0)
		return;
	int s = remat_alloc_touch(b->stamp, b->lohi, b->n, pins.addr, &pins.n, MAX_PINS);
	b->swapped = s < 0 ? -1 : b->swapped + s;
	b->n = 0;
}

static void add(struct batch *b, uint64_t lo, uint64_t hi)
{
	if (b->n == MAX_RANGES)
		flush(b);
	b->lohi[2 * b->n] = lo;
	b->lohi[2 * b->n + 1] = hi > lo ? hi : lo + 1;
	b->n++;
}

/* The kernel's nonzero parameter words (the words the profiler's
 * reference scan reads); 1 when its parameters cannot be read: anything
 * may be touched. */
static int kernel_ranges(struct batch *b, const struct remat_op *op)
{
	size_t size, nparams;
	const uint8_t *buf = remat_op_extra_params(op, &size);
	const uint32_t(*layout)[2];
	struct remat_words it;
	if (buf)
		it = remat_words_packed(buf, size);
	else if (prof_kernel_params(op->func, &layout, &nparams) && (!nparams || op->params))
		it = remat_words_params(op->params, layout, nparams);
	else
		return 1;
	uint64_t v, off;
	while (remat_words_next(&it, &v, &off))
		if (v)
			add(b, v, v + 1);
	return 0;
}

/* What op touches: 1 when that is anything. */
static int op_ranges(struct batch *b, const struct remat_op *op)
{
	switch (op->kind) {
	case REMAT_OP_KERNEL:
		return kernel_ranges(b, op);
	case REMAT_OP_MEMCPY:
		add(b, op->dst, op->dst + op->bytes);
		add(b, op->src, op->src + op->bytes);
		return 0;
	case REMAT_OP_MEMSET:
		add(b, op->dst, op->dst + op->bytes);
		return 0;
	default:
		/* A graph launch: what its nodes were read to touch. */
		if (!op->graph || op->graph->opaque)
			return 1;
		for (size_t i = 0; i < op->graph->n; i++)
			add(b, op->graph->range[i][0], op->graph->range[i][1]);
		return 0;
	}
}

void session_swap_in(const struct remat_op *op)
{
	struct batch b = {.stamp = remat_alloc_touch_begin()};
	int all = op_ranges(&b, op);
	flush(&b);
	all |= b.swapped < 0;
	if (!all && !b.swapped) {
		prof_swap_copies(0);
		return;
	}
	/* The copies back are libremat's, not the program's. */
	struct remat_swap_stats s0, s1;
	remat_alloc_swap_stats(&s0);
	prof_own_work(1);
	remat_alloc_swap_in(all ? NULL : pins.addr, all ? 0 : pins.n);
	prof_own_work(0);
	remat_alloc_swap_stats(&s1);
	prof_swap_copies((uint32_t)(s1.ins - s0.ins + s1.outs - s0.outs));
	static const char *kinds[] = {"kernel", "copy", "memset", "host function", "graph launch"};
	remat_log(REMAT_LOG_DEBUG, "before a %s: brought back %s swapped allocation(s)",
	          kinds[op->kind],
	          all             ? "every"
	          : b.swapped > 1 ? "several"
	                          : "one");
}

void session_swap_release(void)
{
	if (pins.n) {
		remat_alloc_unpin(pins.addr, pins.n);
		pins.n = 0;
	}
}
