/*
 * detect.c — from the stream of ops to one profiled iteration:
 *
 *   detecting  every op's signature goes to the iteration detector
 *              (iteration.c); once two consecutive iterations match and
 *              the warm-up has passed, CUPTI is started at one boundary and
 *              the profile at the next
 *   profiling  one iteration is recorded in full (profile.c).  Each op
 *              must repeat the op one period earlier, so the profiled
 *              iteration is the third in a row to match; a mismatch drops
 *              the profile and detection goes on (an odd iteration:
 *              evaluation, checkpointing, the last one of the run)
 *
 * and the live managed allocations, which every profile starts from.  The
 * session (session/) calls in with its lock held and decides what happens
 * once the profile is complete.
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../core/capture.h"
#include "../core/config.h"
#include "../core/log.h"
#include "internal.h"
#include "iteration.h"

#define MAX_DETECT_OPS (1u << 21)

static struct remat_detector det;
static int det_ready;
static int detecting = 1; /* ops come here (until the profile is handed over) */
static int profiling;     /* the profile is being recorded */
static uint64_t nops;     /* ops seen so far: the index of the next one */
static int64_t level;     /* requested bytes of live managed allocations */
static int cupti_started; /* CUPTI was started for the next profile */
static int cupti_ok;
static const char *cupti_note = "";
static uint64_t prof_start;  /* index of the profile's op 0 */
static size_t prof_ops;      /* the period being profiled */
static size_t last_period;   /* for the debug log */
static int64_t prof_level0;  /* level when the profiled iteration began */
static uint64_t complete_at; /* index of the op after the profiled iteration */
/* The gap since the last op: its lowest level, when that was last reached
 * (counted in alloc/free events), and what was allocated in it.
 * Allocations after the low point belong to the iteration that starts at
 * the next op. */
static int64_t gap_min;
static uint64_t events, gap_min_event;
#define GAP_MAX 256
static struct {
	struct prof_live *b;
	uint64_t event;
} gap_alloc[GAP_MAX];
static int ngap;

static uint64_t op_signature(const struct remat_op *op)
{
	uint64_t v[12] = {(uint64_t)op->kind,
	                  (uint64_t)(uintptr_t)op->func,
	                  op->grid[0],
	                  op->grid[1],
	                  op->grid[2],
	                  op->block[0],
	                  op->block[1],
	                  op->block[2],
	                  op->shmem,
	                  (uint64_t)(uintptr_t)op->stream,
	                  op->kind == REMAT_OP_KERNEL ? 0 : op->bytes,
	                  (uint64_t)op->copy};
	/* Word-wise mixing: this runs for every op while detecting, and a
	 * byte-wise FNV over 96 bytes is a chain of 96 dependent multiplies. */
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		h = (h ^ v[k]) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 29;
	}
	return h;
}

static enum prof_step give_up(const char *why)
{
	remat_log(REMAT_LOG_ERROR, "%s; tracing stops, training continues unmodified", why);
	detecting = profiling = 0;
	return PROF_GIVE_UP;
}

static void abort_profile(const char *why, uint64_t i)
{
	remat_log(REMAT_LOG_INFO, "op %llu: %s; profile dropped, looking for the iteration again",
	          (unsigned long long)i, why);
	prof_profile_drop();
	profiling = 0;
	cupti_started = 0;
}

static void gap_reset(void)
{
	gap_min = level;
	gap_min_event = events;
	ngap = 0;
}

/* 0, or -1 when the profile cannot be started (out of memory). */
static int maybe_start(uint64_t i)
{
	if (!remat_det_steady(&det))
		return 0;
	int boundary = remat_det_is_boundary(&det, i);
	size_t it = remat_det_iteration_index(&det, i);
	if (!cupti_started) {
		/* Subscribe before the boundary the profile will start at (the
		 * runtime call of its first op must be entered with the callbacks
		 * on), and no earlier: CUPTI costs something on every API call. */
		size_t next = i < det.phase ? 0 : it + 1; /* index of the next boundary */
		if ((int64_t)next < remat_cfg.warmup)
			return 0;
		cupti_ok = prof_cupti_start(&cupti_note) == 0;
		if (!cupti_ok)
			remat_log(REMAT_LOG_ERROR, "no kernel durations: %s", cupti_note);
		cupti_started = 1;
		return 0;
	}
	if (!boundary || (int64_t)it < remat_cfg.warmup)
		return 0;
	remat_log(REMAT_LOG_INFO,
	          "iteration found: %zu ops (boundary at op %llu); profiling iteration %zu",
	          det.period, (unsigned long long)i, it);
	if (prof_profile_begin(i, det.period, it, cupti_ok, cupti_note))
		return -1;
	for (int g = 0; g < ngap; g++)
		if (gap_alloc[g].event > gap_min_event)
			prof_profile_adopt(gap_alloc[g].b);
	profiling = 1;
	prof_start = i;
	prof_ops = det.period;
	prof_level0 = level;
	return 0;
}

