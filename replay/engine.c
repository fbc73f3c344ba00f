/*
 * engine.c — run mode after the profile: every op is checked against the
 * op at its position in the profiled iteration; iteration boundaries are
 * where a plan is asked for and switched on, and where the allocator's
 * quarantine ends.  A mismatch (another op, another allocation size or
 * address, an access to an evicted buffer) rebuilds whatever is evicted
 * and passes through until the next iteration that starts like the
 * profiled one; three divergent iterations in a row ask for a new profile.
 *
 * Per launch in a replay iteration: one comparison with the profiled op,
 * the plan's CSR lists at this position, and, only while something is
 * evicted, a binary search per parameter word.  No allocation.  All of it
 * before the real call: the session's lock is not held across the call,
 * and the evictions after an op (which must come after it on its stream)
 * take it again only at the positions that have some.
 */
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../core/capture.h"
#include "../core/driver.h"
#include "../core/config.h"
#include "../core/log.h"
#include "../core/param_words.h"
#include "internal.h"

struct replay_engine replay_engine;

#define MAX_DIVERGED 3
/* Ops that must follow a start found while lost before it counts. */
#define RESYNC_OPS 16

static int by_addr_cmp(const void *a, const void *b, void *profile)
{
	const struct remat_profile *p = profile;
	uint64_t x = p->bufs[*(const int32_t *)a].addr, y = p->bufs[*(const int32_t *)b].addr;
	return x < y ? -1 : x > y;
}

static void free_state(void)
{
	replay_plan_drop();
	free(replay_engine.live);
	free(replay_engine.evicted);
	free(replay_engine.transient);
	free(replay_engine.lost);
	free(replay_engine.saved);
	free(replay_engine.stash);
	free(replay_engine.boundary);
	free(replay_engine.bstreams);
	free(replay_engine.seq);
	free(replay_engine.src_of);
	free(replay_engine.iv);
	free(replay_engine.by_addr);
	prof_profile_put(replay_engine.profile);
	struct replay_totals totals = replay_engine.totals;
	CUstream out = replay_engine.copy_out, in = replay_engine.copy_in;
	CUevent scratch = replay_engine.off_scratch;
	memset(&replay_engine, 0, sizeof(replay_engine));
	replay_engine.totals = totals;
	replay_engine.copy_out = out;
	replay_engine.copy_in = in;
	replay_engine.off_scratch = scratch;
}

/* Per-iteration state back to "everything as the program left it". */
static void iteration_reset(void)
{
	const struct remat_profile *p = replay_engine.profile;
	for (size_t b = 0; b < p->nbufs; b++) {
		replay_engine.live[b] = p->bufs[b].alloc_at < 0;
		/* What the plan keeps unmapped across the boundary stays so;
		 * boundary() decides about it. */
		if (!replay_engine.boundary[b] &&
		    !(replay_engine.off && replay_engine.off[b] == REPLAY_OFF_PARKED))
			replay_engine.evicted[b] = 0;
	}
	memset(replay_engine.transient, 0, p->nbufs);
	replay_engine.niv = 0;
	for (size_t b = 0; b < p->nbufs; b++)
		if (replay_engine.evicted[b])
			replay_iv_add((int32_t)b);
	replay_engine.nalloc = 0;
	replay_engine.diverged = 0;
	replay_engine.tentative = 0;
}

/* The iteration's index in the process, as the profiler counts them (set-up
 * and a partial first iteration are iteration 0), for the log. */
static unsigned long long abs_iter(void)
{
	return (unsigned long long)(replay_engine.first_iter + (int64_t)replay_engine.iter);
}

/* The allocator's peak since the last reset, folded into the peak of the
 * replay iterations (the parts that applied the plan). */
static void note_peak(void)
{
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	remat_log(REMAT_LOG_DEBUG, "iteration %llu: physical peak %llu while the plan applied",
	          abs_iter(), (unsigned long long)st.peak);
	if (st.peak > replay_engine.totals.applied_peak)
		replay_engine.totals.applied_peak = st.peak;
}

