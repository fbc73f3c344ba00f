/*
 * record.c — the profiler's state machine, one lock for all of it:
 *
 *   DETECT   every op's signature goes to the iteration detector; once two
 *            consecutive iterations match and the warm-up has passed,
 *            CUPTI is started at one boundary and the profile at the next
 *   PROFILE  one iteration is recorded in full (profile.c); the lock is
 *            held from before each op to after it, so the hashes around it
 *            see only its writes.  Each op must repeat the op one period
 *            earlier, so the profiled iteration is the third in a row to
 *            match; then the trace is written by a background thread
 *   DONE     tracking stops: launches go straight to the driver
 *   RUN      (run mode instead of DONE) every op and allocation goes to the
 *            replay engine (replay/), which checks each iteration against
 *            the profile and applies the plan once it arrives; after
 *            repeated divergence it hands back to DETECT for a new profile
 *
 * A mismatch in PROFILE drops the profile and goes back to DETECT (an odd
 * iteration: evaluation, checkpointing, the last one of the run).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../interpose/remat.h"
#include "../interpose/alloc/alloc.h"
#include "internal.h"
#include "iteration.h"
#include "profile.h"
#include "trace.h"
#include "profiler.h"
#include "../replay/replay.h"

enum { DETECT, PROFILE, DONE, RUN };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int phase = DETECT;
static struct remat_detector det;
static int det_ready;
static uint64_t nops;     /* ops seen so far: the index of the next one */
static int64_t level;     /* requested bytes of live managed allocations */
static int cupti_started; /* CUPTI was started for the next profile */
static int cupti_ok;
static const char *cupti_note = "";
static size_t prof_period;  /* the period being profiled */
static size_t last_period;  /* for the debug log */
static int64_t prof_level0; /* level when the profiled iteration began */
/* The gap since the last op: its lowest level, when that was last reached
 * (counted in alloc/free events), and what was allocated in it.
 * Allocations after the low point belong to the iteration that starts at
 * the next op. */
static int64_t gap_min;
static uint64_t events, gap_min_event;
#define GAP_MAX 256
static struct {
	struct remat_pbuf *b;
	uint64_t event;
} gap_alloc[GAP_MAX];
static int ngap;

#define MAX_DETECT_OPS (1u << 21)

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

static void give_up(const char *why)
{
	remat_log(REMAT_LOG_ERROR, "%s; tracing stops, training continues unmodified", why);
	phase = DONE;
	/* Swapped allocations keep every op checked (swapcheck.c). */
	remat_tracking = __atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_ACQUIRE);
}

static void abort_profile(const char *why, uint64_t i)
{
	remat_log(REMAT_LOG_INFO, "op %llu: %s; profile dropped, looking for the iteration again",
	          (unsigned long long)i, why);
	remat_profile_drop();
	phase = DETECT;
	cupti_started = 0;
}

static void maybe_start(uint64_t i)
{
	if (!remat_det_steady(&det))
		return;
	int boundary = remat_det_is_boundary(&det, i);
	size_t it = remat_det_iteration_index(&det, i);
	if (!cupti_started) {
		/* Subscribe before the boundary the profile will start at (the
		 * runtime call of its first op must be entered with the callbacks
		 * on), and no earlier: CUPTI costs something on every API call. */
		size_t next = i < det.phase ? 0 : it + 1; /* index of the next boundary */
		if ((int64_t)next < remat_cfg.warmup)
			return;
		cupti_ok = remat_cupti_start(&cupti_note) == 0;
		if (!cupti_ok)
			remat_log(REMAT_LOG_ERROR, "no kernel durations: %s", cupti_note);
		cupti_started = 1;
		return;
	}
	if (!boundary || (int64_t)it < remat_cfg.warmup)
		return;
	remat_log(REMAT_LOG_INFO,
	          "iteration found: %zu ops (boundary at op %llu); profiling iteration %zu",
	          det.period, (unsigned long long)i, it);
	if (remat_profile_begin(i, det.period, it, cupti_ok, cupti_note)) {
		give_up("out of memory for the profile");
		return;
	}
	for (int g = 0; g < ngap; g++)
		if (gap_alloc[g].event > gap_min_event)
			remat_profile_adopt(gap_alloc[g].b);
	phase = PROFILE;
	prof_period = det.period;
	prof_level0 = level;
	/* Run mode: no address is reused within the profiled iteration (see
	 * remat_alloc_quarantine), so each buffer of the trace has an address
	 * of its own that a replay may map it at. */
	if (remat_cfg.mode == REMAT_MODE_RUN)
		remat_alloc_quarantine(1);
}

