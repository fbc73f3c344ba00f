/*
 * engine.c — run mode after the profile: every op is checked against the
 * op at its position in the profiled iteration, iteration boundaries are
 * where the plan is polled for, switched on, and where the allocator's
 * quarantine ends.  A mismatch (another op, another allocation size or
 * address, an access to an evicted buffer) rebuilds whatever is evicted
 * and passes through until the next iteration that starts like the
 * profiled one; three divergent iterations in a row ask for a new profile.
 *
 * Per launch in a replay iteration: one comparison with the profiled op,
 * the plan's CSR lists at this position, and, only while something is
 * evicted, a binary search per parameter word.  No allocation.
 */
#include <stdlib.h>
#include <string.h>

#include "../interpose/remat.h"
#include "../interpose/alloc/alloc.h"
#include "../profiler/internal.h"
#include "acquire.h"
#include "internal.h"

struct replay_engine E = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define MAX_DIVERGED 3

void replay_profile_free(struct replay_profile *p)
{
	if (!p)
		return;
	free(p->ops);
	free(p->bufs);
	free(p->wr);
	free(p->ref);
	free(p->seq);
	free(p);
}

static struct replay_profile *sort_P;
static int by_addr_cmp(const void *a, const void *b)
{
	uint64_t x = sort_P->bufs[*(const int32_t *)a].addr,
	         y = sort_P->bufs[*(const int32_t *)b].addr;
	return x < y ? -1 : x > y;
}

static void free_state(void)
{
	replay_plan_drop();
	free(E.live);
	free(E.evicted);
	free(E.transient);
	free(E.saved);
	free(E.bstreams);
	free(E.src_of);
	free(E.iv);
	free(E.by_addr);
	E.live = E.evicted = E.transient = NULL;
	E.saved = E.bstreams = NULL;
	E.src_of = E.by_addr = NULL;
	E.iv = NULL;
	replay_profile_free(E.P);
	E.P = NULL;
}

/* Per-iteration state back to "everything as the program left it". */
static void iteration_reset(void)
{
	const struct replay_profile *P = E.P;
	for (int32_t b = 0; b < P->nbufs; b++)
		E.live[b] = P->bufs[b].alloc_at < 0;
	memset(E.evicted, 0, (size_t)P->nbufs);
	memset(E.transient, 0, (size_t)P->nbufs);
	E.niv = 0;
	E.nalloc = 0;
	E.diverged = 0;
	E.tentative = 0;
}

/* The iteration's index in the process, as the profiler counts them (set-up
 * and a partial first iteration are iteration 0), for the log. */
static unsigned long long abs_iter(void)
{
	return (unsigned long long)(E.P->first_iter + (int64_t)E.iter);
}

/* The allocator's peak since the last reset, folded into the peak of the
 * replay iterations (the parts that applied the plan). */
static void note_peak(void)
{
	struct remat_alloc_stats st;
	remat_alloc_stats(&st);
	remat_log(REMAT_LOG_DEBUG, "iteration %llu: physical peak %llu while the plan applied",
	          abs_iter(), (unsigned long long)st.peak);
	if (st.peak > E.applied_peak)
		E.applied_peak = st.peak;
}

/* Swapping to the host (interpose/alloc/swap.c) is the safety net of the
 * iterations that do not apply the plan.  Never while a rebuild may run:
 * making room could take a buffer a replayed op reads. */
static void swap_allow(int on)
{
	remat_alloc_swap_enable(on);
}

static void lift_budget(void)
{
	remat_alloc_set_budget(0);
	remat_alloc_follow(NULL, 0);
}

