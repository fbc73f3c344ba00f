/*
 * exec.c — what a stream worker does with one op: run it, count it, give
 * it its simulated duration and report its activity to CUPTI.
 */
#include "driver.h"

#include <cupti_activity.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *copy_name(int kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return "HtoH";
	default:
		return "copy";
	}
}

static void run_kernel(struct sim_stream *s, struct sim_op *op, uint64_t start, uint64_t *end)
{
	struct sim_func *f = op->u.kernel.fn;
	fault_set_op("kernel", f->k->name, s->id);
	double ns = clock_kernel_ns(f, op->u.kernel.args, op->u.kernel.grid, op->u.kernel.block);
	const struct sim_launch_attrs *a = &op->u.kernel.attrs;
	struct simcuda_launch_attrs la = {
	    .cluster = {a->cluster[0], a->cluster[1], a->cluster[2]},
	    .cooperative = a->cooperative,
	};
	if (simcuda_run_grid_attrs(f->k, op->u.kernel.args, op->u.kernel.grid, op->u.kernel.block,
	                           op->u.kernel.smem, &la) != 0) {
		/* launch() validated the configuration already. */
		fprintf(stderr, "simcuda: kernel '%s' could not run its grid\n", f->k->name);
		abort();
	}
	*end = start + (uint64_t)ns;
	atomic_fetch_add(&sim_stats.kernels, 1);
	const struct simcuda_hooks *h = atomic_load(&sim_hooks);
	if (h && h->kernel) {
		struct simcuda_activity_kernel rec = {
		    .correlation_id = op->correlation,
		    .name = f->k->name,
		    .start_ns = start,
		    .end_ns = *end,
		    .device_id = 0,
		    .context_id = s->ctx->id,
		    .stream_id = s->id,
		    .grid = op->u.kernel.grid,
		    .block = op->u.kernel.block,
		    .dynamic_smem = op->u.kernel.smem,
		};
		h->kernel(&rec);
	}
}

static void report_memop(struct sim_stream *s, struct sim_op *op, enum simcuda_memop_kind kind,
                         uint64_t start, uint64_t end, uint64_t bytes)
{
	const struct simcuda_hooks *h = atomic_load(&sim_hooks);
	if (h == NULL || h->memop == NULL)
		return;
	struct simcuda_activity_memop rec = {
	    .kind = kind,
	    .correlation_id = op->correlation,
	    .start_ns = start,
	    .end_ns = end,
	    .bytes = bytes,
	    .device_id = 0,
	    .context_id = s->ctx->id,
	    .stream_id = s->id,
	    .copy_kind = kind == SIMCUDA_MEMCPY ? op->u.copy.kind : 0,
	    .value = kind == SIMCUDA_MEMSET ? op->u.set.value : 0,
	};
	h->memop(&rec);
}

static void run_memset(struct sim_op *op)
{
	size_t n = op->u.set.count;
	uint32_t v = op->u.set.value;
	switch (op->u.set.elem) {
	case 1:
		memset(op->u.set.dst, (int)(v & 0xff), n);
		break;
	case 2: {
		uint16_t *d = op->u.set.dst;
		for (size_t i = 0; i < n; i++)
			d[i] = (uint16_t)v;
		break;
	}
	default: {
		uint32_t *d = op->u.set.dst;
		for (size_t i = 0; i < n; i++)
			d[i] = v;
		break;
	}
	}
}

void op_execute(struct sim_stream *s, struct sim_op *op, uint64_t start, uint64_t *end)
{
	switch (op->kind) {
	case OP_KERNEL:
		run_kernel(s, op, start, end);
		break;
	case OP_MEMCPY:
		fault_set_op("memcpy", copy_name(op->u.copy.kind), s->id);
		memmove(op->u.copy.dst, op->u.copy.staging ? op->u.copy.staging : op->u.copy.src,
		        op->u.copy.bytes);
		*end = start +
		       clock_copy_ns(op->u.copy.bytes, op->u.copy.kind, op->u.copy.pinned_host);
		atomic_fetch_add(&sim_stats.memcpy, 1);
		report_memop(s, op, SIMCUDA_MEMCPY, start, *end, op->u.copy.bytes);
		break;
	case OP_MEMSET: {
		size_t bytes = op->u.set.count * op->u.set.elem;
		fault_set_op("memset",
		             op->u.set.elem == 1   ? "D8"
		             : op->u.set.elem == 2 ? "D16"
		                                   : "D32",
		             s->id);
		run_memset(op);
		*end = start + clock_set_ns(bytes);
		atomic_fetch_add(&sim_stats.memset, 1);
		report_memop(s, op, SIMCUDA_MEMSET, start, *end, bytes);
		break;
	}
	case OP_HOSTFN:
		fault_set_op("host function", "callback", s->id);
		op->u.host.fn(op->u.host.data);
		*end = start + 1000;
		atomic_fetch_add(&sim_stats.host_funcs, 1);
		break;
	case OP_ALLOC:
		alloc_make_live(op->u.mem.addr, op->u.mem.id);
		break;
	case OP_FREE:
		alloc_finish_free(op->u.mem.addr, op->u.mem.id);
		break;
	case OP_RECORD:
	case OP_WAIT:
	case OP_EXIT:
		break;
	}
	fault_set_op(NULL, NULL, 0);
}