static uint64_t budget_bytes(void)
{
	if (remat_cfg.budget_bytes)
		return remat_cfg.budget_bytes;
	CUdevice dev;
	size_t total = 0;
	if (remat_drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS)
		remat_drv.cuDeviceTotalMem(&total, dev);
	return (uint64_t)((double)total * remat_cfg.budget_percent / 100.0);
}

/* Repeated divergence: the engine dropped its profile; look for the
 * iteration again from scratch. */
static void restart_detection(void)
{
	remat_det_fini(&det);
	remat_det_init(&det, MAX_DETECT_OPS);
	nops = 0; /* op indices are the detector's */
	phase = DETECT;
	cupti_started = 0;
	last_period = 0;
	remat_tracking = 1;
}

void remat_prof_begin(struct remat_op *op)
{
	op->slot = -1;
	if (remat_lazy_init())
		return;
	/* Something went to the host before a plan applied: what this op
	 * touches comes back before anyone looks at it (the write set hashes,
	 * the replay engine, the op itself). */
	if (unlikely(__atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_ACQUIRE)))
		remat_swap_check(op, &lock);
	pthread_mutex_lock(&lock);
	if (phase == DONE) {
		pthread_mutex_unlock(&lock);
		return;
	}
	if (phase == RUN) {
		/* The gap bookkeeping goes on: a new profile needs it. */
		gap_min = level;
		gap_min_event = events;
		ngap = 0;
		pthread_mutex_unlock(&lock);
		op->slot = -2;
		if (replay_op_begin(op) == REPLAY_REPROFILE) {
			op->slot = -1;
			pthread_mutex_lock(&lock);
			restart_detection();
			pthread_mutex_unlock(&lock);
		}
		return;
	}
	if (!det_ready) {
		remat_det_init(&det, MAX_DETECT_OPS);
		det_ready = 1;
	}
	uint64_t i = nops++;
	uint64_t sig = op_signature(op);
	if (remat_det_push(&det, sig, level, gap_min) < 0) {
		give_up("no training iteration found in the first 2M ops");
		pthread_mutex_unlock(&lock);
		return;
	}
	if (det.period != last_period) {
		remat_log(REMAT_LOG_DEBUG, "op %llu: period %zu (was %zu), boundary phase %zu",
		          (unsigned long long)i, det.period, last_period, det.phase);
		last_period = det.period;
	}
	if (unlikely(__atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_RELAXED)) &&
	    remat_det_steady(&det) && remat_det_is_boundary(&det, i))
		remat_alloc_swap_report((long long)remat_det_iteration_index(&det, i) - 1);
	if (phase == DETECT)
		maybe_start(i);
	/* A new gap begins after this op. */
	gap_min = level;
	gap_min_event = events;
	ngap = 0;
	if (phase == PROFILE) {
		uint64_t k = i - remat_profile_start();
		if (det.period != prof_period) {
			abort_profile("the op differs from one iteration earlier", i);
		} else if (k == det.period) {
			/* The next iteration has begun: the profile is complete. */
			remat_profile_end(cupti_ok);
			struct replay_profile *snap = NULL;
			if (remat_cfg.mode == REMAT_MODE_RUN &&
			    !(snap = remat_profile_snapshot(prof_level0)))
				remat_warn("out of host memory for run mode; training continues "
				           "unmodified");
			if (snap)
				snap->first_iter = (int64_t)remat_det_iteration_index(&det, i);
			phase = snap ? RUN : DONE;
			remat_tracking = snap != NULL;
			remat_profile_publish(remat_cfg.trace_dir);
			if (snap) {
				pthread_mutex_unlock(&lock);
				replay_start(snap, budget_bytes(), level);
				op->slot = -2;
				if (replay_op_begin(op) == REPLAY_REPROFILE) {
					op->slot = -1;
					pthread_mutex_lock(&lock);
					restart_detection();
					pthread_mutex_unlock(&lock);
				}
				return;
			}
		} else {
			op->slot = (long)k;
			if (remat_cfg.mode == REMAT_MODE_RUN && k + 1 == det.period)
				remat_alloc_boundary(0);
			remat_profile_op_before(op, k, level);
			remat_profile_set_sig(k, sig);
			return; /* lock held until remat_prof_end */
		}
	}
	pthread_mutex_unlock(&lock);
}