/* Ends the plan for the rest of this iteration. */
static void diverge(CUstream s, const char *what, int32_t pos)
{
	if (E.applying) {
		remat_log(REMAT_LOG_INFO,
		          "iteration %llu diverges from the profile at op %d (%s): rebuilding "
		          "%d evicted buffer(s), passing through",
		          abs_iter(), pos, what, E.niv);
		/* The rest of the iteration runs unmodified, so does the rebuild:
		 * it may need more than the plan foresaw. */
		if (!E.verifying)
			note_peak();
		lift_budget();
		replay_rebuild_all(s);
	} else {
		remat_log(REMAT_LOG_DEBUG, "iteration %llu diverges from the profile at op %d (%s)",
		          abs_iter(), pos, what);
	}
	E.applying = 0;
	E.verifying = 0;
	swap_allow(1);
	if (!E.diverged) {
		E.diverged = 1;
		E.ndiverged++;
	}
	E.pos = -1;
}

/* No plan for this graph, for good: the job runs unmodified, and ops go
 * straight to the driver again (the pass-through path). */
void replay_no_plan(void)
{
	E.acq = ACQ_NONE;
	E.applying = E.verifying = 0;
	lift_budget();
	swap_allow(1);
	remat_alloc_quarantine(0);
	/* Swapped allocations keep every op checked (profiler/swapcheck.c). */
	__atomic_store_n(&remat_tracking,
	                 __atomic_load_n(&remat_alloc_swap_armed, __ATOMIC_ACQUIRE),
	                 __ATOMIC_RELEASE);
}

static void poll_plan(void)
{
	int ts = __atomic_load_n(&E.trace_status, __ATOMIC_ACQUIRE);
	if (E.acq == ACQ_WAIT_TRACE && ts) {
		if (ts < 0 || acquire_begin(remat_cfg.trace_dir, E.P->graph_hash, E.P->nops,
		                            (int64_t)E.budget)) {
			replay_no_plan();
			remat_log(REMAT_LOG_INFO, "no plan: training continues unmodified");
			return;
		}
		E.acq = ACQ_PENDING;
	}
	if (E.acq != ACQ_PENDING)
		return;
	struct rplan *pl = NULL;
	switch (acquire_poll(&pl)) {
	case ACQUIRE_READY:
		if (!pl || replay_plan_install(pl)) {
			acquire_invalidate_cached(E.P->graph_hash, (int64_t)E.budget);
			replay_no_plan();
			return;
		}
		E.acq = ACQ_HAVE;
		remat_log(REMAT_LOG_INFO,
		          "plan for graph 0x%016llx applied from iteration %llu: planned peak %lld "
		          "bytes (baseline %lld), budget %llu",
		          (unsigned long long)E.P->graph_hash, abs_iter(), (long long)E.plan->peak,
		          (long long)E.plan->baseline_peak, (unsigned long long)E.budget);
		break;
	case ACQUIRE_FAILED:
	case ACQUIRE_IDLE:
		replay_no_plan();
		break;
	default:
		break;
	}
}

/* Between the last op of an iteration and the first of the next. */
/* The plan's budget and the measure of its peak, from the iteration's
 * op 0 on (a guessed boundary is confirmed there). */
static void enforce(void)
{
	if (!E.applying || E.verifying)
		return;
	/* The plan assumes every buffer resident: what went to the host
	 * before it comes back now, at the iteration's lowest point. */
	if (__atomic_load_n(&remat_alloc_nswapped, __ATOMIC_RELAXED)) {
		remat_log(REMAT_LOG_INFO, "plan applies: bringing %d swapped allocation(s) back",
		          remat_alloc_nswapped);
		remat_alloc_swap_in(NULL, 0);
	}
	remat_alloc_set_budget(E.budget);
	remat_alloc_poll(1); /* what the unmodified part left pooled goes */
	E.peak_reset = 1;
	remat_alloc_reset_peak();
}

/* tentative: guessed from the profile's last op while lost; confirmed when
 * op 0 matches, forgotten quietly when it does not. */
