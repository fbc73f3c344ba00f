/*
 * verify_windows.c — REMAT_VERIFY=1 for what a plan keeps off the device:
 * in the verification iteration a buffer the plan would evict after an op
 * (or park for the iteration) stays mapped but is poisoned, each byte its
 * complement, its content kept on the host, until the plan would bring it
 * back.  Every kernel that runs while something is poisoned runs twice:
 * first by libremat on the poisoned content, then as the program issued
 * it on the real content, everything the profile saw it write put back in
 * between; outputs that differ mean it reads what the plan takes away, and
 * a second launch per poisoned buffer names which.  Those are excluded
 * like rebuilds that differ (verify.c).  docs/run-mode.md says what it costs.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/driver.h"
#include "../core/grow.h"
#include "../core/log.h"
#include "internal.h"

/* The poisoned buffers, each with its real content; the op whose outputs
 * on poisoned content wait for comparison with the real run's. */
static struct replay_windows {
	struct poisoned {
		int32_t b;
		uint8_t *real;
	} * v;
	int n;
	size_t cap;
	int32_t pending;   /* position of the op run poisoned, -1 none */
	uint8_t **outputs; /* per write of that op: what the poisoned run left */
	uint8_t **before;  /* per write: its content before the op */
	size_t nout;
	/* The poisoned buffers given their real content for the op at hand
	 * (the program's own run of it): poisoned again after it. */
	int32_t *lifted;
	int nlifted;
	size_t caplifted;
} vw = {.pending = -1};

static const struct prof_buf *buf_of(int32_t b)
{
	return &replay_engine.profile->bufs[b];
}

/* Device bytes of b into a new host copy (NULL on failure). */
static uint8_t *read_buf(int32_t b)
{
	const struct prof_buf *u = buf_of(b);
	uint8_t *h = malloc(u->size ? u->size : 1);
	if (h && u->size && remat_drv.cuMemcpyDtoH(h, u->addr, u->size) != CUDA_SUCCESS) {
		free(h);
		return NULL;
	}
	return h;
}

static int find(int32_t b)
{
	for (int i = 0; i < vw.n; i++)
		if (vw.v[i].b == b)
			return i;
	return -1;
}

/* Writes the complement of b's real content over it. */
static void complement_on_device(const struct poisoned *p)
{
	const struct prof_buf *u = buf_of(p->b);
	uint8_t *c = malloc(u->size ? u->size : 1);
	if (!c)
		return;
	for (uint64_t i = 0; i < u->size; i++)
		c[i] = (uint8_t)~p->real[i];
	remat_drv.cuMemcpyHtoD(u->addr, c, u->size);
	free(c);
}

/* b leaves the device in the plan: poisoned from here on (live and not
 * poisoned yet; a buffer whose content cannot be kept is not checked). */
static void poison(int32_t b)
{
	if (!replay_engine.live[b] || find(b) >= 0 || !buf_of(b)->size ||
	    REMAT_GROW(vw.v, vw.n, vw.cap))
		return;
	uint8_t *real = read_buf(b);
	if (!real)
		return;
	vw.v[vw.n] = (struct poisoned){b, real};
	complement_on_device(&vw.v[vw.n++]);
}

static void put_real(int i)
{
	const struct prof_buf *u = buf_of(vw.v[i].b);
	remat_drv.cuMemcpyHtoD(u->addr, vw.v[i].real, u->size);
}

static void unpoison(int i)
{
	put_real(i);
	free(vw.v[i].real);
	vw.v[i] = vw.v[--vw.n];
}

static void drop_pending(void)
{
	for (size_t w = 0; w < vw.nout; w++) {
		free(vw.outputs[w]);
		free(vw.before[w]);
	}
	free(vw.outputs);
	free(vw.before);
	vw.outputs = vw.before = NULL;
	vw.nout = 0;
	vw.pending = -1;
}

void replay_verify_unpoison_all(void)
{
	if (!vw.n && vw.pending < 0 && !vw.nlifted)
		return;
	remat_drv.cuCtxSynchronize();
	while (vw.n)
		unpoison(vw.n - 1);
	drop_pending();
	vw.nlifted = 0;
	remat_drv.cuCtxSynchronize();
}

/* Whether every output of op q (its writes in the profile) could be read
 * into outs (n of them, calloc'd by the caller). */