static void lift_budget(void)
{
	remat_alloc_set_budget(0);
	remat_alloc_follow(NULL, 0);
}

/* Ends the plan for the rest of this iteration.  Swapping to the host
 * (alloc/swap.c), the safety net of the iterations that do not apply the
 * plan, comes back: never while a rebuild may run, as making room could
 * take a buffer a replayed op reads. */
static void diverge(CUstream s, const char *what, int32_t pos)
{
	if (replay_engine.verifying)
		replay_verify_unpoison_all(); /* the rest runs unmodified */
	if (replay_engine.applying) {
		remat_log(REMAT_LOG_INFO,
		          "iteration %llu diverges from the profile at op %d (%s): rebuilding "
		          "%d evicted buffer(s), passing through",
		          abs_iter(), pos, what, replay_engine.niv);
		/* The rest of the iteration runs unmodified, so does the rebuild:
		 * it may need more than the plan foresaw. */
		if (!replay_engine.verifying)
			note_peak();
		lift_budget();
		int32_t lost = 0;
		CUresult r = replay_rebuild_all(s, &lost);
		if (lost)
			remat_warn(
			    "%d buffer(s) evicted by the plan cannot be rebuilt after the "
			    "divergence at op %d (CUDA error %d); they stay unmapped: an op that "
			    "reads one fails on the device instead of reading wrong data",
			    lost, pos, (int)r);
	} else {
		remat_log(REMAT_LOG_DEBUG, "iteration %llu diverges from the profile at op %d (%s)",
		          abs_iter(), pos, what);
	}
	replay_engine.applying = 0;
	replay_engine.verifying = 0;
	/* The rest of the iteration restores nothing: its copies go. */
	replay_copies_free(s);
	remat_alloc_swap_enable(1);
	if (!replay_engine.diverged) {
		replay_engine.diverged = 1;
		replay_engine.ndiverged++;
	}
	replay_engine.pos = -1;
}

void replay_no_plan(void)
{
	replay_verify_unpoison_all();
	replay_engine.stopped = 1;
	replay_engine.applying = replay_engine.verifying = 0;
}

/* Everything the engine changed in the allocator, undone. */
static void let_go(void)
{
	lift_budget();
	remat_alloc_swap_enable(1);
	remat_alloc_quarantine(0);
	free_state();
}

static void poll_plan(void)
{
	struct pl_plan *pl = NULL;
	switch (replay_engine.hooks.poll_plan(&pl)) {
	case REPLAY_PLAN_READY: {
		char why[512];
		if (replay_plan_install(pl, why, sizeof(why))) {
			if (!replay_engine.hooks.reject_plan(why))
				replay_no_plan();
			return;
		}
		remat_log(REMAT_LOG_INFO,
		          "plan for graph 0x%016llx applied from iteration %llu: planned peak %lld "
		          "bytes (baseline %lld), budget %lld",
		          (unsigned long long)replay_engine.profile->graph_hash, abs_iter(),
		          (long long)replay_engine.plan->peak,
		          (long long)replay_engine.plan->baseline_peak,
		          (long long)replay_engine.budget);
		break;
	}
	case REPLAY_PLAN_NONE:
		replay_no_plan();
		break;
	case REPLAY_PLAN_WAIT:
		break;
	}
}

/* The buffers the plan parks on the host go there when an iteration
 * applies it (once: they stay from iteration to iteration; from op 0 on,
 * where a guessed boundary is confirmed) and come back at a boundary
 * where it does not (back: verification, no plan).  When one cannot go,
 * the plan cannot keep its budget: it stops, training continues
 * unmodified, and every one parked so far comes back; -1 then. */
