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
#include "../core/param_words.h"
#include "internal.h"
#include "iteration.h"

#define MAX_DETECT_OPS (1u << 21)

#define GAP_MAX 256

/* Detection: where the stream of ops stands, and the profile's place in it. */
static struct prof_detect {
	struct remat_detector det;
	int det_ready;
	int detecting;     /* ops come here (until the profile is handed over) */
	int profiling;     /* the profile is being recorded */
	uint64_t nops;     /* ops seen so far: the index of the next one */
	int64_t level;     /* requested bytes of live managed allocations */
	int cupti_started; /* CUPTI was started for the next profile */
	int cupti_ok;
	const char *cupti_note;
	uint64_t prof_start;  /* index of the profile's op 0 */
	size_t prof_ops;      /* the period being profiled */
	size_t last_period;   /* for the debug log */
	int64_t prof_level0;  /* level when the profiled iteration began */
	uint64_t complete_at; /* index of the op after the profiled iteration */
	int recut;            /* the boundary was moved by data flow (prof_recut) */
	/* The gap since the last op: its lowest level, when that was last
	 * reached (counted in alloc/free events), and what was allocated in
	 * it.  Allocations after the low point belong to the iteration that
	 * starts at the next op. */
	int64_t gap_min;
	uint64_t events, gap_min_event;
	struct {
		struct prof_live *b;
		uint64_t event;
	} gap_alloc[GAP_MAX];
	int ngap;
	/* The ops' parameter words since the last boundary, and where they
	 * copy and set (address, bytes), once a period is seen: the next
	 * profile's cuts (prof_unread_expect keeps the device addresses),
	 * since each of its ops repeats one of these. */
	uint64_t (*cuts)[2];
	size_t ncuts, capcuts;
} dt = {.detecting = 1, .cupti_note = ""};

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

/* A kernel's parameter words; 0 when their layout is unknown (the driver
 * does not give it). */
static int kernel_words(const struct remat_op *op, struct remat_words *it)
{
	size_t size;
	const uint8_t *buf;
	const uint32_t(*layout)[2];
	if ((buf = remat_op_extra_params(op, &size)) != NULL)
		*it = remat_words_packed(buf, size);
	else if (op->params && prof_kernel_params(op->func, &layout, &size))
		*it = remat_words_params(op->params, layout, size);
	else
		return 0;
	return 1;
}

/* What the op was given, hashed: every 8-byte word of a kernel's
 * parameters, a copy's or set's device addresses; 0 when unknown (a
 * kernel whose parameter layout the driver does not give).  Host addresses
 * are left out: a program may read back into a new buffer every step. */
static uint64_t op_args(const struct remat_op *op)
{
	struct remat_words it = {0};
	uint64_t h = 0x84222325cbf29ce4ULL, v, off;
	switch (op->kind) {
	case REMAT_OP_KERNEL:
		if (!kernel_words(op, &it))
			return 0;
		break;
	case REMAT_OP_MEMCPY:
		return op->copy == REMAT_COPY_HTOD   ? op->dst
		       : op->copy == REMAT_COPY_DTOH ? op->src
		                                     : op->dst * 31 + op->src;
	case REMAT_OP_MEMSET:
		return op->dst;
	default:
		return 0;
	}
	while (remat_words_next(&it, &v, &off))
		h = (h ^ v) * 0xbf58476d1ce4e5b9ULL;
	return h | 1; /* never 0, the unknown */
}

#define MAX_CUTS (1u << 20)

/* On the launch path while detecting: an append, no lookup (the words
 * that are no device address are dropped when the profile begins). */
static void cut_push(uint64_t addr, uint64_t bytes)
{
	if (!addr || dt.ncuts >= MAX_CUTS || REMAT_GROW(dt.cuts, dt.ncuts, dt.capcuts))
		return; /* a cut not known ahead: the proof guesses shorter */
	dt.cuts[dt.ncuts][0] = addr;
	dt.cuts[dt.ncuts++][1] = bytes;
}

/* The op's parameter words, a copy's and a set's ranges. */
static void note_cuts(const struct remat_op *op)
{
	struct remat_words it = {0};
	uint64_t v, off;
	switch (op->kind) {
	case REMAT_OP_KERNEL:
		if (kernel_words(op, &it))
			while (remat_words_next(&it, &v, &off))
				cut_push(v, 0);
		return;
	case REMAT_OP_MEMCPY:
		cut_push(op->src, op->bytes);
		/* fall through */
	case REMAT_OP_MEMSET:
		cut_push(op->dst, op->bytes);
		return;
	default:
		return;
	}
}

