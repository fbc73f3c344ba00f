/*
 * nccl_int.h — internals of the simulated NCCL (build/simcuda/libnccl.so.2).
 *
 * Like the real library it has no link to libcuda: it dlopen()s
 * "libcuda.so.1" and takes every driver function from cuGetProcAddress, so
 * anything that interposes the driver (libremat) sees its launches.  A
 * communicator joins its ranks — processes of one machine — through a
 * POSIX shared-memory segment named by the unique id; each collective is
 * one kernel launch on the caller's stream (cuLaunchKernelEx with the
 * remote memory-synchronization domain, as NCCL launches), named as the
 * real library names its kernels, that runs on the stream's worker and
 * exchanges the data through the segment in chunks, with a barrier of all
 * ranks around each.  Reductions run in rank order, so every rank gets the
 * same bits.  Every name the real library exports is present, the nccl*
 * ones weak aliases of pnccl* (for profilers to interpose), as there.
 */
#ifndef SIMCUDA_NCCL_INT_H
#define SIMCUDA_NCCL_INT_H

#include <cuda.h>
#include <nccl.h>
#include <stdatomic.h>
#include <stdint.h>

#include "simnccl_args.h"

/* The p-named definition of an entry point and its weak n-named alias. */
#define NCCL_API(ret, name, ...)                                                                   \
	__attribute__((visibility("default"))) ret p##name(__VA_ARGS__);                           \
	__attribute__((visibility("default"), weak, alias("p" #name))) ret name(__VA_ARGS__);      \
	ret p##name(__VA_ARGS__)

/* ---- driver.c ------------------------------------------------------------- */
struct nccl_driver {
	__typeof__(cuInit) *init;
	__typeof__(cuCtxGetCurrent) *ctx_get_current;
	__typeof__(cuCtxGetDevice) *ctx_get_device;
	__typeof__(cuModuleLoadData) *module_load_data;
	__typeof__(cuModuleGetFunction) *module_get_function;
	__typeof__(cuLaunchKernelEx) *launch_kernel_ex;
	__typeof__(cuEventCreate) *event_create;
	__typeof__(cuEventRecord) *event_record;
	__typeof__(cuEventDestroy) *event_destroy;
	__typeof__(cuStreamWaitEvent) *stream_wait_event;
};
extern struct nccl_driver nccl_drv __attribute__((visibility("hidden")));
/* Reaches the driver and loads the kernels, once; needs a current context. */
ncclResult_t nccl_setup(void) __attribute__((visibility("hidden")));
/* The kernel for ops[0..n): its real name's. */
CUfunction nccl_kernel(const struct simnccl_op *ops, unsigned n)
    __attribute__((visibility("hidden")));

/* ---- comm.c --------------------------------------------------------------- */
#define SIMNCCL_CHUNK (1u << 20) /* bytes per rank and round */

/* The shared segment: a header, then one chunk-sized slot per rank. */
struct simnccl_shm {
	uint64_t magic;
	int32_t nranks;
	_Atomic int32_t joined;
	_Atomic uint64_t arrived; /* every barrier adds nranks */
	_Atomic int32_t aborted;  /* a rank called ncclCommAbort */
	char pad[4096 - 32];
};

struct ncclComm {
	int rank, nranks, device;
	struct simnccl_shm *shm;
	size_t shm_bytes;
	uint64_t barriers; /* barriers this rank passed */
	int destroyed;
};

/* The rank's slot in the segment. */
static inline unsigned char *nccl_slot(const struct ncclComm *c, int rank)
{
	return (unsigned char *)c->shm + sizeof(struct simnccl_shm) + (size_t)rank * SIMNCCL_CHUNK;
}
/* Waits until every rank reached its barrier of the same number. */
void nccl_barrier(struct ncclComm *c) __attribute__((visibility("hidden")));

/* ---- exec.c: on the stream's worker ------------------------------------------ */
void nccl_run(const struct simnccl_args *args) __attribute__((visibility("hidden")));
size_t nccl_type_size(ncclDataType_t t) __attribute__((visibility("hidden")));

/* ---- coll.c ----------------------------------------------------------------- */
/* Checks and queues (or, outside a group, launches) one collective. */
ncclResult_t nccl_enqueue(struct ncclComm *comm, CUstream stream, struct simnccl_op op)
    __attribute__((visibility("hidden")));

/* ---- misc.c ----------------------------------------------------------------- */
/* The message ncclGetLastError returns. */
void nccl_set_error(const char *fmt, ...)
    __attribute__((visibility("hidden"), format(printf, 1, 2)));

#endif