static void boundary(int tentative)
{
	remat_alloc_swap_report((long long)abs_iter());
	if (!E.diverged && E.iter)
		E.ndiverged = 0;
	if (E.applying)
		remat_log(
		    REMAT_LOG_DEBUG, "iteration %llu replayed: %llu evictions, %llu replays so far",
		    abs_iter(), (unsigned long long)E.evictions, (unsigned long long)E.replays);
	int had = E.niv || E.applying;
	if (E.applying && !E.verifying)
		note_peak();
	if (E.verifying && !E.diverged)
		replay_verify_end_iteration();
	E.verifying = 0;
	E.iter++;
	if (E.acq == ACQ_WAIT_TRACE || E.acq == ACQ_PENDING)
		poll_plan();
	iteration_reset();
	E.pos = 0;
	E.applying = E.plan != NULL;
	/* A verification iteration evicts nothing: no budget to keep. */
	E.verifying = E.applying && replay_verify_wanted();
	swap_allow(!E.applying);

	if (E.applying) {
		CUdeviceptr *a = malloc((size_t)(E.P->nseq + 1) * sizeof(*a));
		for (int32_t n = 0; a && n < E.P->nseq; n++)
			a[n] = E.P->seq[n] >= 0 ? E.P->bufs[E.P->seq[n]].addr : 0;
		remat_alloc_follow(a, a ? (size_t)E.P->nseq : 0);
		free(a);
	}
	/* Deferred unmaps end here, so the quarantined ranges are handed back
	 * with nothing mapped under them; the pool shrinks under the budget.
	 * Only iterations that apply the plan quarantine freed ranges: the
	 * others reuse memory as the program would. */
	remat_alloc_boundary(had);
	remat_alloc_quarantine(E.applying);
	E.tentative = tentative;
	if (!tentative)
		enforce();
}

void replay_start(struct replay_profile *p, uint64_t budget, int64_t level)
{
	pthread_mutex_lock(&E.lock);
	free_state();
	E.P = p;
	E.budget = budget;
	E.acq = ACQ_WAIT_TRACE;
	size_t nb = (size_t)(p->nbufs ? p->nbufs : 1);
	E.live = calloc(nb, 1);
	E.evicted = calloc(nb, 1);
	E.transient = calloc(nb, 1);
	E.saved = calloc(nb, sizeof(*E.saved));
	E.bstreams = calloc(nb, sizeof(*E.bstreams));
	E.iv = calloc(nb, sizeof(*E.iv));
	E.by_addr = malloc(nb * sizeof(*E.by_addr));
	E.src_of = malloc((size_t)(p->nops ? p->nops : 1) * sizeof(*E.src_of));
	if (!E.live || !E.evicted || !E.transient || !E.saved || !E.bstreams || !E.iv ||
	    !E.by_addr || !E.src_of) {
		remat_warn("out of host memory for run mode; training continues unmodified");
		E.acq = ACQ_NONE;
	} else {
		memset(E.src_of, 0xff, (size_t)p->nops * sizeof(*E.src_of));
		for (int32_t b = 0; b < p->nbufs; b++)
			E.by_addr[b] = b;
		sort_P = p;
		qsort(E.by_addr, (size_t)p->nbufs, sizeof(*E.by_addr), by_addr_cmp);
		for (int32_t k = 0; k < p->nops; k++) {
			const struct replay_op *q = &p->ops[k];
			for (uint32_t i = 0; i < q->nref; i++)
				if (q->stream_id >= 0 && q->stream_id < 64)
					E.bstreams[p->ref[q->ref_off + i]] |= 1ull << q->stream_id;
		}
	}
	/* The op being issued now starts the first iteration after the profile;
	 * the allocations made since the profile's last op are its own. */
	int32_t nalloc = E.nalloc;
	E.iter = 0;
	if (E.live)
		iteration_reset();
	E.nalloc = nalloc;
	E.level = level;
	E.lost_ops = 0;
	E.pos = 0;
	remat_alloc_quarantine(0);
	E.applying = 0;
	E.ndiverged = 0;
	pthread_mutex_unlock(&E.lock);
}

void replay_trace_written(int ok)
{
	__atomic_store_n(&E.trace_status, ok ? 1 : -1, __ATOMIC_RELEASE);
}

