/*
 * internal.h — what the files of profiler/ share among themselves.  All of
 * it runs with the session's lock held unless said otherwise.
 */
#ifndef REMAT_PROFILER_INTERNAL_H
#define REMAT_PROFILER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include "../core/grow.h"
#include "../core/map.h"
#include "../core/search.h"
#include "profiler.h"

/* kernels.c — what we know about a CUfunction / CUkernel. */
struct prof_kinfo {
	void *func;
	char *name;
	int is_kernel; /* 1 CUkernel, 0 CUfunction, -1 unknown */
	int layout_known;
	int queried; /* name and layout asked of the driver */
	size_t nparams;
	uint32_t (*param)[2];
	uint32_t param_bytes;
	int32_t trace_id; /* index in the profile being built, -1 none */
};
struct prof_kinfo *prof_kinfo_get(void *func);
void prof_kinfo_reset_trace_ids(void);

/* live.c — managed allocations as the profiler sees them. */
struct prof_live {
	uint64_t addr, size, rounded;
	int small;
	int32_t trace_id; /* -1 when not in the profile being built */
	int in_trace;     /* the profile holds a reference: freed with it */
	int dead;
	int64_t alloc_at, free_at, alloc_seq;
	char **site;
	size_t nsite;
};
int prof_live_add(struct prof_live *b);
struct prof_live *prof_live_remove(uint64_t addr);
/* The live buffer containing addr, or NULL. */
struct prof_live *prof_live_find(uint64_t addr);
size_t prof_live_count(void);
struct prof_live *prof_live_at(size_t i);
/* Frees b (its stack too). */
void prof_live_free(struct prof_live *b);

/* stack.c — the allocating call stack, innermost first, without
 * libremat's own frames.  Returns strdup'd frames. */
size_t prof_stack_capture(char ***frames);

/* host_copy.c — a copy between the host and the device on libremat's own
 * non-blocking stream (the legacy stream would wait for every blocking
 * stream, a collective in flight included), complete when it returns.
 * init: at a profile's start (the stream, once). */
void prof_host_copy_init(void);
CUresult prof_host_copy(void *host, uint64_t dev, size_t size, int to_host);
/* Room `which` (0 or 1) for one op's host copies, at least n bytes
 * (content not kept; the other room's is): page-locked while it fits in
 * PROF_PINNED_MAX, so the copies run at the copy engines' rate, not staged
 * through pageable memory.  NULL when out of host memory.  free: both, at
 * the profile's end. */
#define PROF_PINNED_MAX ((size_t)1 << 30)
uint8_t *prof_host_room(int which, size_t n);
void prof_host_room_free(void);
/* Says how many copies the profile made and how many second launches its
 * proofs (REMAT_LOG=1), and starts over. */
void prof_host_copy_report(unsigned long long launches);

/* copy_rate.c: the cost of a copy inside device memory, fixed ns per copy
 * and bytes per µs; both 0 when it could not be measured. */
void prof_copy_rate(int64_t *fixed_ns, int64_t *bytes_per_us);

/* delta.c — which buffers each op of the profiled iteration wrote, what it
 * changed in them byte by byte (not in buffers packed small: only whether
 * they changed), and whether its writes were proven blind (independent of
 * the prior content of what it changed).  Offsets are into the buffer. */
struct prof_change {
	int32_t buf;
	uint64_t lo, hi;
	int blind; /* the op's writes to this buffer are proven blind: these are
	              every byte it writes there */
};
int prof_delta_begin(size_t nops);
void prof_delta_drop(void);
/* proof_guard.c: a proof's second launch that never returns.  begin: at
 * the profile's start; 1 when a run of this program died inside one (the
 * proofs stay off).  enter/leave around each second launch; wait: until
 * it is done, saying so when it takes long. */
int prof_guard_begin(void);
void prof_guard_enter(size_t op, const char *kernel);
void prof_guard_leave(void);
CUresult prof_guard_wait(CUstream stream, size_t op, const char *kernel);

/* Kernels and graph launches: host copies of the referenced buffers before
 * op k; after it, the buffers it wrote among o's writes (every one it
 * references when the copies failed) and, for a kernel, its changes and
 * the proofs (a second launch of op, results put back).  Both return the
 * host copies they made (before the proofs): CUPTI reports them under the
 * op's call. */
uint32_t prof_delta_before(size_t k, const struct prof_op *o, struct prof_live *const *pb);
uint32_t prof_delta_after(size_t k, struct prof_op *o, const struct remat_op *op,
                          struct prof_live *const *pb);
/* Copies and sets: the exact range written (write) or read. */
void prof_delta_range(size_t k, int32_t buf, uint64_t lo, uint64_t hi, int write);
/* Changes of op k, ordered by buffer and offset; *blind: -1 unknown (no
 * changes), else known. */
const struct prof_change *prof_delta_changes(size_t k, uint32_t *n, int *blind);
const struct prof_change *prof_delta_source(size_t k, uint32_t *n);
/* The pointer a kernel's write at offset off of buf went through: the
 * nearest of its references into buf at or below off (its index in
 * *ref), as an offset; -1 when none. */
int64_t prof_delta_via(const struct prof_op *o, int32_t buf, uint64_t off, size_t *ref);
/* The op's lowest pointer into buf above offset off, or end: where what
 * went through the pointer at off stops (a change, a read's reach). */
uint64_t prof_delta_next_ref(const struct prof_op *o, int32_t buf, uint64_t off, uint64_t end);