static int park(int back)
{
	CUresult r = back ? replay_offload_restore_all(NULL) : replay_park_all();
	if (r == CUDA_SUCCESS)
		return 0;
	if (back) {
		remat_warn("a buffer parked on the host cannot be copied back (CUDA error %d); it "
		           "stays unmapped: an op that reads it fails on the device",
		           (int)r);
		return 0;
	}
	remat_warn("cannot park a buffer on the host (CUDA error %d); the plan is dropped, "
	           "training continues unmodified",
	           (int)r);
	if (replay_offload_restore_all(NULL) != CUDA_SUCCESS)
		remat_warn("a buffer parked on the host cannot be copied back; it stays unmapped: "
		           "an op that reads it fails on the device");
	replay_engine.applying = replay_engine.verifying = 0;
	replay_boundary_buffers(0);
	replay_no_plan();
	return -1;
}

/* The plan's budget and the measure of its peak, from the iteration's
 * op 0 on (a guessed boundary is confirmed there). */
static void enforce(void)
{
	if (!replay_engine.applying || replay_engine.verifying || park(0))
		return;
	/* The plan assumes every buffer resident: what went to the host
	 * before it comes back now, at the iteration's lowest point. */
	if (__atomic_load_n(&remat_alloc_nswapped, __ATOMIC_RELAXED)) {
		remat_log(REMAT_LOG_INFO, "plan applies: bringing %d swapped allocation(s) back",
		          remat_alloc_nswapped);
		remat_alloc_swap_in(NULL, 0);
	}
	remat_alloc_set_budget((uint64_t)replay_engine.budget);
	remat_alloc_poll(1); /* what the unmodified part left pooled goes */
	replay_engine.totals.peak_reset = 1;
	remat_alloc_reset_peak();
}

/* Between the last op of an iteration and the first of the next.
 * tentative: guessed from the profile's last op while lost; confirmed when
 * op 0 matches, forgotten quietly when it does not. */
static void boundary(int tentative)
{
	replay_engine.boundary_due = 0;
	remat_alloc_swap_report((long long)abs_iter());
	if (!replay_engine.diverged && replay_engine.iter)
		replay_engine.ndiverged = 0;
	if (replay_engine.applying)
		remat_log(REMAT_LOG_DEBUG,
		          "iteration %llu replayed: %llu evictions, %llu replays so far",
		          abs_iter(), (unsigned long long)replay_engine.totals.evictions,
		          (unsigned long long)replay_engine.totals.replays);
	int had = replay_engine.niv || replay_engine.applying;
	/* The iteration that ends here: a verifying or divergent one is neither,
	 * nor the ops before a start found while lost (observe), which may
	 * follow a guessed boundary forgotten a few ops later (darknet: 97
	 * "iterations" of 0.005 ms counted as run unmodified). */
	replay_clock_boundary(replay_engine.verifying || replay_engine.diverged || tentative ||
	                              replay_engine.observe
	                          ? REPLAY_CLOCK_SKIP
	                      : replay_engine.applying ? REPLAY_CLOCK_PLAN
	                                               : REPLAY_CLOCK_UNMODIFIED);
	if (replay_engine.applying && !replay_engine.verifying)
		note_peak();
	replay_verify_unpoison_all();
	if (replay_engine.verifying && !replay_engine.diverged)
		replay_verify_end_iteration();
	replay_engine.verifying = 0;
	replay_engine.iter++;
	if (!replay_engine.plan && !replay_engine.stopped)
		poll_plan();
	iteration_reset();
	replay_engine.pos = 0;
	replay_engine.applying = replay_engine.plan != NULL && !replay_engine.observe;
	replay_engine.observe = 0;
	/* A verification iteration evicts nothing: no budget to keep. */
	replay_engine.verifying = replay_engine.applying && replay_verify_wanted();
	if (!replay_engine.applying || replay_engine.verifying)
		park(1);
	remat_alloc_swap_enable(!replay_engine.applying);
	/* A guessed boundary unmaps nothing: the guess may be wrong (the
	 * profile's last op issued mid-iteration, as darknet issues its
	 * fills), and what is dead across a boundary is live mid-iteration.
	 * Op 0 confirming it unmaps them (replay_op_begin). */
	replay_boundary_buffers(replay_engine.applying && !replay_engine.verifying && !tentative);

	if (replay_engine.applying) {
		const struct remat_profile *p = replay_engine.profile;
		CUdeviceptr *a = malloc((size_t)(replay_engine.nseq + 1) * sizeof(*a));
		for (int32_t n = 0; a && n < replay_engine.nseq; n++)
			a[n] = replay_engine.seq[n] >= 0 ? p->bufs[replay_engine.seq[n]].addr : 0;
		remat_alloc_follow(a, a ? (size_t)replay_engine.nseq : 0);
		free(a);
	}
	/* Deferred unmaps end here, so the quarantined ranges are handed back
	 * with nothing mapped under them; the pool shrinks under the budget.
	 * Only iterations that apply the plan quarantine freed ranges: the
	 * others reuse memory as the program would. */
	remat_alloc_boundary(had);
	remat_alloc_quarantine(replay_engine.applying);
	replay_engine.tentative = tentative;
	if (!tentative)
		enforce();
}