enum prof_step prof_op(struct remat_op *op)
{
	if (!detecting)
		return PROF_DETECTING;
	if (!det_ready) {
		remat_det_init(&det, MAX_DETECT_OPS);
		det_ready = 1;
	}
	uint64_t i = nops++;
	int copy = op->kind != REMAT_OP_MEMCPY   ? REMAT_DET_OTHER
	           : op->copy == REMAT_COPY_DTOH ? REMAT_DET_TO_HOST
	           : op->copy == REMAT_COPY_HTOD ? REMAT_DET_FROM_HOST
	                                         : REMAT_DET_OTHER;
	if (remat_det_push(&det, op_signature(op), level, gap_min, copy) < 0)
		return give_up("no training iteration found in the first 2M ops");
	if (det.period != last_period) {
		remat_log(REMAT_LOG_DEBUG, "op %llu: period %zu (was %zu), boundary phase %zu",
		          (unsigned long long)i, det.period, last_period, det.phase);
		last_period = det.period;
	}
	if (__builtin_expect(__atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_RELAXED), 0) &&
	    remat_det_steady(&det) && remat_det_is_boundary(&det, i))
		remat_alloc_swap_report((long long)remat_det_iteration_index(&det, i) - 1);
	/* The profile synchronizes and copies around every op: a capture in
	 * progress forbids that (and is no steady iteration anyway). */
	int capturing = __atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE) != 0;
	if (profiling && capturing)
		abort_profile("a stream capture began during the profiled iteration", i);
	if (!profiling && !capturing && maybe_start(i))
		return give_up("out of memory for the profile");
	/* A new gap begins after this op. */
	gap_reset();
	if (!profiling)
		return PROF_DETECTING;
	uint64_t k = i - prof_start;
	if (det.period != prof_ops) {
		abort_profile("the op differs from one iteration earlier", i);
		return PROF_DETECTING;
	}
	if (k == prof_ops) {
		/* The next iteration has begun: the profile is complete. */
		complete_at = i;
		return PROF_COMPLETE;
	}
	op->pos = (int32_t)k;
	prof_profile_op_before(op, k);
	return PROF_RECORD;
}

void prof_reshaped(void)
{
	if (profiling)
		abort_profile("the program changed the memory it maps itself", nops);
}

void prof_op_after(struct remat_op *op, CUresult rc)
{
	prof_profile_op_after(op, (uint64_t)op->pos, rc);
}

size_t prof_period(void)
{
	return prof_ops;
}

struct remat_profile *prof_finish(int64_t *first_iter)
{
	struct remat_profile *p = prof_profile_end(cupti_ok, prof_level0);
	*first_iter = (int64_t)remat_det_iteration_index(&det, complete_at);
	detecting = profiling = 0;
	return p;
}

void prof_restart(void)
{
	if (det_ready)
		remat_det_fini(&det);
	remat_det_init(&det, MAX_DETECT_OPS);
	det_ready = 1;
	nops = 0; /* op indices are the detector's */
	detecting = 1;
	profiling = 0;
	cupti_started = 0;
	last_period = 0;
	gap_reset();
}

void prof_shutdown(void)
{
	if (detecting && nops)
		remat_log(REMAT_LOG_ERROR,
		          "process ends before a steady iteration was profiled "
		          "(%llu ops seen); no trace written",
		          (unsigned long long)nops);
}

void prof_alloc(CUdeviceptr p, size_t size, size_t rounded, int small, int stack)
{
	struct prof_live *b = calloc(1, sizeof(*b));
	if (!b) {
		if (detecting)
			give_up("out of host memory");
		return;
	}
	b->addr = p;
	b->size = size;
	b->rounded = rounded;
	b->small = small;
	b->nsite = stack ? prof_stack_capture(&b->site) : 0;
	b->trace_id = -1;
	b->alloc_at = b->free_at = b->alloc_seq = -1;
	if (prof_live_add(b)) {
		prof_live_free(b);
		return;
	}
	level += (int64_t)size;
	events++;
	if (detecting && ngap < GAP_MAX) {
		gap_alloc[ngap].b = b;
		gap_alloc[ngap].event = events;
		ngap++;
	}
	if (profiling)
		prof_profile_alloc(b, nops - prof_start);
}

void prof_free(CUdeviceptr p)
{
	struct prof_live *b = prof_live_remove(p);
	if (!b)
		return;
	level -= (int64_t)b->size;
	events++;
	if (level <= gap_min) {
		gap_min = level;
		gap_min_event = events;
	}
	for (int g = 0; g < ngap; g++)
		if (gap_alloc[g].b == b)
			gap_alloc[g] = gap_alloc[--ngap];
	b->dead = 1;
	if (profiling)
		prof_profile_free(b, nops - prof_start);
	if (!b->in_trace)
		prof_live_free(b);
}

int64_t prof_live_bytes(void)
{
	return level;
}

void prof_function_name(void *func, const char *name, int is_kernel)
{
	prof_kinfo_name(func, name, is_kernel);
}