static enum prof_step give_up(const char *why)
{
	remat_log(REMAT_LOG_ERROR, "%s; tracing stops, training continues unmodified", why);
	dt.detecting = dt.profiling = 0;
	return PROF_GIVE_UP;
}

static void abort_profile(const char *why, uint64_t i)
{
	remat_log(REMAT_LOG_INFO, "op %llu: %s; profile dropped, looking for the iteration again",
	          (unsigned long long)i, why);
	prof_profile_drop();
	dt.profiling = 0;
	dt.cupti_started = 0;
}

static void gap_reset(void)
{
	dt.gap_min = dt.level;
	dt.gap_min_event = dt.events;
	dt.ngap = 0;
}

/* 0, or -1 when the profile cannot be started (out of memory). */
static int maybe_start(uint64_t i)
{
	if (!remat_det_steady(&dt.det))
		return 0;
	int boundary = remat_det_is_boundary(&dt.det, i);
	size_t it = remat_det_iteration_index(&dt.det, i);
	if (!dt.cupti_started) {
		/* Subscribe before the boundary the profile will start at (the
		 * runtime call of its first op must be entered with the callbacks
		 * on), and no earlier: CUPTI costs something on every API call. */
		size_t next = i < dt.det.phase ? 0 : it + 1; /* index of the next boundary */
		if ((int64_t)next < remat_cfg.warmup)
			return 0;
		dt.cupti_ok = prof_cupti_start(&dt.cupti_note) == 0;
		if (!dt.cupti_ok)
			remat_log(REMAT_LOG_ERROR, "no kernel durations: %s", dt.cupti_note);
		dt.cupti_started = 1;
		return 0;
	}
	if (!boundary || (int64_t)it < remat_cfg.warmup)
		return 0;
	remat_log(REMAT_LOG_INFO,
	          "iteration found: %zu ops (boundary at op %llu); profiling iteration %zu",
	          dt.det.period, (unsigned long long)i, it);
	if (prof_profile_begin(i, dt.det.period, it, dt.cupti_ok, dt.cupti_note))
		return -1;
	prof_unread_expect((const uint64_t(*)[2])dt.cuts, dt.ncuts);
	remat_log(REMAT_LOG_DEBUG,
	          "profile: %zu parameter words, copies and sets from the iteration before",
	          dt.ncuts);
	for (int g = 0; g < dt.ngap; g++)
		if (dt.gap_alloc[g].event > dt.gap_min_event)
			prof_profile_adopt(dt.gap_alloc[g].b);
	dt.profiling = 1;
	dt.prof_start = i;
	dt.prof_ops = dt.det.period;
	dt.prof_level0 = dt.level;
	return 0;
}

enum prof_step prof_op(struct remat_op *op)
{
	if (!dt.detecting)
		return PROF_DETECTING;
	if (!dt.det_ready) {
		remat_det_init(&dt.det, MAX_DETECT_OPS);
		dt.det_ready = 1;
	}
	uint64_t i = dt.nops++;
	int copy = op->kind != REMAT_OP_MEMCPY   ? REMAT_DET_OTHER
	           : op->copy == REMAT_COPY_DTOH ? REMAT_DET_TO_HOST
	           : op->copy == REMAT_COPY_HTOD ? REMAT_DET_FROM_HOST
	                                         : REMAT_DET_OTHER;
	struct remat_det_op dop = {op_signature(op), op_args(op), dt.level, dt.gap_min, copy};
	if (remat_det_push(&dt.det, &dop) < 0)
		return give_up("no training iteration found in the first 2M ops");
	if (dt.det.period != dt.last_period) {
		remat_log(REMAT_LOG_DEBUG, "op %llu: period %zu (was %zu), boundary phase %zu",
		          (unsigned long long)i, dt.det.period, dt.last_period, dt.det.phase);
		dt.last_period = dt.det.period;
	}
	if (__builtin_expect(__atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_RELAXED), 0) &&
	    remat_det_steady(&dt.det) && remat_det_is_boundary(&dt.det, i))
		remat_alloc_swap_report((long long)remat_det_iteration_index(&dt.det, i) - 1);
	/* The profile synchronizes and copies around every op: a capture in
	 * progress forbids that (and is no steady iteration anyway). */
	int capturing = __atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE) != 0;
	if (dt.profiling && capturing)
		abort_profile("a stream capture began during the profiled iteration", i);
	if (!dt.profiling && !capturing && maybe_start(i))
		return give_up("out of memory for the profile");
	/* From the first period seen, not only once steady: the detector
	 * trusts a period late (the arena trainer: 2 ops before the profile). */
	if (!dt.profiling && dt.det.period) {
		if (remat_det_is_boundary(&dt.det, i) || dt.ncuts >= MAX_CUTS)
			dt.ncuts = 0;
		note_cuts(op);
	}
	/* A new gap begins after this op. */
	gap_reset();
	if (!dt.profiling)
		return PROF_DETECTING;
	uint64_t k = i - dt.prof_start;
	if (dt.det.period != dt.prof_ops) {
		abort_profile("the op differs from one iteration earlier", i);
		return PROF_DETECTING;
	}
	if (k == dt.prof_ops) {
		/* The next iteration has begun: the profile is complete. */
		dt.complete_at = i;
		return PROF_COMPLETE;
	}
	op->pos = (int32_t)k;
	prof_profile_op_before(op, k);
	return PROF_RECORD;
}