/* The indexes the engine derives from the profile; 0, or -1 out of memory. */
static int index_profile(const struct remat_profile *p)
{
	size_t nb = p->nbufs ? p->nbufs : 1;
	replay_engine.live = calloc(nb, 1);
	replay_engine.evicted = calloc(nb, 1);
	replay_engine.transient = calloc(nb, 1);
	replay_engine.lost = calloc(nb, 1);
	replay_engine.saved = calloc(nb, sizeof(*replay_engine.saved));
	replay_engine.stash = calloc(nb, sizeof(*replay_engine.stash));
	replay_engine.boundary = calloc(nb, 1);
	replay_engine.bstreams = calloc(nb, sizeof(*replay_engine.bstreams));
	replay_engine.iv = calloc(nb, sizeof(*replay_engine.iv));
	replay_engine.by_addr = malloc(nb * sizeof(*replay_engine.by_addr));
	replay_engine.seq = malloc(nb * sizeof(*replay_engine.seq));
	replay_engine.src_of = malloc((p->nops ? p->nops : 1) * sizeof(*replay_engine.src_of));
	if (!replay_engine.live || !replay_engine.evicted || !replay_engine.transient ||
	    !replay_engine.lost || !replay_engine.saved || !replay_engine.stash ||
	    !replay_engine.boundary || !replay_engine.bstreams || !replay_engine.iv ||
	    !replay_engine.by_addr || !replay_engine.seq || !replay_engine.src_of)
		return -1;
	memset(replay_engine.src_of, 0xff, p->nops * sizeof(*replay_engine.src_of));
	for (size_t b = 0; b < p->nbufs; b++) {
		replay_engine.by_addr[b] = (int32_t)b;
		replay_engine.seq[b] = -1;
	}
	qsort_r(replay_engine.by_addr, p->nbufs, sizeof(*replay_engine.by_addr), by_addr_cmp,
	        (void *)p);
	for (size_t b = 0; b < p->nbufs; b++) {
		int64_t s = p->bufs[b].alloc_seq;
		if (s >= 0 && s < (int64_t)p->nbufs) {
			replay_engine.seq[s] = (int32_t)b;
			if (s + 1 > replay_engine.nseq)
				replay_engine.nseq = (int32_t)(s + 1);
		}
	}
	/* Which streams use each buffer: an eviction waits for all of them. */
	for (size_t k = 0; k < p->nops; k++) {
		const struct prof_op *o = &p->ops[k];
		if (o->stream < 0 || o->stream >= 64)
			continue;
		for (size_t i = 0; i < o->nreads; i++)
			replay_engine.bstreams[o->reads[i]] |= 1ull << o->stream;
		for (size_t i = 0; i < o->nwrites; i++)
			replay_engine.bstreams[o->writes[i]] |= 1ull << o->stream;
	}
	return 0;
}

