/*
 * engine.c — the copy engines: host <-> device copies on queues of their
 * own, and the check that nothing uses a copy's destination before the
 * copy is over.
 *
 * An H100 moves host <-> device data with DMA copy engines, separate from
 * the SMs: a copy runs concurrently with kernels (any stream's), and copies
 * in one direction share that direction's engine, so they run one after
 * another while the two directions overlap.  The simulator has one engine
 * per direction: each copy between device and host memory waits, besides
 * its stream's order and events, for the previous copy queued on its
 * engine (queue order = the order the host issued them, so simulated time
 * stays deterministic and every wait points to an op queued earlier: no
 * cycle).  Copies with page-locked host memory run at SIMCUDA_PCIE_GBPS
 * (clock.c); pageable ones keep their staged rate.
 *
 * Strictness: a host-to-device copy writes its destination over its whole
 * duration.  Any kernel, copy or memset that touches that destination must
 * be ordered after the copy (stream order, an event); one that starts, in
 * simulated time, before the copy ends did not wait for it — on a GPU it
 * would read a half-written buffer, here it aborts with one message.  The
 * copies in flight when an op is queued are noted on the op (a kernel:
 * every 8-byte word of its parameters that points into a destination);
 * the op's worker then waits for each (it was queued earlier, so it
 * finishes without this op) and compares times.  A copy leaves the
 * table once it finished and the host has waited for something at or
 * after its end (ops queued later start after it).  The table and the
 * engines' last copies are guarded by the context's lock (stream.c
 * calls engine_enqueue with it held).
 */
#include "driver.h"

#include <cupti_activity.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct sim_hazard {
	uintptr_t dst;
	size_t bytes;
	uint32_t stream_id;
	struct sim_marker *done;
};

enum { ENGINE_HTOD, ENGINE_DTOH, ENGINES };
static struct sim_marker *engine_last[ENGINES];

static struct sim_hazard *inflight;
static size_t ninflight, capinflight;

static _Noreturn void out_of_memory(void)
{
	fprintf(stderr, "simcuda: out of host memory\n");
	abort();
}

static void prune(void)
{
	uint64_t host = clock_host();
	size_t keep = 0;
	for (size_t i = 0; i < ninflight; i++) {
		struct sim_hazard *h = &inflight[i];
		if (marker_done(h->done) && h->done->end_ns <= host)
			marker_unref(h->done);
		else
			inflight[keep++] = *h;
	}
	ninflight = keep;
}

static void note(struct sim_op *op, const struct sim_hazard *h)
{
	for (unsigned i = 0; i < op->nhazards; i++)
		if (op->hazards[i].done == h->done)
			return;
	struct sim_hazard *n = realloc(op->hazards, (op->nhazards + 1) * sizeof(*n));
	if (n == NULL)
		out_of_memory();
	marker_ref(h->done);
	n[op->nhazards++] = *h;
	op->hazards = n;
}

/* Notes every copy in flight whose destination meets [p, p+bytes). */
static void note_range(struct sim_op *op, uintptr_t p, size_t bytes)
{
	for (size_t i = 0; i < ninflight; i++) {
		const struct sim_hazard *h = &inflight[i];
		if (p < h->dst + h->bytes && h->dst < p + bytes)
			note(op, h);
	}
}

static void note_uses(struct sim_op *op)
{
	switch (op->kind) {
	case OP_KERNEL: {
		const struct simcuda_kernel *k = op->u.kernel.fn->k;
		const unsigned char *prm = op->u.kernel.params;
		for (unsigned off = 0; prm && off + sizeof(uintptr_t) <= k->param_bytes;
		     off += sizeof(uintptr_t)) {
			uintptr_t word;
			__builtin_memcpy(&word, prm + off, sizeof(word));
			if (dev_addr(word))
				note_range(op, word, 1);
		}
		break;
	}
	case OP_MEMCPY:
		if (dev_addr((uintptr_t)op->u.copy.dst))
			note_range(op, (uintptr_t)op->u.copy.dst, op->u.copy.bytes);
		if (dev_addr((uintptr_t)op->u.copy.src))
			note_range(op, (uintptr_t)op->u.copy.src, op->u.copy.bytes);
		break;
	case OP_MEMSET:
		note_range(op, (uintptr_t)op->u.set.dst, op->u.set.count * op->u.set.elem);
		break;
	default:
		break;
	}
}

void engine_enqueue(struct sim_stream *s, struct sim_op *op)
{
	if (ninflight) {
		prune();
		note_uses(op);
	}
	if (op->kind != OP_MEMCPY)
		return;
	int kind = op->u.copy.kind;
	int engine = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD   ? ENGINE_HTOD
	             : kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? ENGINE_DTOH
	                                                       : -1;
	if (engine < 0)
		return;
	op_wait_on(op, engine_last[engine]);
	marker_unref(engine_last[engine]);
	marker_ref(op->marker);
	engine_last[engine] = op->marker;
	if (engine != ENGINE_HTOD)
		return;
	if (ninflight == capinflight) {
		size_t nc = capinflight ? capinflight * 2 : 16;
		struct sim_hazard *n = realloc(inflight, nc * sizeof(*n));
		if (n == NULL)
			out_of_memory();
		inflight = n;
		capinflight = nc;
	}
	marker_ref(op->marker);
	inflight[ninflight++] =
	    (struct sim_hazard){(uintptr_t)op->u.copy.dst, op->u.copy.bytes, s->id, op->marker};
}

static const char *op_name(const struct sim_op *op)
{
	switch (op->kind) {
	case OP_KERNEL:
		return op->u.kernel.fn->k->name;
	case OP_MEMCPY:
		return op->u.copy.kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD   ? "memcpy DtoD"
		       : op->u.copy.kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ? "memcpy DtoH"
		                                                            : "memcpy HtoD";
	case OP_MEMSET:
		return "memset";
	default:
		return "op";
	}
}

void engine_check(const struct sim_stream *s, const struct sim_op *op, uint64_t start)
{
	for (unsigned i = 0; i < op->nhazards; i++) {
		const struct sim_hazard *h = &op->hazards[i];
		uint64_t end = marker_block(h->done);
		if (end > start) {
			fprintf(stderr,
			        "simcuda: race: %s%s%s on stream %u starts at %" PRIu64
			        " ns and uses device memory [0x%" PRIxPTR ", +%zu) that a "
			        "host-to-device copy on stream %u writes until %" PRIu64
			        " ns: it does not wait for the copy (record an event after "
			        "the copy and wait for it)\n",
			        op->kind == OP_KERNEL ? "kernel '" : "", op_name(op),
			        op->kind == OP_KERNEL ? "'" : "", s->id, start, h->dst, h->bytes,
			        h->stream_id, end);
			abort();
		}
	}
}

struct sim_marker *engine_hazard_done(const struct sim_op *op, unsigned i)
{
	return op->hazards[i].done;
}

void engine_hazards_free(struct sim_op *op)
{
	for (unsigned i = 0; i < op->nhazards; i++)
		marker_unref(op->hazards[i].done);
	free(op->hazards);
	op->hazards = NULL;
	op->nhazards = 0;
}
