/*
 * simnccl_args.h — what one launch of the simulated NCCL's kernel carries
 * in its parameter (ncclDevKernelArgsStorage<4096>, as the real kernels
 * take): the collectives to run, in order, and the host function of
 * libnccl.so.2 that runs them on the stream's worker (exec.c).  Everything
 * fits the 4096 bytes, so a launch captured into a CUDA graph runs again
 * as it was.  Shared by the library (C) and its kernels (kernels.cu).
 */
#ifndef SIMNCCL_ARGS_H
#define SIMNCCL_ARGS_H

#include <stdint.h>

#define SIMNCCL_ARGS_BYTES 4096
#define SIMNCCL_MAGIC      0x4c43434e4d495331ull /* "1SIMNCCL" */

enum simnccl_coll {
	SIMNCCL_ALL_REDUCE,
	SIMNCCL_ALL_GATHER,
	SIMNCCL_REDUCE_SCATTER,
	SIMNCCL_BROADCAST,
	SIMNCCL_REDUCE,
};

/* One collective: device buffers as 8-byte words (what a profiler scanning
 * the parameters for pointers finds). */
struct simnccl_op {
	uint64_t send, recv;
	uint64_t count; /* elements: all-reduce's, all-gather's per rank, ... */
	uint8_t coll, dtype, redop, pad;
	int32_t root;
	uint64_t reserved;
};

struct simnccl_args {
	uint64_t magic;
	void (*run)(const struct simnccl_args *args);
	void *comm; /* struct ncclComm of the launching process */
	uint32_t nops;
	uint32_t pad;
	struct simnccl_op ops[(SIMNCCL_ARGS_BYTES - 32) / sizeof(struct simnccl_op)];
};

#define SIMNCCL_MAX_OPS ((SIMNCCL_ARGS_BYTES - 32) / sizeof(struct simnccl_op))

#endif