void remat_prof_end(struct remat_op *op, CUresult rc)
{
	remat_swap_release();
	if (op->slot == -2) {
		replay_op_end(op, rc);
		return;
	}
	if (op->slot < 0)
		return;
	remat_profile_op_after(op, (uint64_t)op->slot, rc);
	pthread_mutex_unlock(&lock);
}

void remat_prof_alloc(CUdeviceptr p, size_t size, size_t rounded, int small)
{
	if (remat_lazy_init())
		return;
	char **site = NULL;
	pthread_mutex_lock(&lock);
	if (phase == DONE) {
		pthread_mutex_unlock(&lock);
		return;
	}
	/* Run mode keeps the live list (a new profile needs it) but not the
	 * allocating stacks: unwinding costs more than the allocation. */
	size_t nsite = phase == RUN ? 0 : remat_stack_capture(&site);
	struct remat_pbuf *b = calloc(1, sizeof(*b));
	if (!b) {
		give_up("out of host memory");
		pthread_mutex_unlock(&lock);
		return;
	}
	b->addr = p;
	b->size = size;
	b->rounded = rounded;
	b->small = small;
	b->site = site;
	b->nsite = nsite;
	b->trace_id = -1;
	b->alloc_at = b->free_at = b->alloc_seq = -1;
	remat_live_add(b);
	level += (int64_t)size;
	events++;
	if (ngap < GAP_MAX) {
		gap_alloc[ngap].b = b;
		gap_alloc[ngap].event = events;
		ngap++;
	}
	if (phase == PROFILE)
		remat_profile_alloc(b, nops);
	int run = phase == RUN;
	pthread_mutex_unlock(&lock);
	if (run)
		replay_alloc(p, size);
}

void remat_prof_free(CUdeviceptr p)
{
	if (__atomic_load_n(&phase, __ATOMIC_RELAXED) == RUN)
		replay_free(p);
	pthread_mutex_lock(&lock);
	struct remat_pbuf *b = remat_live_remove(p);
	if (b) {
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
		if (phase == PROFILE)
			remat_profile_free(b, nops);
		if (!b->in_trace) {
			for (size_t k = 0; k < b->nsite; k++)
				free(b->site[k]);
			free(b->site);
			free(b);
		}
	}
	pthread_mutex_unlock(&lock);
}

void remat_prof_function_name(void *func, const char *name, int is_kernel)
{
	pthread_mutex_lock(&lock);
	remat_kinfo_name(func, name, is_kernel);
	pthread_mutex_unlock(&lock);
}

void remat_prof_shutdown(void)
{
	pthread_mutex_lock(&lock);
	if ((phase == DETECT || phase == PROFILE) && nops) {
		remat_log(REMAT_LOG_ERROR,
		          "process ends before a steady iteration was profiled "
		          "(%llu ops seen); no trace written",
		          (unsigned long long)nops);
	}
	pthread_mutex_unlock(&lock);
	remat_profile_join();
	if (remat_cfg.mode == REMAT_MODE_RUN) {
		replay_shutdown();
		remat_alloc_swap_summary();
	}
}
