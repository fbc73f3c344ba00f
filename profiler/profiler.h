/*
 * profiler.h — the public face of profiler/: what interpose/ tells it about
 * each op and allocation, and what it makes of them (iteration detection,
 * one profiled iteration, the trace).
 */
#ifndef REMAT_PROFILER_H
#define REMAT_PROFILER_H

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

/* One op as an interposed entry point sees it, on the caller's stack. */
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
	long slot;         /* profiler: index in the profiled iteration, -1 = not recorded */
};

/* Around the real call of every op while remat_tracking is set. */
void remat_prof_begin(struct remat_op *op);
void remat_prof_end(struct remat_op *op, CUresult rc);

/* Managed allocations, as the allocator hands them out and takes them back. */
void remat_prof_alloc(CUdeviceptr p, size_t size, size_t rounded, int small);
void remat_prof_free(CUdeviceptr p);

/* Names learnt when the program looks a function up. */
void remat_prof_function_name(void *func, const char *name, int is_kernel);

/* The write path of the profile (a background thread); joined at exit. */
void remat_prof_shutdown(void);

#endif