void replay_start(struct remat_profile *p, int64_t budget, int64_t level, int64_t first_iter,
                  const struct replay_hooks *hooks)
{
	free_state();
	replay_engine.profile = p;
	replay_engine.hooks = *hooks;
	replay_engine.budget = budget;
	replay_engine.totals.budget = budget;
	replay_engine.first_iter = first_iter;
	if (index_profile(p)) {
		remat_warn("out of host memory for run mode; training continues unmodified");
		replay_engine.stopped = 1;
	} else {
		/* The op being issued now starts the first iteration after the
		 * profile; the allocations made since the profile's last op are
		 * its own. */
		iteration_reset();
	}
	replay_engine.level = level;
	replay_engine.pos = 0;
	remat_alloc_quarantine(0);
	replay_clock_start();
}

static int same_op(const struct prof_op *q, const struct remat_op *op)
{
	if (q->kind != (int)op->kind || q->cstream != op->stream)
		return 0;
	switch (op->kind) {
	case REMAT_OP_KERNEL: {
		size_t size;
		int extra = remat_op_extra_params(op, &size) != NULL;
		return q->func == op->func && !memcmp(q->grid, op->grid, sizeof(q->grid)) &&
		       !memcmp(q->block, op->block, sizeof(q->block)) && q->shmem == op->shmem &&
		       extra == q->via_extra && replay_attrs_same(q, op);
	}
	case REMAT_OP_MEMCPY:
		return q->bytes == op->bytes &&
		       (op->copy == REMAT_COPY_INFER || op->copy == q->copy);
	case REMAT_OP_MEMSET:
		return q->bytes == op->bytes;
	default:
		return q->func == op->func;
	}
}

/* The evicted buffer a matching op touches although the plan did not say
 * so, or -1: parameter words of a kernel, ranges of a copy or a set. */
static int32_t touches_evicted(const struct prof_op *q, const struct remat_op *op)
{
	switch (op->kind) {
	case REMAT_OP_KERNEL: {
		struct remat_words it;
		if (q->via_extra) {
			size_t size;
			const uint8_t *buf = remat_op_extra_params(op, &size);
			it = remat_words_packed(buf, size);
		} else if (q->kernel < 0) { /* not even its name is known: it may touch anything */
			return replay_engine.niv ? replay_engine.iv[0].buf : -1;
		} else {
			const struct prof_kernel *k = &replay_engine.profile->kernels[q->kernel];
			it = remat_words_params(op->params, (const uint32_t(*)[2])k->param,
			                        k->nparams);
		}
		uint64_t v, off;
		while (remat_words_next(&it, &v, &off)) {
			int32_t b = replay_find_evicted(v, v + 1);
			if (b >= 0)
				return b;
		}
		return -1;
	}
	case REMAT_OP_MEMCPY: {
		int32_t b = replay_find_evicted(op->dst, op->dst + op->bytes);
		return b >= 0 ? b : replay_find_evicted(op->src, op->src + op->bytes);
	}
	case REMAT_OP_MEMSET:
		return replay_find_evicted(op->dst, op->dst + op->bytes);
	default:
		return replay_graph_touches_evicted(op);
	}
}

/* Gives up on this profile and its plan: the profiler starts over. */
/* Run mode lets go of this profile, the program runs on unmodified: what
 * no replay could rebuild (content the profiled iteration overwrote before
 * reading it again) is mapped again, content undefined, since the
 * program's next use of it writes it (left unmapped, that write faults). */
static void map_lost(void)
{
	int n = 0;
	while (replay_engine.niv) {
		int32_t b = replay_engine.iv[0].buf;
		if (replay_map_buf(b, NULL, "mapping back") != CUDA_SUCCESS)
			break;
		replay_engine.evicted[b] = 0;
		replay_iv_del(b);
		n++;
	}
	if (n)
		remat_warn("%d buffer(s) the plan evicted could not be rebuilt; run mode stops, so "
		           "they are mapped again with undefined content: the profiled iteration "
		           "overwrote them before reading them",
		           n);
}