static int read_outputs(const struct prof_op *q, uint8_t **outs)
{
	for (size_t w = 0; w < q->nwrites; w++)
		if (!(outs[w] = read_buf(q->writes[w])))
			return 0;
	return 1;
}

static void put_outputs(const struct prof_op *q, uint8_t *const *outs)
{
	for (size_t w = 0; w < q->nwrites; w++)
		if (outs[w])
			remat_drv.cuMemcpyHtoD(buf_of(q->writes[w])->addr, outs[w],
			                       buf_of(q->writes[w])->size);
}

/* Op q (the program's call op) once more, on what the device holds. */
static CUresult run_again(const struct prof_op *q, const struct remat_op *op)
{
	CUresult r = prof_launch_as(q, op, op->stream, op->params, op->extra);
	CUresult s = remat_drv.cuCtxSynchronize();
	return r != CUDA_SUCCESS ? r : s;
}

static void lift_all(void)
{
	while (vw.n) {
		if (!REMAT_GROW(vw.lifted, vw.nlifted, vw.caplifted))
			vw.lifted[vw.nlifted++] = vw.v[vw.n - 1].b;
		unpoison(vw.n - 1);
	}
}

static void bring_back(int32_t pos)
{
	const struct pl_plan *pl = replay_engine.plan;
	for (uint32_t i = pl->step_off[pos]; i < pl->step_off[pos + 1]; i++) {
		int k = pl->steps[i].kind, at;
		if ((k == PL_STEP_MAP || k == PL_STEP_PREFETCH) &&
		    (at = find(pl->steps[i].arg)) >= 0)
			unpoison(at);
	}
}

/* A copy reads exactly its source range: one that reads a poisoned
 * buffer reads what the plan takes away. */
static void check_copy(int32_t pos, const struct remat_op *op)
{
	if (op->kind != REMAT_OP_MEMCPY || op->copy == REMAT_COPY_HTOD)
		return;
	for (int i = 0; i < vw.n; i++) {
		const struct prof_buf *u = buf_of(vw.v[i].b);
		if (op->src < u->addr + u->size && op->src + op->bytes > u->addr) {
			replay_verify_exclude(vw.v[i].b);
			remat_log(REMAT_LOG_INFO,
			          "verify: op %d copies from buffer %d while the plan keeps it off "
			          "the device; excluded",
			          pos, vw.v[i].b);
		}
	}
}

/* The kernel at pos, run by libremat on the poisoned content: its outputs
 * kept, what it overwrote put back (nothing is checked when that cannot
 * be done). */
static void run_poisoned(int32_t pos, const struct remat_op *op)
{
	const struct prof_op *q = &replay_engine.profile->ops[pos];
	size_t n = q->nwrites ? q->nwrites : 1;
	vw.before = calloc(n, sizeof(*vw.before));
	vw.outputs = calloc(n, sizeof(*vw.outputs));
	vw.nout = vw.before && vw.outputs ? q->nwrites : 0;
	if (!vw.before || !vw.outputs || !read_outputs(q, vw.before)) {
		drop_pending();
		return;
	}
	CUresult r = run_again(q, op);
	if (r != CUDA_SUCCESS || !read_outputs(q, vw.outputs)) {
		remat_log(REMAT_LOG_INFO,
		          "verify: op %d could not run on poisoned content (CUDA "
		          "error %d); its reads are not checked",
		          pos, (int)r);
		put_outputs(q, vw.before);
		drop_pending();
		return;
	}
	put_outputs(q, vw.before);
	vw.pending = pos;
}

/* Whether the plan maps b again in the iteration (a window that closes). */
static int mapped_again(int32_t b)
{
	const struct pl_plan *pl = replay_engine.plan;
	for (uint32_t i = 0; i < pl->step_off[pl->nops]; i++)
		if ((pl->steps[i].kind == PL_STEP_MAP || pl->steps[i].kind == PL_STEP_PREFETCH) &&
		    pl->steps[i].arg == b)
			return 1;
	return 0;
}

/* At op 0: what the plan keeps off the device from the iteration's start,
 * parked buffers (no op of the iteration touches one) and those dead
 * across the boundary until the plan maps them for their first write. */