/* The ranges op k's proof of unread bytes showed it does not read (its
 * output does not depend on them), each {buf, lo, hi}; none when that
 * proof was not run or failed. */
const struct prof_change *prof_delta_unread(size_t k, uint32_t *n);

/* unread.c — where the proof of unread bytes looks: the offsets seen so
 * far in the profile where a region may end (pointers, copies, sets, ends
 * of blind writes), and from them, for each pointer of a kernel into an
 * allocation live since before the iteration, the bytes from the first
 * such offset above the pointer and past what the kernel changed through
 * it (chg) up to its next pointer there; returns how many (*out: malloc'd,
 * or NULL). */
void prof_unread_reset(void);
void prof_unread_cut(int32_t buf, uint64_t off);
/* The n device addresses at[i][0] where the iteration's pointers, copies
 * and sets begin (and at[i][1] bytes later, where a copy or set ends), as
 * the iteration before showed them: cuts in the allocations they fall in. */
void prof_unread_expect(const uint64_t (*at)[2], size_t n);
/* The cuts of buf strictly between lo and hi, ascending, at *at. */
uint32_t prof_unread_cuts_in(int32_t buf, uint64_t lo, uint64_t hi, const uint64_t **at);
uint32_t prof_unread_ranges(const struct prof_op *o, struct prof_live *const *pb,
                            const struct prof_change *chg, uint32_t nchg, struct prof_change **out);

/* regions.c — at the end of the profile: long-lived allocations split
 * into regions, each a buffer; every op's references, reads, writes and
 * partial writes per buffer from the changes above; buffers dead across
 * the boundary.  0, or -1 when out of memory (the profile is unusable). */
int prof_regions(struct remat_profile *p);

/* cupti.c — correlation ids and durations. */
struct prof_cupti_tls {
	uint32_t driver_corr;  /* last launch/copy/set driver call entered */
	uint32_t runtime_corr; /* outermost runtime call in progress, 0 none */
	const char *runtime_name;
	int rt_depth;
	/* The subscription the three above belong to: CUPTI stopped inside a
	 * runtime call never reports its exit, and a depth left from then
	 * would hide every later call's id (cupti.c, fresh). */
	uint32_t gen;
	int internal;         /* our own launches: their records are not the app's */
	uint32_t swap_copies; /* prof_swap_copies: for the op about to be issued */
};
extern __thread struct prof_cupti_tls prof_cupti_tls __attribute__((tls_model("initial-exec")));
/* The outermost runtime call this thread is in, as the current
 * subscription saw it (0: none, or one entered before it began). */
uint32_t prof_cupti_runtime_corr(void);
struct prof_activity {
	uint32_t corr;
	int kind; /* 0 kernel, 1 memcpy, 2 memset */
	uint64_t start;
	int64_t duration_ns;
};
/* 0 when CUPTI is subscribed and recording; -1 with a reason in note. */
int prof_cupti_start(const char **note);
/* Flushes, stops, and hands back every record since start (caller frees). */
size_t prof_cupti_collect(struct prof_activity **out);
/* durations.c: the ops' durations from the records since start, matched
 * by the ops' correlation ids (corr_min..corr_max), and CUPTI's kernel
 * count against the launches (p's cupti_* members). */
void prof_durations(struct remat_profile *p, uint32_t corr_min, uint32_t corr_max);
int prof_cupti_is_internal(uint32_t corr);
/* A runtime API name without its _vNNNN suffix, interned. */
const char *prof_intern(const char *s);

/* The swap copies prof_swap_copies noted on this thread (reset by the
 * call): CUPTI may report them under the op's runtime call. */
uint32_t prof_swap_copies_take(void);

/* attrs.c — a kernel launch's attributes, kept with its op (replay/ launches
 * it again with them).  An attribute that records an event makes the op
 * one a replay must not repeat.  Returns the graph-hash words of them. */
uint64_t prof_attrs_record(struct prof_op *o, const struct remat_op *op, uint64_t hash);

/* collective.c — collectives (NCCL kernels) in the profiled iteration. */
int prof_collective_name(const char *name);
/* A collective was issued on s: in flight until the stream gets past it. */
void prof_collective_issued(CUstream s);
/* 1 while a collective issued in the profile may still be running. */
int prof_collective_in_flight(void);
/* What the profile waits for around an op on stream s: the whole context,
 * or only s while a collective is in flight. */
void prof_sync(CUstream s);
/* At the profile's ends: the collectives by their events, then the context. */
void prof_sync_all(void);

/* profile.c — recording one iteration (detect.c drives it). */
int prof_profile_begin(uint64_t start_op, size_t period, size_t iteration, int cupti_ok,
                       const char *cupti_note);
/* A buffer allocated just before the first op, after the low point: it
 * belongs to the iteration (alloc_at 0). */
void prof_profile_adopt(struct prof_live *b);
void prof_profile_op_before(struct remat_op *op, uint64_t k);
void prof_profile_op_after(struct remat_op *op, uint64_t k, CUresult rc);
/* Buffer id among op o's writes (once). */
void prof_op_wrote(struct prof_op *o, int32_t id);
void prof_profile_alloc(struct prof_live *b, uint64_t k);
void prof_profile_free(struct prof_live *b, uint64_t k);
/* The iteration is over: durations from CUPTI, buffers, memory figures;
 * the profile with one holder, or NULL when out of memory. */
struct remat_profile *prof_profile_end(int cupti_ok, int64_t level0);
void prof_profile_drop(void);
/* release.c: what a profile owns (not the structure itself). */
void prof_profile_release(struct remat_profile *t);

#endif