static enum replay_verdict reprofile(const char *why)
{
	remat_log(REMAT_LOG_INFO, "%s: profiling again", why);
	lift_budget(); /* the program runs unmodified from here */
	map_lost();
	let_go();
	return REPLAY_REPROFILE;
}

/* A planned rebuild failed.  The plan stops for good and everything
 * evicted is rebuilt without the budget: if that works, the op runs as it
 * would have; if not, its inputs are not what the program wrote, so it
 * gets the error instead of running (and the session gives it to every
 * later op, as a sticky device error would be). */
static enum replay_verdict rebuild_failed(const struct remat_op *op, int32_t pos, CUresult e)
{
	lift_budget();
	int32_t lost = 0;
	CUresult again = replay_rebuild_all(op->stream, &lost);
	if (again == CUDA_SUCCESS) {
		remat_warn("rebuild before op %d failed (CUDA error %d) and was done again without "
		           "the budget; the plan is dropped, training continues unmodified",
		           pos, (int)e);
		let_go();
		return REPLAY_STOP;
	}
	remat_warn("rebuild before op %d failed (CUDA error %d) and cannot be done again (CUDA "
	           "error %d; %d buffer(s) stay unmapped): the program gets the error from its "
	           "next CUDA call on",
	           pos, (int)e, (int)again, lost);
	let_go();
	replay_engine.totals.error = e;
	return REPLAY_FAIL;
}

CUresult replay_error(void)
{
	return replay_engine.totals.error;
}

/* The guessed boundary was none. */
static void forget_guess(void)
{
	replay_verify_unpoison_all();
	replay_engine.pos = -1;
	replay_engine.applying = replay_engine.verifying = 0;
	lift_budget();
	remat_alloc_swap_enable(1);
}

/* Lost after a divergence: an iteration can only start with the profile's
 * op 0 at the profile's memory level, and runs unmodified; the profile's
 * last op may end one.
 * Lost for as long as MAX_DIVERGED iterations: the program is not doing
 * what was profiled any more.  1 (with *v) while still lost, 0 when op
 * starts an iteration. */
static int still_lost(const struct remat_op *op, enum replay_verdict *v)
{
	const struct remat_profile *p = replay_engine.profile;
	int32_t nops = (int32_t)p->nops;
	if (!same_op(&p->ops[0], op) || replay_engine.level != p->level0) {
		if (same_op(&p->ops[nops - 1], op)) {
			replay_engine.boundary_due = 1;
			replay_engine.due_tentative = 1;
		}
		*v = ++replay_engine.lost_ops >= (uint64_t)MAX_DIVERGED * (uint64_t)nops
		         ? reprofile("no iteration like the profiled one")
		         : REPLAY_CONTINUE;
		return 1;
	}
	/* Op 0's call may be issued elsewhere in the iteration too: applied
	 * from a false start, the plan would evict what is live there.  This
	 * iteration runs as the program issues it; the next one applies. */
	replay_engine.observe = 1;
	boundary(0);
	replay_engine.resync_left = nops > RESYNC_OPS ? RESYNC_OPS : nops - 1;
	return 0;
}

/* Op pos is not the profile's: a guessed boundary was none, or the
 * iteration diverges. */
static enum replay_verdict other_op(const struct remat_op *op, int32_t pos)
{
	const struct prof_op *q = &replay_engine.profile->ops[pos];
	remat_log(REMAT_LOG_DEBUG,
	          "op %d of the profile: kind %d, function %p, grid %u, %llu bytes, stream %p; "
	          "issued: kind %d, function %p, grid %u, %llu bytes, stream %p",
	          pos, q->kind, q->func, q->grid[0], (unsigned long long)q->bytes,
	          (void *)q->cstream, (int)op->kind, op->func, op->grid[0],
	          (unsigned long long)op->bytes, (void *)op->stream);
	if (replay_engine.tentative) {
		forget_guess();
	} else if (replay_engine.resync_left > 0) {
		/* A start found while lost that the next ops do not follow: op
		 * 0 is issued elsewhere in the iteration too (darknet's fills).
		 * Still lost, and not one more divergent iteration. */
		int counted = !replay_engine.diverged;
		diverge(op->stream, "a false start", pos);
		if (counted)
			replay_engine.ndiverged--;
	} else {
		diverge(op->stream, "another op", pos);
		if (replay_engine.ndiverged >= MAX_DIVERGED)
			return reprofile("divergent iterations in a row");
	}
	return REPLAY_CONTINUE;
}

