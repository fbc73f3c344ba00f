/*
 * stream.c — streams as worker threads with a FIFO of ops.
 *
 * Ordering rules, as CUDA specifies them:
 *  - ops of one stream run in order, each after the previous completed;
 *  - an op on the legacy default stream waits for all work already queued
 *    on the context's blocking streams, and an op on a blocking stream waits
 *    for all work already queued on the legacy stream (streams created with
 *    CU_STREAM_NON_BLOCKING take part in neither);
 *  - cuStreamWaitEvent adds a wait for the event's recorded point.
 * Each op holds references to the completion markers it waits for; the
 * worker blocks on them before running the op, and its simulated start
 * time is the latest of those completion times (clock.c).
 */
#include "driver.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cond = PTHREAD_COND_INITIALIZER;
static _Atomic uint32_t next_stream_id = 1;
static _Atomic int workers; /* started and not yet past their last op */

static _Noreturn void out_of_memory(void)
{
	fprintf(stderr, "simcuda: out of host memory\n");
	abort();
}

static struct sim_marker *marker_new(int refs)
{
	struct sim_marker *m = calloc(1, sizeof(*m));
	if (m == NULL)
		out_of_memory();
	atomic_init(&m->refs, refs);
	return m;
}

void marker_ref(struct sim_marker *m)
{
	atomic_fetch_add(&m->refs, 1);
}

void marker_unref(struct sim_marker *m)
{
	if (m && atomic_fetch_sub(&m->refs, 1) == 1)
		free(m);
}

bool marker_done(struct sim_marker *m)
{
	pthread_mutex_lock(&sync_lock);
	bool d = m->done;
	pthread_mutex_unlock(&sync_lock);
	return d;
}

uint64_t marker_block(struct sim_marker *m)
{
	pthread_mutex_lock(&sync_lock);
	while (!m->done)
		pthread_cond_wait(&sync_cond, &sync_lock);
	uint64_t t = m->end_ns;
	pthread_mutex_unlock(&sync_lock);
	return t;
}

void marker_wait(struct sim_marker *m)
{
	clock_host_observe(marker_block(m));
}

static void marker_complete(struct sim_marker *m, uint64_t end)
{
	pthread_mutex_lock(&sync_lock);
	m->end_ns = end;
	m->done = true;
	pthread_cond_broadcast(&sync_cond);
	pthread_mutex_unlock(&sync_lock);
}

struct sim_op *op_new(enum op_kind kind)
{
	struct sim_op *op = calloc(1, sizeof(*op));
	if (op == NULL)
		out_of_memory();
	op->kind = kind;
	return op;
}

void op_free(struct sim_op *op)
{
	for (unsigned i = 0; i < op->nwaits; i++)
		marker_unref(op->waits[i]);
	for (unsigned i = 0; i < op->nmore; i++)
		marker_unref(op->more_waits[i]);
	free(op->more_waits);
	engine_hazards_free(op);
	marker_unref(op->marker);
	if (op->kind == OP_KERNEL) {
		free(op->u.kernel.params);
		free(op->u.kernel.args);
	} else if (op->kind == OP_MEMCPY) {
		free(op->u.copy.staging);
	}
	free(op);
}

static void add_more(struct sim_op *op, struct sim_marker *m)
{
	struct sim_marker **n = realloc(op->more_waits, (op->nmore + 1) * sizeof(*n));
	if (n == NULL)
		out_of_memory();
	marker_ref(m);
	n[op->nmore++] = m;
	op->more_waits = n;
}

void op_wait_on(struct sim_op *op, struct sim_marker *m)
{
	if (m == NULL)
		return;
	if (op->nwaits < sizeof(op->waits) / sizeof(op->waits[0])) {
		marker_ref(m);
		op->waits[op->nwaits++] = m;
	} else {
		add_more(op, m);
	}
}

