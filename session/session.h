/*
 * session.h — the public face of session/, what the entry points
 * (interpose/) call.  The session alone owns libremat's mode:
 *
 *   OFF      pass-through (no REMAT_* asked for it, a bad value, an
 *            unusable driver, a forked child)
 *   DETECT   looking for the training iteration            (profiler/)
 *   PROFILE  recording one iteration                       (profiler/)
 *   PLAN     run mode, waiting for a plan; iterations are followed (replay/)
 *   RUN      run mode, a plan applied                      (replay/)
 *   DONE     trace written, or no plan for good: unmodified
 *   FAILED   a rebuild failed beyond repair: every op gets its error, as
 *            after a sticky device error
 *
 * and alone writes the two flags every entry point tests first.
 */
#ifndef REMAT_SESSION_H
#define REMAT_SESSION_H

#include <stddef.h>
#include <cuda.h>

#include "../core/op.h"

/* REMAT_* asked for trace or run mode, the driver is usable and this is
 * not a forked child: allocations are ours, and our hooks are handed out. */
extern int remat_session_active;
/* Ops must go through session_op_begin/end (detecting, profiling, run
 * mode, or allocations swapped to the host).  Read unlocked: the
 * pass-through path is one load and a branch. */
extern int remat_session_watch;

/* Lazy init at the first call that needs the driver: 0 when libremat
 * works, -1 when it passes through for good. */
int session_ready(void);

/* Around the real call of every op while remat_session_watch is set.  A
 * result other than CUDA_SUCCESS is the op's: the real call must not be
 * made, nor session_op_end called. */
CUresult session_op_begin(struct remat_op *op);
void session_op_end(struct remat_op *op, CUresult rc);

/* Graphs (interpose/graph.c): an executable graph was instantiated from
 * g, or updated to it; destroyed; or changed one node at a time (it may
 * touch anything from then on). */
void session_graph_instantiated(CUgraphExec exec, CUgraph g);
void session_graph_destroyed(CUgraphExec exec);
void session_graph_changed(CUgraphExec exec);

/* A managed allocation (active only).  CUDA_ERROR_NOT_SUPPORTED: the
 * device cannot be managed, the caller uses the real allocator.  FAILED:
 * the sticky error. */
CUresult session_alloc(CUdeviceptr *p, size_t size, CUstream stream, int async);
/* 1 when p was ours, with the call's result in *rc; 0 when the caller must
 * free it for real.  A synchronous free synchronizes the context first, as
 * the real ones do: during a capture that forbids it, that synchronisation
 * fails (and invalidates the capture) as the real free would, and nothing
 * is freed.  On a capturing stream a free would be a graph's free node,
 * which only frees graph allocations: CUDA_ERROR_INVALID_VALUE. */
int session_free(CUdeviceptr p, CUstream stream, int async, CUresult *rc);

/* The program's own virtual memory calls (alloc.h, "the program's own
 * VMM"): the allocator's answer, CUDA_ERROR_NOT_SUPPORTED when the caller
 * must make the real call.  Changes to what the program maps reach the
 * profiler and replay. */
CUresult session_vmm_reserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long flags);
CUresult session_vmm_address_free(CUdeviceptr p, size_t size);
CUresult session_vmm_create(CUmemGenericAllocationHandle *h, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags);
CUresult session_vmm_release(CUmemGenericAllocationHandle h);
CUresult session_vmm_props(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h);
CUresult session_vmm_retain(CUmemGenericAllocationHandle *h, void *addr);
CUresult session_vmm_map(CUdeviceptr va, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                         unsigned long long flags);
CUresult session_vmm_unmap(CUdeviceptr va, size_t size);
CUresult session_vmm_set_access(CUdeviceptr va, size_t size, const CUmemAccessDesc *desc,
                                size_t count);
/* A handle or reservation of ours exists: calls that may name one come in
 * even while libremat is otherwise idle. */
int session_vmm_live(void);

/* Names learnt when the program looks a function up. */
void session_function_name(void *func, const char *name, int is_kernel);

#endif
