/*
 * op.h — one op (a launch, copy, memset or graph launch) as an interposed
 * entry point sees it, on the caller's stack: what the entry points hand
 * to the session, and the session to the profiler or to replay.
 */
#ifndef REMAT_CORE_OP_H
#define REMAT_CORE_OP_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

enum remat_op_kind {
	REMAT_OP_KERNEL,
	REMAT_OP_MEMCPY,
	REMAT_OP_MEMSET,
	REMAT_OP_HOST_FUNC,
	REMAT_OP_GRAPH
};
enum remat_copy_kind {
	REMAT_COPY_HTOD,
	REMAT_COPY_DTOH,
	REMAT_COPY_DTOD,
	REMAT_COPY_HTOH,
	REMAT_COPY_INFER
};

/* What a graph launch may touch, read from the executable graph's nodes
 * when it was instantiated (profiler/graphs.c): every 8-byte word of its
 * kernels' parameters as [w, w+1), and the device ranges of its copies and
 * sets.  Opaque: a node could not be read, the graph may touch anything. */
struct remat_graph_refs {
	uint64_t (*range)[2];
	size_t n;
	int opaque;
	uint32_t kernels; /* kernel nodes: launches CUPTI will report for it */
	int collective;   /* a kernel node is a collective (NCCL captured in the graph) */
};

struct remat_op {
	enum remat_op_kind kind;
	const char *via; /* the entry point that issued it */
	void *func;      /* CUfunction or CUkernel */
	unsigned grid[3], block[3], shmem;
	CUstream stream;
	void **params, **extra;
	uint64_t dst, src; /* memcpy/memset: addresses (device or host) */
	size_t bytes;      /* memcpy/memset: bytes */
	int copy;          /* enum remat_copy_kind */
	unsigned value;    /* memset value */
	unsigned elem;     /* memset element size */
	/* graph launch: what its nodes touch (set by the session), NULL unknown */
	const struct remat_graph_refs *graph;
	/* kernel: cuLaunchKernelEx's attributes, or a cooperative entry point */
	const CUlaunchAttribute *attrs;
	unsigned nattrs;
	int cooperative;
	/* Set by the session's op_begin for its op_end (session/). */
	int end;
	int32_t pos; /* the op's position in the iteration, when known */
};

/* The bytes of a launch attribute's value that mean something (the rest
 * of the union is whatever the caller's memory held): what is compared,
 * hashed and replayed. */
static inline size_t remat_attr_value_size(CUlaunchAttributeID id)
{
	CUlaunchAttributeValue v;
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		return sizeof(v.accessPolicyWindow);
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
		return sizeof(v.clusterDim);
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
		return sizeof(v.programmaticEvent);
	case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
		return sizeof(v.launchCompletionEvent);
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		return sizeof(v.memSyncDomainMap);
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
		return 0;
	default: /* one int or enum: cooperative, priority, policies, ... */
		return sizeof(int);
	}
}

/* The parameter buffer of a launch that passed its parameters packed in
 * `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE), or NULL. */
static inline const uint8_t *remat_op_extra_params(const struct remat_op *op, size_t *size)
{
	const uint8_t *buf = NULL;
	*size = 0;
	for (void **e = op->extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
		if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = e[1];
		else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1])
			*size = *(size_t *)e[1];
	}
	return buf;
}

#endif