/* The plan at op pos (matching q): its steps before it, the check for an
 * unplanned access, the evictions after it.  1 when the caller returns *v
 * at once, 0 when the op goes on (*v: evict after it or not). */
static int apply_at(struct remat_op *op, int32_t pos, const struct prof_op *q,
                    enum replay_verdict *v)
{
	const struct pl_plan *pl = replay_engine.plan;
	if (pl->step_off[pos] != pl->step_off[pos + 1]) {
		CUresult e = replay_steps(pos, op->stream, 0, pos);
		if (e != CUDA_SUCCESS) {
			*v = rebuild_failed(op, pos, e);
			return 1;
		}
	}
	int32_t b = replay_engine.niv ? touches_evicted(q, op) : -1;
	if (b >= 0) {
		replay_engine.totals.rebuilds_unplanned++;
		diverge(op->stream, "an unplanned access to an evicted buffer", pos);
		remat_log(REMAT_LOG_INFO, "op %d touches evicted buffer %d: rebuilt first", pos, b);
		*v = REPLAY_CONTINUE;
		return 1;
	}
	if (replay_engine.src_of[pos] >= 0)
		replay_capture(pos, op);
	/* Evictions after the op are ordered after it on its stream: they
	 * wait for the real call. */
	if (pl->evict_off[pos] != pl->evict_off[pos + 1]) {
		op->pos = pos;
		*v = REPLAY_EVICT_AFTER;
	}
	return 0;
}

enum replay_verdict replay_op_begin(struct remat_op *op)
{
	enum replay_verdict v = REPLAY_CONTINUE;
	if (!replay_engine.profile)
		return REPLAY_STOP;
	if (replay_engine.boundary_due)
		boundary(replay_engine.due_tentative);
	if (replay_engine.stopped) {
		let_go();
		return REPLAY_STOP;
	}
	if (replay_engine.reshaped)
		return reprofile("the program changed the memory it maps itself");
	remat_alloc_poll(0);
	const struct remat_profile *p = replay_engine.profile;
	if (replay_engine.pos < 0 && still_lost(op, &v))
		return v;
	int32_t pos = replay_engine.pos;
	const struct prof_op *q = &p->ops[pos];
	if (!same_op(q, op)) {
		v = other_op(op, pos);
		/* An iteration that ends early (an evaluation pass, forward
		 * only) may be followed by one that starts with this op: the
		 * plan then applies to it, mapping what it keeps unmapped
		 * before the op that writes it. */
		if (v != REPLAY_CONTINUE || replay_engine.pos >= 0 || still_lost(op, &v))
			return v;
		pos = 0;
		q = &p->ops[0];
	}
	if (replay_engine.tentative) {
		replay_engine.tentative = 0;
		/* Nothing ran since the guessed boundary: unmapping what the plan
		 * keeps unmapped there now, before op 0's steps, is the same. */
		replay_boundary_buffers(replay_engine.applying && !replay_engine.verifying);
		enforce();
	}
	replay_engine.lost_ops = 0;
	if (replay_engine.resync_left > 0 && pos > 0)
		replay_engine.resync_left--;
	if (replay_engine.verifying) {
		if (replay_engine.src_of[pos] >= 0)
			replay_capture(pos, op);
		if (replay_verify_windows_begin(pos, op)) {
			op->pos = pos;
			v = REPLAY_EVICT_AFTER;
		}
		replay_verify_begin(pos, op->stream);
	} else if (replay_engine.applying && apply_at(op, pos, q, &v)) {
		return v;
	}
	if (++replay_engine.pos == (int32_t)p->nops) {
		replay_engine.boundary_due = 1;
		replay_engine.due_tentative = 0;
	}
	return v;
}

