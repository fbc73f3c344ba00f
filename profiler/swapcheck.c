/*
 * swapcheck.c — once the allocator has swapped something to the host
 * (alloc/swap.c: the device was full before a plan applied),
 * every op is looked at before anything else sees it: the allocations its
 * parameter words, copy or set ranges point into are marked used and
 * pinned, and those on the host come back first.  So the profiler's write
 * set hashing, the replay engine and the op itself only ever see resident
 * buffers; the swaps are no ops of the program (not recorded, no index).
 */
#include <string.h>

#include "../alloc/alloc.h"
#include "../core/log.h"
#include "internal.h"

#define MAX_RANGES 512 /* 4 KiB of parameters: a longer tail is taken in batches */
#define MAX_PINS   256

/* What this thread's op in flight pinned, released after its real call. */
static __thread uint64_t pins[MAX_PINS];
static __thread size_t npins;
static __thread uint32_t copies;

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
	int s = remat_alloc_touch(b->stamp, b->lohi, b->n, pins, &npins, MAX_PINS);
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

static void add_words(struct batch *b, const uint8_t *p, size_t len)
{
	for (size_t off = 0; off + 8 <= len; off += 8) {
		uint64_t v;
		memcpy(&v, p + off, 8);
		if (v)
			add(b, v, v + 1);
	}
}

/* 1 when the kernel's parameters cannot be read: anything may be touched. */
static int kernel_ranges(struct batch *b, const struct remat_op *op)
{
	size_t size;
	const uint8_t *buf = remat_op_extra_params(op, &size);
	if (buf) {
		add_words(b, buf, size);
		return 0;
	}
	const struct prof_kinfo *k = prof_kinfo_get(op->func);
	int unknown = !k || !k->layout_known || (k->nparams && !op->params);
	for (size_t j = 0; !unknown && j < k->nparams; j++) {
		uint32_t off = k->param[j][0], size = k->param[j][1];
		/* The words at 8-aligned offsets of the packed parameters, as
		 * the profiler's reference scan reads them. */
		for (uint32_t w = (off + 7) & ~7u; w + 8 <= off + size; w += 8) {
			uint64_t v;
			memcpy(&v, (const uint8_t *)op->params[j] + (w - off), 8);
			if (v)
				add(b, v, v + 1);
		}
	}
	return unknown;
}

void prof_swap_check(const struct remat_op *op)
{
	struct batch b = {.stamp = remat_alloc_touch_begin()};
	int all = 0;
	copies = 0;
	switch (op->kind) {
	case REMAT_OP_KERNEL:
		all = kernel_ranges(&b, op);
		break;
	case REMAT_OP_MEMCPY:
		add(&b, op->dst, op->dst + op->bytes);
		add(&b, op->src, op->src + op->bytes);
		break;
	case REMAT_OP_MEMSET:
		add(&b, op->dst, op->dst + op->bytes);
		break;
	default:
		/* A graph launch: what its nodes were read to touch (graphs.c). */
		all = !op->graph || op->graph->opaque;
		for (size_t i = 0; !all && i < op->graph->n; i++)
			add(&b, op->graph->range[i][0], op->graph->range[i][1]);
		break;
	}
	flush(&b);
	all |= b.swapped < 0;
	if (!all && !b.swapped)
		return;
	/* The copies back are libremat's, not the program's: CUPTI records of
	 * them are not matched to the op. */
	struct remat_swap_stats s0, s1;
	remat_alloc_swap_stats(&s0);
	prof_cupti_tls.internal = 1;
	remat_alloc_swap_in(all ? NULL : pins, all ? 0 : npins);
	prof_cupti_tls.internal = 0;
	remat_alloc_swap_stats(&s1);
	/* Inside a runtime call CUPTI files them under the call's id, which
	 * the op's own copy shares; outside one, under their own driver ids,
	 * which "internal" already keeps out of the profile. */
	if (prof_cupti_tls.rt_depth)
		copies = (uint32_t)(s1.ins - s0.ins + s1.outs - s0.outs);
	static const char *kinds[] = {"kernel", "copy", "memset", "host function", "graph launch"};
	remat_log(REMAT_LOG_DEBUG, "before a %s: brought back %s swapped allocation(s)",
	          kinds[op->kind],
	          all             ? "every"
	          : b.swapped > 1 ? "several"
	                          : "one");
}

void prof_swap_release(void)
{
	if (npins) {
		remat_alloc_unpin(pins, npins);
		npins = 0;
	}
}

uint32_t prof_swap_copies_take(void)
{
	uint32_t n = copies;
	copies = 0;
	return n;
}