static int same_op(const struct replay_op *q, const struct remat_op *op)
{
	if (q->kind != (int)op->kind || q->stream != op->stream)
		return 0;
	switch (op->kind) {
	case REMAT_OP_KERNEL: {
		int extra = 0;
		for (void **e = op->extra; e && *e != CU_LAUNCH_PARAM_END; e += 2)
			extra |= e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER;
		return q->func == op->func && !memcmp(q->grid, op->grid, sizeof(q->grid)) &&
		       !memcmp(q->block, op->block, sizeof(q->block)) && q->shmem == op->shmem &&
		       extra == q->via_extra;
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
static int32_t touches_evicted(const struct replay_op *q, const struct remat_op *op)
{
	switch (op->kind) {
	case REMAT_OP_KERNEL: {
		if (q->via_extra) {
			const uint8_t *buf = NULL;
			size_t size = 0;
			for (void **e = op->extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
				if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
					buf = e[1];
				else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1])
					size = *(size_t *)e[1];
			}
			for (size_t off = 0; buf && off + 8 <= size; off += 8) {
				uint64_t v;
				memcpy(&v, buf + off, 8);
				int32_t b = replay_find_evicted(v, v + 1);
				if (b >= 0)
					return b;
			}
			return -1;
		}
		const struct remat_kinfo *k = q->kinfo;
		for (size_t j = 0; k && j < k->nparams; j++) {
			uint32_t off = k->param[j][0], size = k->param[j][1];
			/* Words at 8-aligned offsets of the packed parameters. */
			for (uint32_t w = (off + 7) & ~7u; w + 8 <= off + size; w += 8) {
				uint64_t v;
				memcpy(&v, (const uint8_t *)op->params[j] + (w - off), 8);
				int32_t b = replay_find_evicted(v, v + 1);
				if (b >= 0)
					return b;
			}
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
		/* A graph's kernels are not ours to see: anything may be read. */
		return E.niv ? E.iv[0].buf : -1;
	}
}

/* Gives up on this profile and its plan: the profiler starts over. */
static int reprofile(struct remat_op *op, const char *why)
{
	remat_log(REMAT_LOG_INFO, "%s: profiling again", why);
	acquire_reset();
	lift_budget();
	swap_allow(1);
	remat_alloc_quarantine(0);
	free_state();
	__atomic_store_n(&E.trace_status, 0, __ATOMIC_RELEASE);
	E.reprofiles++;
	op->slot = -1;
	pthread_mutex_unlock(&E.lock);
	return REPLAY_REPROFILE;
}

int replay_op_begin(struct remat_op *op)
{
	pthread_mutex_lock(&E.lock);
	if (!E.P || E.acq == ACQ_NONE) {
		/* No plan will come: nothing to check. */
		op->slot = -1;
		pthread_mutex_unlock(&E.lock);
		return REPLAY_CONTINUE;
	}
	remat_alloc_poll(0);
	if (E.pos < 0) {
		/* Lost after a divergence: an iteration can only start with the
		 * profile's op 0 at the profile's memory level.  Lost for as long
		 * as MAX_DIVERGED iterations: the program is not doing what was
		 * profiled any more. */
		if (!same_op(&E.P->ops[0], op) || E.level != E.P->level0) {
			if (++E.lost_ops >= (uint64_t)MAX_DIVERGED * (uint64_t)E.P->nops)
				return reprofile(op, "no iteration like the profiled one");
			return REPLAY_CONTINUE; /* lock held until replay_op_end */
		}
		boundary(0);
	}
	int32_t pos = E.pos;
	const struct replay_op *q = &E.P->ops[pos];
	if (!same_op(q, op)) {
		if (E.tentative) {
			/* The guessed boundary was none. */
			E.pos = -1;
			E.applying = E.verifying = 0;
			lift_budget();
			swap_allow(1);
		} else {
			diverge(op->stream, "another op", pos);
			if (E.ndiverged >= MAX_DIVERGED)
				return reprofile(op, "divergent iterations in a row");
		}
		return REPLAY_CONTINUE; /* lock held until replay_op_end */
	}
	if (E.tentative) {
		E.tentative = 0;
		enforce();
	}
	E.lost_ops = 0;
	if (E.verifying) {
		if (E.src_of[pos] >= 0)
			replay_capture(pos, op);
		replay_verify_begin(pos, op->stream);
	} else if (E.applying) {
		if (E.plan->step_off[pos] != E.plan->step_off[pos + 1] &&
		    replay_steps(pos, op->stream, 0, pos))
			remat_log(REMAT_LOG_ERROR, "rebuild before op %d incomplete", pos);
		int32_t b = E.niv ? touches_evicted(q, op) : -1;
		if (b >= 0) {
			E.rebuilds_unplanned++;
			diverge(op->stream, "an unplanned access to an evicted buffer", pos);
			remat_log(REMAT_LOG_INFO, "op %d touches evicted buffer %d: rebuilt first",
			          pos, b);
			return REPLAY_CONTINUE; /* lock held until replay_op_end */
		}
		if (E.src_of[pos] >= 0)
			replay_capture(pos, op);
	}
	/* lock held until replay_op_end: positions follow issue order */
	return REPLAY_CONTINUE;
}

void replay_op_end(struct remat_op *op, CUresult rc)
{
	(void)rc;
	if (op->slot == -1)
		return;
	if (E.pos < 0) {
		/* Lost: the profile's last op may end an iteration. */
		if (same_op(&E.P->ops[E.P->nops - 1], op))
			boundary(1);
		pthread_mutex_unlock(&E.lock);
		return;
	}
	int32_t pos = E.pos;
	if (E.applying && !E.verifying && E.plan->evict_off[pos] != E.plan->evict_off[pos + 1])
		replay_evict_after(pos, op->stream);
	if (++E.pos == E.P->nops)
		boundary(0);
	pthread_mutex_unlock(&E.lock);
}

void replay_alloc(CUdeviceptr p, size_t size)
{
	pthread_mutex_lock(&E.lock);
	E.level += (int64_t)size;
	if (E.P && E.applying) {
		int32_t n = E.nalloc;
		int32_t b = n < E.P->nseq ? E.P->seq[n] : -1;
		if (b < 0 || E.P->bufs[b].size != size || E.P->bufs[b].addr != p) {
			if (E.tentative) {
				E.pos = -1;
				E.applying = E.verifying = 0;
				lift_budget();
				swap_allow(1);
			} else {
				diverge(NULL, b < 0 ? "an extra allocation" : "another allocation",
				        E.pos);
			}
		} else {
			E.live[b] = 1;
		}
	}
	E.nalloc++;
	pthread_mutex_unlock(&E.lock);
}

void replay_free(CUdeviceptr p)
{
	struct remat_alloc_info info;
	if (!remat_alloc_owns(p, &info))
		return;
	pthread_mutex_lock(&E.lock);
	E.level -= (int64_t)info.size;
	int32_t b = E.P ? replay_buf_at(p) : -1;
	if (b >= 0) {
		if (E.evicted[b]) {
			E.evicted[b] = 0;
			replay_iv_del(b);
		}
		E.live[b] = 0;
	}
	pthread_mutex_unlock(&E.lock);
}

void replay_shutdown(void)
{
	pthread_mutex_lock(&E.lock);
	if (E.P && E.applying && !E.verifying)
		note_peak();
	if (E.P && E.peak_reset)
		remat_log(REMAT_LOG_INFO,
		          "run mode: physical peak %llu bytes in replay iterations, budget %llu",
		          (unsigned long long)E.applied_peak, (unsigned long long)E.budget);
	if (E.P && E.plan)
		remat_log(REMAT_LOG_INFO,
		          "run mode: %llu iterations, %llu evictions, %llu replays, %llu unplanned "
		          "rebuilds",
		          (unsigned long long)E.iter, (unsigned long long)E.evictions,
		          (unsigned long long)E.replays, (unsigned long long)E.rebuilds_unplanned);
	pthread_mutex_unlock(&E.lock);
}