void prof_reshaped(void)
{
	if (dt.profiling)
		abort_profile("the program changed the memory it maps itself", dt.nops);
}

void prof_op_after(struct remat_op *op, CUresult rc)
{
	prof_profile_op_after(op, (uint64_t)op->pos, rc);
}

size_t prof_period(void)
{
	return dt.prof_ops;
}

struct remat_profile *prof_finish(int64_t *first_iter)
{
	struct remat_profile *p = prof_profile_end(dt.cupti_ok, dt.prof_level0);
	*first_iter = (int64_t)remat_det_iteration_index(&dt.det, dt.complete_at);
	dt.detecting = dt.profiling = 0;
	return p;
}

int prof_recut(size_t shift)
{
	/* Only a guessed boundary moves: where the level moves, its lowest
	 * point is where the program frees its activations. */
	if (dt.recut || !dt.det.period || !remat_det_flat(&dt.det))
		return 0;
	dt.recut = 1;
	dt.det.phase = (dt.det.phase + shift) % dt.det.period;
	dt.detecting = 1;
	dt.cupti_started = 0; /* prof_finish stopped CUPTI */
	gap_reset();
	return 1;
}

void prof_restart(void)
{
	if (dt.det_ready)
		remat_det_fini(&dt.det);
	remat_det_init(&dt.det, MAX_DETECT_OPS);
	dt.det_ready = 1;
	dt.nops = 0; /* op indices are the detector's */
	dt.detecting = 1;
	dt.profiling = 0;
	dt.cupti_started = 0;
	dt.last_period = 0;
	dt.recut = 0;
	gap_reset();
}

void prof_shutdown(void)
{
	if (dt.detecting && dt.nops)
		remat_log(REMAT_LOG_ERROR,
		          "process ends before a steady iteration was profiled "
		          "(%llu ops seen); no trace written",
		          (unsigned long long)dt.nops);
}

void prof_alloc(CUdeviceptr p, size_t size, size_t rounded, int small, int stack)
{
	struct prof_live *b = calloc(1, sizeof(*b));
	if (!b) {
		if (dt.detecting)
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
	dt.level += (int64_t)size;
	dt.events++;
	if (dt.detecting && dt.ngap < GAP_MAX) {
		dt.gap_alloc[dt.ngap].b = b;
		dt.gap_alloc[dt.ngap].event = dt.events;
		dt.ngap++;
	}
	if (dt.profiling)
		prof_profile_alloc(b, dt.nops - dt.prof_start);
}

void prof_free(CUdeviceptr p)
{
	struct prof_live *b = prof_live_remove(p);
	if (!b)
		return;
	dt.level -= (int64_t)b->size;
	dt.events++;
	if (dt.level <= dt.gap_min) {
		dt.gap_min = dt.level;
		dt.gap_min_event = dt.events;
	}
	for (int g = 0; g < dt.ngap; g++)
		if (dt.gap_alloc[g].b == b)
			dt.gap_alloc[g] = dt.gap_alloc[--dt.ngap];
	b->dead = 1;
	if (dt.profiling)
		prof_profile_free(b, dt.nops - dt.prof_start);
	if (!b->in_trace)
		prof_live_free(b);
}

int64_t prof_live_bytes(void)
{
	return dt.level;
}