static void unlink_stream(struct sim_stream *s)
{
	struct sim_ctx *ctx = s->ctx;
	pthread_mutex_lock(&ctx->lock);
	for (struct sim_stream **p = &ctx->streams; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	marker_unref(s->last);
	s->last = NULL;
	pthread_mutex_unlock(&ctx->lock);
}

/* The worker's wait for what op waits for (and for the copies engine_check
 * looks at): its simulated start, or UINT64_MAX when the stream was parked
 * first (the op is put back). */
static uint64_t wait_for_start(struct sim_stream *s, struct sim_op *op)
{
	uint64_t start = atomic_load(&s->time);
	if (op->host_floor > start)
		start = op->host_floor;
	unsigned nw = op->nwaits + op->nmore;
	pthread_mutex_lock(&sync_lock);
	for (unsigned i = 0; i < nw + op->nhazards; i++) {
		struct sim_marker *m = i < op->nwaits ? op->waits[i]
		                       : i < nw       ? op->more_waits[i - op->nwaits]
		                                      : engine_hazard_done(op, i - nw);
		while (!m->done && !atomic_load(&s->park))
			pthread_cond_wait(&sync_cond, &sync_lock);
		if (!m->done) {
			start = UINT64_MAX;
			break;
		}
		if (i < nw && m->end_ns > start)
			start = m->end_ns;
	}
	pthread_mutex_unlock(&sync_lock);
	if (start == UINT64_MAX) {
		pthread_mutex_lock(&s->lock);
		op->next = s->head;
		s->head = op;
		if (s->tail == NULL)
			s->tail = op;
		pthread_mutex_unlock(&s->lock);
	}
	return start;
}

static void *worker(void *arg)
{
	struct sim_stream *s = arg;
	void *altstack = fault_thread_init();
	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (s->head == NULL && !atomic_load(&s->park))
			pthread_cond_wait(&s->cond, &s->lock);
		if (atomic_load(&s->park)) {
			/* Parked for a fork (streams_park): the stream and its
			 * queue stay for the next worker. */
			pthread_mutex_unlock(&s->lock);
			fault_thread_fini(altstack);
			atomic_fetch_sub(&workers, 1);
			return NULL;
		}
		struct sim_op *op = s->head;
		s->head = op->next;
		if (s->head == NULL)
			s->tail = NULL;
		pthread_mutex_unlock(&s->lock);

		uint64_t start = wait_for_start(s, op);
		if (start == UINT64_MAX)
			continue;
		engine_check(s, op, start);
		bool exiting = op->kind == OP_EXIT;
		/* Fault injection: a slow user stream makes any missing
		 * dependency on it visible as wrong data. */
		if (sim_cfg.slow_stream_ms && !s->legacy && !s->per_thread && !exiting) {
			struct timespec ts = {sim_cfg.slow_stream_ms / 1000,
			                      (long)(sim_cfg.slow_stream_ms % 1000) * 1000000L};
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		}
		uint64_t end = start;
		if (!exiting) {
			op_execute(s, op, start, &end);
			atomic_fetch_add(&sim_stats.ops, 1);
		}
		atomic_store(&s->time, end);
		uint64_t seen = atomic_load(&sim_stats.sim_time_ns);
		while (seen < end &&
		       !atomic_compare_exchange_weak(&sim_stats.sim_time_ns, &seen, end))
			;
		if (op->marker)
			marker_complete(op->marker, end);
		op_free(op);
		if (exiting)
			break;
	}
	unlink_stream(s);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
	fault_thread_fini(altstack);
	atomic_fetch_sub(&workers, 1);
	return NULL;
}

