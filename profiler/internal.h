/*
 * internal.h — what the files of profiler/ share among themselves.  All of
 * it runs under the profiler lock (record.c) unless said otherwise.
 */
#ifndef REMAT_PROFILER_INTERNAL_H
#define REMAT_PROFILER_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include "profiler.h"

/* kernels.c — what we know about a CUfunction / CUkernel. */
struct remat_kinfo {
	void *func;
	char *name;
	int is_kernel; /* 1 CUkernel, 0 CUfunction, -1 unknown */
	int layout_known;
	int queried; /* name and layout asked of the driver */
	size_t nparams;
	uint32_t (*param)[2];
	uint32_t param_bytes;
	int32_t trace_id; /* index in the trace being built, -1 none */
};
struct remat_kinfo *remat_kinfo_get(void *func);
void remat_kinfo_name(void *func, const char *name, int is_kernel);
void remat_kinfo_reset_trace_ids(void);

/* live.c — managed allocations as the profiler sees them. */
struct remat_pbuf {
	uint64_t addr, size, rounded;
	int small;
	int32_t trace_id; /* -1 when not in the trace being built */
	int in_trace;     /* the trace holds a reference: freed with it */
	int dead;
	int64_t alloc_at, free_at, alloc_seq;
	char **site;
	size_t nsite;
};
int remat_live_add(struct remat_pbuf *b);
struct remat_pbuf *remat_live_remove(uint64_t addr);
/* The live buffer containing addr, or NULL. */
struct remat_pbuf *remat_live_find(uint64_t addr);
size_t remat_live_count(void);
struct remat_pbuf *remat_live_at(size_t i);

/* stack.c — the allocating call stack, innermost first, without
 * libremat's own frames.  Returns strdup'd frames. */
size_t remat_stack_capture(char ***frames);

/* writeset.c — content hash of a device range (context synchronized by
 * the caller). */
void remat_ws_init(void);
uint64_t remat_ws_hash(uint64_t addr, uint64_t size);
/* Hashing kernels launched so far (device path): CUPTI reports them under
 * the app's runtime call when hashing runs inside it. */
extern uint64_t remat_ws_launches;

/* cupti.c — correlation ids and durations. */
struct remat_cupti_tls {
	uint32_t driver_corr;  /* last launch/copy/set driver call entered */
	uint32_t runtime_corr; /* outermost runtime call in progress, 0 none */
	const char *runtime_name;
	int rt_depth;
	int internal; /* our own launches: their records are not the app's */
};
extern __thread struct remat_cupti_tls remat_cupti_tls __attribute__((tls_model("initial-exec")));
struct remat_activity {
	uint32_t corr;
	int kind; /* 0 kernel, 1 memcpy, 2 memset */
	uint64_t start;
	int64_t duration_ns;
};
/* 0 when CUPTI is subscribed and recording; -1 with a reason in note. */
int remat_cupti_start(const char **note);
/* Flushes, stops, and hands back every record since start (caller frees). */
size_t remat_cupti_collect(struct remat_activity **out);
int remat_cupti_is_internal(uint32_t corr);
/* A runtime API name without its _vNNNN suffix, interned. */
const char *remat_intern(const char *s);

/* swapcheck.c — before every op once the allocator has swapped (run mode):
 * brings back what the op touches; lock is the profiler's (kernel layouts).
 * remat_swap_release unpins it once the op is issued. */
void remat_swap_check(const struct remat_op *op, pthread_mutex_t *lock);
void remat_swap_release(void);
/* Swap copies the last check on this thread issued (reset by the call):
 * CUPTI may report them under the op's runtime call. */
uint32_t remat_swap_copies_take(void);

#endif
