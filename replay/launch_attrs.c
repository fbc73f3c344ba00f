/*
 * launch_attrs.c — an op matches the profile's only with the same launch
 * attributes: those it gave cuLaunchKernelEx (a cluster shape, a
 * cooperative grid, a priority, ...) or the cooperative entry point's.
 * A replay launches the kernel with them (prof_launch_as, profiler/attrs.c).
 */
#include <string.h>

#include "internal.h"

/* The attributes a launch was issued with, as the profiler recorded them
 * (a cooperative entry point counts as COOPERATIVE = 1). */
static int attr_same(const CUlaunchAttribute *a, CUlaunchAttributeID id,
                     const CUlaunchAttributeValue *v)
{
	return a->id == id && !memcmp(&a->value, v, remat_attr_value_size(id));
}

int replay_attrs_same(const struct prof_op *q, const struct remat_op *op)
{
	unsigned n = op->nattrs + (op->cooperative ? 1 : 0);
	if (n != q->nattrs)
		return 0;
	for (unsigned i = 0; i < op->nattrs; i++)
		if (!attr_same(&q->attrs[i], op->attrs[i].id, &op->attrs[i].value))
			return 0;
	if (op->cooperative) {
		CUlaunchAttributeValue v = {.cooperative = 1};
		return attr_same(&q->attrs[op->nattrs], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v);
	}
	return 1;
}