static void push(struct sim_stream *s, struct sim_op *op)
{
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

struct sim_marker *stream_enqueue(struct sim_stream *s, struct sim_op *op, bool want_marker)
{
	struct sim_ctx *ctx = s->ctx;
	pthread_mutex_lock(&ctx->lock);
	/* Completed ops are waited for too: their simulated end times must
	 * count however fast the workers happened to be. */
	if (s->legacy) {
		for (struct sim_stream *t = ctx->streams; t; t = t->next)
			if (t != s && !t->dead && !(t->flags & CU_STREAM_NON_BLOCKING) && t->last)
				add_more(op, t->last);
		/* Later legacy ops follow this one, so the retired blocking
		 * streams need no further waits. */
		size_t keep = 0;
		for (size_t i = 0; i < ctx->nretired; i++) {
			if (ctx->retired_blocking[i]) {
				add_more(op, ctx->retired[i]);
				marker_unref(ctx->retired[i]);
			} else {
				ctx->retired[keep] = ctx->retired[i];
				ctx->retired_blocking[keep++] = false;
			}
		}
		ctx->nretired = keep;
	} else if (!(s->flags & CU_STREAM_NON_BLOCKING) && ctx->legacy && ctx->legacy->last) {
		op_wait_on(op, ctx->legacy->last);
	}
	op->marker = marker_new(want_marker ? 3 : 2); /* op, s->last, caller */
	marker_unref(s->last);
	s->last = op->marker;
	op->host_floor = clock_host();
	op->correlation = api_op_correlation();
	engine_enqueue(s, op);
	struct sim_marker *m = want_marker ? op->marker : NULL;
	push(s, op);
	pthread_mutex_unlock(&ctx->lock);
	return m;
}

struct sim_marker *stream_last(struct sim_stream *s)
{
	pthread_mutex_lock(&s->ctx->lock);
	struct sim_marker *m = s->last;
	if (m)
		marker_ref(m);
	pthread_mutex_unlock(&s->ctx->lock);
	return m;
}

/* Workers take no asynchronous signals: those belong to the program's own
 * threads.  Faults still arrive (they are synchronous). */
static int start_worker(struct sim_stream *s)
{
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGABRT);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	atomic_fetch_add(&workers, 1);
	int rc = pthread_create(&s->thread, &attr, worker, s);
	if (rc)
		atomic_fetch_sub(&workers, 1);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

CUresult stream_create(struct sim_ctx *ctx, unsigned flags, int priority, bool legacy,
                       bool per_thread, struct sim_stream **out)
{
	struct sim_stream *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->ctx = ctx;
	s->flags = flags;
	s->priority = priority;
	s->legacy = legacy;
	s->per_thread = per_thread;
	s->id = atomic_fetch_add(&next_stream_id, 1);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (start_worker(s)) {
		pthread_mutex_destroy(&s->lock);
		pthread_cond_destroy(&s->cond);
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&ctx->lock);
	s->next = ctx->streams;
	ctx->streams = s;
	if (legacy)
		ctx->legacy = s;
	pthread_mutex_unlock(&ctx->lock);
	if (!legacy && !per_thread)
		handle_add(s, H_STREAM);
	*out = s;
	return CUDA_SUCCESS;
}

void stream_destroy(struct sim_stream *s)
{
	/* The handle dies now; queued work still runs (CUDA semantics) and
	 * still counts for context synchronization and the legacy stream, so
	 * the stream stays in the context's list until its worker ends. */
	handle_del(s);
	struct sim_ctx *ctx = s->ctx;
	pthread_mutex_lock(&ctx->lock);
	s->dead = true;
	if (s->last) {
		if (ctx->nretired == ctx->capretired) {
			size_t nc = ctx->capretired ? ctx->capretired * 2 : 16;
			struct sim_marker **nr = realloc(ctx->retired, nc * sizeof(*nr));
			bool *nb = realloc(ctx->retired_blocking, nc * sizeof(*nb));
			if (nr == NULL || nb == NULL)
				out_of_memory();
			ctx->retired = nr;
			ctx->retired_blocking = nb;
			ctx->capretired = nc;
		}
		marker_ref(s->last);
		ctx->retired[ctx->nretired] = s->last;
		ctx->retired_blocking[ctx->nretired++] = !(s->flags & CU_STREAM_NON_BLOCKING);
	}
	pthread_mutex_unlock(&ctx->lock);
	push(s, op_new(OP_EXIT));
}

/* ---- parking the workers for a fork (sweep.c) -------------------------- */

static void nap(void)
{
	struct timespec ts = {0, 100000};
	nanosleep(&ts, NULL);
}

/* Threads of this process, from /proc/self/status; -1 when unreadable. */
static long thread_count(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	const char *t = strstr(buf, "\nThreads:");
	return t ? strtol(t + 10, NULL, 10) : -1;
}

/* Each worker ends after the op it is running, or while it waits for
 * another stream, its queue left as it is: the fork sees the device as far
 * as it got, as a fresh process would at that point, not a synchronized
 * one (a synchronization would also move the host's simulated clock). */
bool streams_park(void)
{
	struct sim_ctx *ctx = &sim_primary;
	pthread_mutex_lock(&ctx->lock);
	for (struct sim_stream *s = ctx->streams; s; s = s->next) {
		pthread_mutex_lock(&s->lock);
		atomic_store(&s->park, true);
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&ctx->lock);
	pthread_mutex_lock(&sync_lock);
	pthread_cond_broadcast(&sync_cond);
	pthread_mutex_unlock(&sync_lock);
	/* As long as their ops take (a synchronization would wait as long). */
	while (atomic_load(&workers) > 0)
		nap();
	/* Then a thread is gone once the kernel says so (its exit code, which
	 * may take locks, has run): 1 s is ample; a thread of the program's
	 * own stays. */
	for (int i = 0; i < 10000; i++) {
		if (thread_count() == 1)
			return true;
		nap();
	}
	return false;
}

void streams_resume(void)
{
	struct sim_ctx *ctx = &sim_primary;
	pthread_mutex_lock(&ctx->lock);
	for (struct sim_stream *s = ctx->streams; s; s = s->next) {
		atomic_store(&s->park, false);
		if (start_worker(s)) {
			fprintf(stderr, "simcuda: cannot start a stream worker again\n");
			abort();
		}
	}
	pthread_mutex_unlock(&ctx->lock);
}

/* ---- the per-thread default stream ------------------------------------- */

static pthread_key_t ptds_key;
static pthread_once_t ptds_once = PTHREAD_ONCE_INIT;
static __thread struct sim_stream *ptds;

static void ptds_exit(void *p)
{
	stream_destroy(p);
}

static void ptds_key_create(void)
{
	pthread_key_create(&ptds_key, ptds_exit);
}

static CUresult per_thread_stream(struct sim_ctx *ctx, struct sim_stream **out)
{
	if (ptds == NULL) {
		pthread_once(&ptds_once, ptds_key_create);
		/* Blocking: it synchronizes with the legacy stream. */
		CUresult r = stream_create(ctx, 0, 0, false, true, &ptds);
		if (r != CUDA_SUCCESS)
			return r;
		pthread_setspecific(ptds_key, ptds);
	}
	*out = ptds;
	return CUDA_SUCCESS;
}

CUresult stream_resolve(CUstream h, bool per_thread, struct sim_ctx *ctx, struct sim_stream **out)
{
	if (h == NULL)
		h = per_thread ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
	if (h == CU_STREAM_LEGACY) {
		*out = ctx->legacy;
		return CUDA_SUCCESS;
	}
	if (h == CU_STREAM_PER_THREAD)
		return per_thread_stream(ctx, out);
	struct sim_stream *s = (struct sim_stream *)h;
	if (!handle_is(s, H_STREAM))
		return CUDA_ERROR_INVALID_HANDLE;
	if (s->ctx != ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	*out = s;
	return CUDA_SUCCESS;
}

CUresult stream_current(CUstream h, bool per_thread, struct sim_stream **out)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	return r != CUDA_SUCCESS ? r : stream_resolve(h, per_thread, ctx, out);
}