void replay_op_end(struct remat_op *op, CUresult rc)
{
	(void)rc;
	/* The plan may have been dropped in between (another thread diverged,
	 * at the same position's evictions or after): evict only what it still
	 * says, and only while it applies. */
	if (replay_engine.applying && !replay_engine.verifying && replay_engine.plan)
		replay_evict_after(op->pos, op->stream);
	else if (replay_engine.verifying && replay_engine.plan)
		replay_verify_windows_end(op->pos, op);
}

void replay_reshape(void)
{
	if (!replay_engine.profile)
		return;
	if (replay_engine.applying) {
		diverge(NULL, "the program changes the memory it maps itself", replay_engine.pos);
		/* The rebuild is on the legacy stream, the program's next use
		 * of that memory on any: it completes first. */
		if (!__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE))
			remat_drv.cuCtxSynchronize();
	}
	replay_engine.reshaped = 1;
}

void replay_alloc_before(void)
{
	if (replay_engine.profile && replay_engine.boundary_due)
		boundary(replay_engine.due_tentative);
}

void replay_alloc(CUdeviceptr p, size_t size)
{
	if (!replay_engine.profile)
		return;
	replay_engine.level += (int64_t)size;
	if (replay_engine.applying) {
		int32_t n = replay_engine.nalloc;
		int32_t b = n < replay_engine.nseq ? replay_engine.seq[n] : -1;
		const struct prof_buf *u = b >= 0 ? &replay_engine.profile->bufs[b] : NULL;
		if (!u || u->size != size || u->addr != p) {
			remat_log(
			    REMAT_LOG_DEBUG,
			    "allocation %d: %zu bytes at 0x%llx, the profile's %llu at 0x%llx", n,
			    size, (unsigned long long)p, u ? (unsigned long long)u->size : 0ull,
			    u ? (unsigned long long)u->addr : 0ull);
			if (replay_engine.tentative)
				forget_guess();
			else
				diverge(NULL, b < 0 ? "an extra allocation" : "another allocation",
				        replay_engine.pos);
		} else {
			replay_engine.live[b] = 1;
		}
	}
	replay_engine.nalloc++;
}

void replay_free(CUdeviceptr p)
{
	struct remat_alloc_info info;
	if (!replay_engine.profile || !remat_alloc_owns(p, &info))
		return;
	/* A free after the iteration's last op (a due boundary) still belongs
	 * to it: its range is quarantined with the iteration's and handed back
	 * at the boundary, so the next iteration's allocation finds its
	 * address free again. */
	replay_engine.level -= (int64_t)info.size;
	replay_park_forget(p, info.size);
	int32_t b = replay_buf_at(p);
	if (b >= 0) {
		if (replay_engine.evicted[b]) {
			replay_engine.evicted[b] = 0;
			replay_iv_del(b);
		}
		replay_engine.live[b] = 0;
	}
}

void replay_shutdown(void)
{
	const struct replay_totals *t = &replay_engine.totals;
	if (replay_engine.profile && replay_engine.applying && !replay_engine.verifying)
		note_peak();
	if (t->peak_reset)
		remat_log(REMAT_LOG_INFO,
		          "run mode: physical peak %llu bytes in replay iterations, budget %lld",
		          (unsigned long long)t->applied_peak, (long long)t->budget);
	if (replay_engine.profile && replay_engine.plan)
		remat_log(REMAT_LOG_INFO,
		          "run mode: %llu iterations, %llu evictions, %llu replays, %llu unplanned "
		          "rebuilds, %llu offloads, %llu parked",
		          (unsigned long long)replay_engine.iter, (unsigned long long)t->evictions,
		          (unsigned long long)t->replays, (unsigned long long)t->rebuilds_unplanned,
		          (unsigned long long)t->offloads, (unsigned long long)t->parked);
	replay_clock_report();
}
