/*
 * attrs.c — launch attributes (cuLaunchKernelEx's, and the cooperative
 * entry points' as CU_LAUNCH_ATTRIBUTE_COOPERATIVE): kept per op, so that
 * a replay launches the kernel as the program did (a cluster, a
 * cooperative grid, a priority, programmatic stream serialization) with
 * cuLaunchKernelEx, and written to the trace.  A launch whose attribute
 * records an event (programmatic or launch-completion event) is not
 * replayed: a replay would record the program's event a second time.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/driver.h"
#include "../core/hash.h"
#include "internal.h"

static int records_event(CUlaunchAttributeID id)
{
	return id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
	       id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
}

uint64_t prof_attrs_record(struct prof_op *o, const struct remat_op *op, uint64_t hash)
{
	unsigned n = op->nattrs + (op->cooperative ? 1 : 0);
	if (!n || (op->nattrs && !op->attrs))
		return hash;
	o->attrs = calloc(n, sizeof(*o->attrs));
	if (!o->attrs) {
		o->replayable = 0;
		o->why_not = "out of memory";
		return hash;
	}
	if (op->nattrs)
		memcpy(o->attrs, op->attrs, op->nattrs * sizeof(*o->attrs));
	if (op->cooperative) {
		o->attrs[op->nattrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		o->attrs[op->nattrs].value.cooperative = 1;
	}
	o->nattrs = n;
	for (unsigned i = 0; i < n; i++) {
		if (records_event(o->attrs[i].id)) {
			o->replayable = 0;
			o->why_not = "launch records an event";
		}
		hash = remat_fnv1a(hash, &o->attrs[i].id, sizeof(o->attrs[i].id));
		hash = remat_fnv1a(hash, &o->attrs[i].value, remat_attr_value_size(o->attrs[i].id));
	}
	return hash;
}

CUresult prof_launch_as(const struct prof_op *q, const struct remat_op *o, CUstream st,
                        void **params, void **extra)
{
	if (!q->nattrs)
		return remat_drv.cuLaunchKernel(o->func, o->grid[0], o->grid[1], o->grid[2],
		                                o->block[0], o->block[1], o->block[2], o->shmem, st,
		                                params, extra);
	if (!remat_drv.cuLaunchKernelEx)
		return CUDA_ERROR_NOT_SUPPORTED;
	CUlaunchConfig c = {.gridDimX = o->grid[0],
	                    .gridDimY = o->grid[1],
	                    .gridDimZ = o->grid[2],
	                    .blockDimX = o->block[0],
	                    .blockDimY = o->block[1],
	                    .blockDimZ = o->block[2],
	                    .sharedMemBytes = o->shmem,
	                    .hStream = st,
	                    .attrs = q->attrs,
	                    .numAttrs = q->nattrs};
	return remat_drv.cuLaunchKernelEx(&c, (CUfunction)o->func, params, extra);
}