static void poison_at_start(void)
{
	const struct pl_plan *pl = replay_engine.plan;
	for (int32_t i = 0; i < pl->nparked; i++)
		poison(pl->parked[i]);
	for (int32_t i = 0; i < pl->nboundary; i++)
		if (mapped_again(pl->boundary[i]))
			poison(pl->boundary[i]);
}

int replay_verify_windows_begin(int32_t pos, const struct remat_op *op)
{
	const struct pl_plan *pl = replay_engine.plan;
	const struct prof_op *q = &replay_engine.profile->ops[pos];
	if (!vw.n && !(pos == 0 && (pl->nparked || pl->nboundary)))
		return pl->evict_off[pos] != pl->evict_off[pos + 1];
	remat_drv.cuCtxSynchronize();
	if (pos == 0)
		poison_at_start();
	bring_back(pos);
	if (vw.n) {
		check_copy(pos, op);
		if (q->kind == REMAT_OP_KERNEL && q->replayable && !q->collective)
			run_poisoned(pos, op);
		lift_all();
	}
	remat_drv.cuCtxSynchronize();
	return 1;
}

/* Whether op q's outputs now are those in outs. */
static int outputs_are(const struct prof_op *q, uint8_t *const *outs)
{
	int same = 1;
	for (size_t w = 0; w < q->nwrites && same; w++) {
		uint8_t *now = read_buf(q->writes[w]);
		same = now && !memcmp(now, outs[w], buf_of(q->writes[w])->size);
		free(now);
	}
	return same;
}

/* Which lifted buffer the op reads: it runs again from its content before
 * it with each one alone poisoned.  The number found. */
static int culprits(int32_t pos, const struct remat_op *op, uint8_t *const *real)
{
	const struct prof_op *q = &replay_engine.profile->ops[pos];
	int found = 0;
	for (int i = 0; i < vw.nlifted; i++) {
		put_outputs(q, vw.before);
		poison(vw.lifted[i]);
		int at = find(vw.lifted[i]);
		int reads = run_again(q, op) == CUDA_SUCCESS && !outputs_are(q, real);
		if (at >= 0)
			unpoison(at);
		if (!reads)
			continue;
		found++;
		replay_verify_exclude(vw.lifted[i]);
		remat_log(REMAT_LOG_INFO,
		          "verify: op %d (%s) reads buffer %d while the plan keeps it off the "
		          "device; excluded",
		          pos, q->name, vw.lifted[i]);
	}
	return found;
}

/* The program's run of op pos against libremat's on poisoned content. */
static void compare_runs(int32_t pos, const struct remat_op *op)
{
	const struct prof_op *q = &replay_engine.profile->ops[pos];
	uint8_t **real = calloc(q->nwrites ? q->nwrites : 1, sizeof(*real));
	if (!real || !read_outputs(q, real) || outputs_are(q, vw.outputs))
		goto done;
	/* Another run on the real content tells a kernel whose results vary
	 * from run to run (atomic sums) from one that reads the poison. */
	put_outputs(q, vw.before);
	if (run_again(q, op) != CUDA_SUCCESS || !outputs_are(q, real)) {
		remat_log(REMAT_LOG_INFO,
		          "verify: op %d (%s) writes other bytes run twice on the same content; "
		          "what it reads is not checked",
		          pos, q->name);
	} else if (!culprits(pos, op, real)) {
		for (int i = 0; i < vw.nlifted; i++)
			replay_verify_exclude(vw.lifted[i]);
		remat_log(
		    REMAT_LOG_INFO,
		    "verify: op %d (%s) reads some of the %d buffer(s) the plan keeps off the "
		    "device; all excluded",
		    pos, q->name, vw.nlifted);
	}
	put_outputs(q, real);
done:
	for (size_t w = 0; real && w < q->nwrites; w++)
		free(real[w]);
	free(real);
}

void replay_verify_windows_end(int32_t pos, const struct remat_op *op)
{
	const struct pl_plan *pl = replay_engine.plan;
	remat_drv.cuCtxSynchronize();
	if (vw.pending == pos)
		compare_runs(pos, op);
	drop_pending();
	for (int i = 0; i < vw.nlifted; i++)
		poison(vw.lifted[i]);
	vw.nlifted = 0;
	for (uint32_t i = pl->evict_off[pos]; i < pl->evict_off[pos + 1]; i++)
		poison(pl->evict[i]);
	remat_drv.cuCtxSynchronize();
}
