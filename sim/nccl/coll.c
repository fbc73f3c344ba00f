/*
 * coll.c — the collectives and group calls.  Outside a group each
 * collective is one launch on its stream; between ncclGroupStart and
 * ncclGroupEnd they are kept and launched at the end, one launch per
 * communicator holding all of its collectives in order (the kernel named
 * for their kind, or the generic one), on the stream of its first; the
 * other streams of the group are joined to that launch with events both
 * ways, as NCCL orders a group's streams.
 */
#include "nccl_int.h"

#include <stdlib.h>
#include <string.h>

struct pending {
	struct ncclComm *comm;
	CUstream stream;
	struct simnccl_op op;
};

static __thread int depth;
static __thread struct pending *group;
static __thread size_t ngroup, capgroup;

/* Waits of `to` for `from` (a group's other stream and its launch). */
static void join(CUstream to, CUstream from)
{
	CUevent e;
	if (nccl_drv.event_create(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		return;
	nccl_drv.event_record(e, from);
	nccl_drv.stream_wait_event(to, e, 0);
	nccl_drv.event_destroy(e);
}

static ncclResult_t launch(struct ncclComm *comm, CUstream stream, const struct simnccl_op *ops,
                           unsigned n)
{
	struct simnccl_args a;
	memset(&a, 0, sizeof(a));
	a.magic = SIMNCCL_MAGIC;
	a.run = nccl_run;
	a.comm = comm;
	a.nops = n;
	memcpy(a.ops, ops, n * sizeof(*ops));
	/* As NCCL launches (cuLaunchKernelEx): the remote memory
	 * synchronization domain, so the collective's traffic is not fenced
	 * with the compute kernels'. */
	CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN};
	attr.value.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
	CUlaunchConfig cfg = {.gridDimX = 1,
	                      .gridDimY = 1,
	                      .gridDimZ = 1,
	                      .blockDimX = 64,
	                      .blockDimY = 1,
	                      .blockDimZ = 1,
	                      .hStream = stream,
	                      .attrs = &attr,
	                      .numAttrs = 1};
	void *params[] = {&a};
	CUresult r = nccl_drv.launch_kernel_ex(&cfg, nccl_kernel(ops, n), params, NULL);
	if (r != CUDA_SUCCESS) {
		nccl_set_error("kernel launch failed (CUDA error %d)", (int)r);
		return ncclUnhandledCudaError;
	}
	return ncclSuccess;
}

/* The group's collectives of one communicator, from index `first` on (the
 * others of that communicator are taken out). */
static ncclResult_t launch_comm(size_t first)
{
	struct ncclComm *comm = group[first].comm;
	CUstream s = group[first].stream;
	struct simnccl_op *ops = malloc(ngroup * sizeof(*ops));
	if (ops == NULL)
		return ncclSystemError;
	size_t n = 0, keep = first;
	for (size_t i = first; i < ngroup; i++) {
		if (group[i].comm != comm) {
			group[keep++] = group[i];
			continue;
		}
		if (group[i].stream != s)
			join(s, group[i].stream);
		ops[n++] = group[i].op;
	}
	ncclResult_t r = ncclSuccess;
	for (size_t at = 0; at < n && r == ncclSuccess; at += SIMNCCL_MAX_OPS) {
		size_t k = n - at < SIMNCCL_MAX_OPS ? n - at : SIMNCCL_MAX_OPS;
		r = launch(comm, s, ops + at, (unsigned)k);
	}
	/* The other streams go on after the launch. */
	for (size_t i = first; i < ngroup && r == ncclSuccess; i++)
		if (group[i].comm == comm && group[i].stream != s)
			join(group[i].stream, s);
	ngroup = keep;
	free(ops);
	return r;
}

ncclResult_t nccl_enqueue(struct ncclComm *comm, CUstream stream, struct simnccl_op op)
{
	if (comm == NULL) {
		nccl_set_error("NULL communicator");
		return ncclInvalidArgument;
	}
	if (!nccl_type_size(op.dtype)) {
		nccl_set_error("data type %d is not simulated (16- and 8-bit floats)", op.dtype);
		return ncclInvalidArgument;
	}
	if (op.redop > ncclAvg) {
		nccl_set_error("reduction %d is not simulated", op.redop);
		return ncclInvalidArgument;
	}
	if (op.root < 0 || op.root >= comm->nranks) {
		nccl_set_error("root %d of %d ranks", op.root, comm->nranks);
		return ncclInvalidArgument;
	}
	if (op.count == 0)
		return ncclSuccess;
	if (!op.send || !op.recv) {
		nccl_set_error("NULL buffer");
		return ncclInvalidArgument;
	}
	if (depth == 0)
		return launch(comm, stream, &op, 1);
	if (ngroup == capgroup) {
		size_t c = capgroup ? capgroup * 2 : 64;
		struct pending *g = realloc(group, c * sizeof(*g));
		if (g == NULL)
			return ncclSystemError;
		group = g;
		capgroup = c;
	}
	group[ngroup++] = (struct pending){comm, stream, op};
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclGroupStart, void)
{
	depth++;
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclGroupEnd, void)
{
	if (depth == 0) {
		nccl_set_error("ncclGroupEnd without ncclGroupStart");
		return ncclInvalidUsage;
	}
	if (--depth)
		return ncclSuccess;
	ncclResult_t r = ncclSuccess;
	while (ngroup && r == ncclSuccess)
		r = launch_comm(0);
	ngroup = 0;
	return r;
}

static struct simnccl_op op_of(int coll, const void *send, void *recv, size_t count,
                               ncclDataType_t type, ncclRedOp_t redop, int root)
{
	return (struct simnccl_op){.send = (uint64_t)(uintptr_t)send,
	                           .recv = (uint64_t)(uintptr_t)recv,
	                           .count = count,
	                           .coll = (uint8_t)coll,
	                           .dtype = (uint8_t)type,
	                           .redop = (uint8_t)redop,
	                           .root = root};
}

NCCL_API(ncclResult_t, ncclAllReduce, const void *sendbuff, void *recvbuff, size_t count,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	return nccl_enqueue(comm, (CUstream)stream,
	                    op_of(SIMNCCL_ALL_REDUCE, sendbuff, recvbuff, count, datatype, op, 0));
}

NCCL_API(ncclResult_t, ncclReduce, const void *sendbuff, void *recvbuff, size_t count,
         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
	/* Only the root's receive buffer is used (and must be given). */
	if (comm && comm->rank != root && recvbuff == NULL)
		recvbuff = (void *)sendbuff;
	return nccl_enqueue(comm, (CUstream)stream,
	                    op_of(SIMNCCL_REDUCE, sendbuff, recvbuff, count, datatype, op, root));
}

NCCL_API(ncclResult_t, ncclAllGather, const void *sendbuff, void *recvbuff, size_t sendcount,
         ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	return nccl_enqueue(
	    comm, (CUstream)stream,
	    op_of(SIMNCCL_ALL_GATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0));
}

NCCL_API(ncclResult_t, ncclReduceScatter, const void *sendbuff, void *recvbuff, size_t recvcount,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	return nccl_enqueue(
	    comm, (CUstream)stream,
	    op_of(SIMNCCL_REDUCE_SCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0));
}

NCCL_API(ncclResult_t, ncclBroadcast, const void *sendbuff, void *recvbuff, size_t count,
         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
	/* Only the root's send buffer is read. */
	if (comm && comm->rank != root && sendbuff == NULL)
		sendbuff = recvbuff;
	return nccl_enqueue(
	    comm, (CUstream)stream,
	    op_of(SIMNCCL_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root));
}

NCCL_API(ncclResult_t, ncclBcast, void *buff, size_t count, ncclDataType_t datatype, int root,
         ncclComm_t comm, cudaStream_t stream)
{
	return pncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}
