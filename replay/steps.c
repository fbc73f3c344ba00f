/*
 * steps.c — what a plan does to memory: evict after an op (unmap once
 * every stream that used the buffer got past it), and the rebuild steps
 * before an op, all on the consumer's stream: map again at the same
 * address, replay the producing ops with the parameter bytes recorded in
 * this same iteration, save and restore side-written buffers around the
 * replay, release transients.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "../core/search.h"
#include "internal.h"

/* ---- evicted intervals: the unplanned-access check ---------------------- */

static uint64_t iv_lo(const void *iv, size_t i)
{
	return ((const struct replay_iv *)iv)[i].lo;
}

/* The first interval starting above addr. */
static int32_t iv_upper(uint64_t addr)
{
	return (int32_t)remat_search_after(replay_engine.iv, (size_t)replay_engine.niv, iv_lo,
	                                   addr);
}

int32_t replay_find_evicted(uint64_t lo, uint64_t hi)
{
	if (!replay_engine.niv || hi <= lo)
		return -1;
	int32_t i = iv_upper(hi - 1); /* first interval starting at or after hi */
	if (i > 0 && replay_engine.iv[i - 1].hi > lo)
		return replay_engine.iv[i - 1].buf;
	return -1;
}

void replay_iv_add(int32_t b)
{
	const struct prof_buf *u = &replay_engine.profile->bufs[b];
	int32_t i = iv_upper(u->addr);
	memmove(replay_engine.iv + i + 1, replay_engine.iv + i,
	        (size_t)(replay_engine.niv - i) * sizeof(*replay_engine.iv));
	replay_engine.iv[i] = (struct replay_iv){u->addr, u->addr + u->size, b};
	replay_engine.niv++;
}

void replay_iv_del(int32_t b)
{
	/* Found by its address (the list is sorted by it): the first interval
	 * starting there or after, then b among those starting there. */
	uint64_t addr = replay_engine.profile->bufs[b].addr;
	for (int32_t i = addr ? iv_upper(addr - 1) : 0;
	     i < replay_engine.niv && replay_engine.iv[i].lo == addr; i++)
		if (replay_engine.iv[i].buf == b) {
			memmove(replay_engine.iv + i, replay_engine.iv + i + 1,
			        (size_t)(replay_engine.niv - i - 1) * sizeof(*replay_engine.iv));
			replay_engine.niv--;
			return;
		}
}

void replay_iv_drop(uint64_t lo, uint64_t hi, int (*drop)(int32_t b))
{
	int32_t i = lo ? iv_upper(lo - 1) : 0, kept = i;
	for (; i < replay_engine.niv && replay_engine.iv[i].lo < hi; i++)
		if (!drop(replay_engine.iv[i].buf))
			replay_engine.iv[kept++] = replay_engine.iv[i];
	if (kept == i)
		return;
	memmove(replay_engine.iv + kept, replay_engine.iv + i,
	        (size_t)(replay_engine.niv - i) * sizeof(*replay_engine.iv));
	replay_engine.niv -= i - kept;
}

/* by_addr[i]'s address: by_addr lists the buffers by address. */
static uint64_t by_addr_key(const void *by_addr, size_t i)
{
	return replay_engine.profile->bufs[((const int32_t *)by_addr)[i]].addr;
}

int32_t replay_buf_at(uint64_t addr)
{
	size_t n = replay_engine.profile->nbufs,
	       i = remat_search_key(replay_engine.by_addr, n, by_addr_key, addr);
	return i < n ? replay_engine.by_addr[i] : -1;
}

/* ---- replay sources ------------------------------------------------------ */

void replay_capture(int32_t pos, const struct remat_op *op)
{
	struct replay_src *s = &replay_engine.srcs[replay_engine.src_of[pos]];
	const struct prof_op *q = &replay_engine.profile->ops[pos];
	s->iter = replay_engine.iter;
	s->op = *op;
	s->op.params = s->op.extra = NULL; /* the caller's, gone after the call */
	if (q->kind != REMAT_OP_KERNEL)
		return;
	if (q->via_extra) {
		size_t size;
		const uint8_t *buf = remat_op_extra_params(op, &size);
		if (buf)
			memcpy(s->params, buf, s->len);
		return;
	}
	const struct prof_kernel *k = &replay_engine.profile->kernels[q->kernel];
	for (size_t j = 0; j < k->nparams; j++)
		memcpy(s->params + k->param[j][0], op->params[j], k->param[j][1]);
}

/* A replay runs on the stream of the op that needs its output, which may
 * be one that never used op k's buffers in the profile: it becomes one of
 * their users, so their evictions and copies out wait for it too. */
static void note_users(const struct prof_op *q, CUstream st)
{
	for (int i = 0; i < replay_engine.profile->nstreams && i < 64; i++) {
		if (replay_engine.profile->streams[i] != st)
			continue;
		if (i != q->stream) {
			for (size_t j = 0; j < q->nreads; j++)
				replay_engine.bstreams[q->reads[j]] |= 1ull << i;
			for (size_t j = 0; j < q->nwrites; j++)
				replay_engine.bstreams[q->writes[j]] |= 1ull << i;
		}
		return;
	}
}

CUresult replay_launch(int32_t k, CUstream st)
{
	int32_t si = replay_engine.src_of[k];
	struct replay_src *s = si >= 0 ? &replay_engine.srcs[si] : NULL;
	if (!s || s->iter != replay_engine.iter) {
		if (!replay_engine.warned_src++)
			remat_warn(
			    "replay of op %d: it was not recorded in this iteration; the buffer "
			    "it writes cannot be rebuilt",
			    k);
		return CUDA_ERROR_NOT_FOUND;
	}
	const struct prof_op *q = &replay_engine.profile->ops[k];
	const struct remat_op *o = &s->op;
	CUresult r = CUDA_SUCCESS;
	replay_engine.totals.replays++;
	note_users(q, st);
	switch (q->kind) {
	case REMAT_OP_KERNEL:
		if (q->via_extra) {
			size_t len = s->len;
			void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, s->params,
			                 CU_LAUNCH_PARAM_BUFFER_SIZE, &len, CU_LAUNCH_PARAM_END};
			r = prof_launch_as(q, o, st, NULL, extra);
		} else {
			const struct prof_kernel *ki = &replay_engine.profile->kernels[q->kernel];
			void *stack[64], **kp = stack;
			if (ki->nparams > 64 && !(kp = malloc(ki->nparams * sizeof(*kp))))
				return CUDA_ERROR_OUT_OF_MEMORY;
			/* kernelParams point into this iteration's copy of the bytes */
			for (size_t j = 0; j < ki->nparams; j++)
				kp[j] = s->params + ki->param[j][0];
			r = prof_launch_as(q, o, st, kp, NULL);
			if (kp != stack)
				free(kp);
		}
		break;
	case REMAT_OP_MEMCPY:
		r = remat_drv.cuMemcpyDtoDAsync(o->dst, o->src, o->bytes, st);
		break;
	case REMAT_OP_MEMSET:
		r = o->elem == 1
		        ? remat_drv.cuMemsetD8Async(o->dst, (unsigned char)o->value, o->bytes, st)
		    : o->elem == 2 ? remat_drv.cuMemsetD16Async(o->dst, (unsigned short)o->value,
		                                                o->bytes / 2, st)
		                   : remat_drv.cuMemsetD32Async(o->dst, o->value, o->bytes / 4, st);
		break;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (r != CUDA_SUCCESS)
		remat_log(REMAT_LOG_INFO, "replay of op %d failed (CUDA error %d)", k, (int)r);
	return r;
}

/* ---- memory -------------------------------------------------------------- */

/* Whether a buffer of shared chunk run r other than b is mapped (none of
 * them is small: a region in a run is evictable): the run stays while one
 * is (docs/trace-format.md, "Shared chunks").  A buffer being prefetched
 * is mapped from its prefetch on, though still evicted until its await:
 * its copy back may already have written into the run. */
static int run_held(const struct remat_profile *p, uint32_t r, int32_t b)
{
	const struct prof_shared *sh = &p->shared[r];
	for (uint32_t k = 0; k < sh->n; k++) {
		int32_t o = sh->first + (int32_t)k;
		int coming = replay_engine.off && replay_engine.off[o] == REPLAY_OFF_COMING;
		if (o != b && (replay_engine.live[o] ? !replay_engine.evicted[o] || coming
		                                     : replay_engine.transient[o]))
			return 1;
	}
	return 0;
}

/* Buffer b's whole chunks, and the chunks it shares with others: mapping
 * a run that is mapped already does nothing, so a rebuild maps them all
 * (fresh ones where every other buffer of the run was evicted). */
CUresult replay_map_buf(int32_t b, CUstream s, const char *what)
{
	const struct remat_profile *p = replay_engine.profile;
	const struct prof_buf *u = &p->bufs[b];
	/* (a region with no whole chunk has only shared ones) */
	CUresult r =
	    u->rounded ? remat_alloc_map(prof_buf_map_addr(u), u->rounded, s) : CUDA_SUCCESS;
	for (int k = 0; k < 2 && r == CUDA_SUCCESS && u->shared[k]; k++) {
		const struct prof_shared *sh = &p->shared[u->shared[k] - 1];
		r = remat_alloc_map(sh->addr, sh->bytes, s);
	}
	if (r != CUDA_SUCCESS && what)
		remat_log(REMAT_LOG_INFO,
		          "%s of buffer %d (%llu bytes) does not fit in the budget of %lld bytes "
		          "(CUDA error %d)",
		          what, b, (unsigned long long)u->rounded, (long long)replay_engine.budget,
		          (int)r);
	return r;
}

static CUresult map_buf(int32_t b, CUstream s)
{
	return replay_map_buf(b, s, "rebuild");
}

/* Adds to st[0 .. *n) the streams of the iteration that reference buffer
 * b and are not there yet. */
static void streams_of(int32_t b, CUstream *st, int *n)
{
	/* bstreams has a bit for each of the first 64 stream ids. */
	for (int i = 0; i < replay_engine.profile->nstreams && *n < 64; i++) {
		if (!(replay_engine.bstreams[b] >> i & 1))
			continue;
		int seen = 0;
		for (int j = 0; j < *n && !seen; j++)
			seen = st[j] == replay_engine.profile->streams[i];
		if (!seen)
			st[(*n)++] = replay_engine.profile->streams[i];
	}
}

/* Unmaps b's whole chunks once streams st[0 .. n) got there, and the
 * shared runs no other buffer of theirs holds, once the streams of every
 * buffer of the run got there too (the others were evicted before, maybe
 * with work of theirs still running on it). */
static void unmap_with_runs(int32_t b, CUstream *st, int n)
{
	const struct remat_profile *p = replay_engine.profile;
	const struct prof_buf *u = &p->bufs[b];
	if (u->rounded)
		remat_alloc_unmap_after(prof_buf_map_addr(u), u->rounded, st, n);
	for (int k = 0; k < 2 && u->shared[k]; k++) {
		uint32_t r = u->shared[k] - 1;
		if (run_held(p, r, b))
			continue;
		const struct prof_shared *sh = &p->shared[r];
		int m = n;
		for (uint32_t j = 0; j < sh->n; j++)
			streams_of(sh->first + (int32_t)j, st, &m);
		if (replay_engine.off && m < 64)
			st[m++] = replay_engine.copy_out; /* an offload's copy out of one of them */
		remat_alloc_unmap_after(sh->addr, sh->bytes, st, m);
	}
}

void replay_unmap_fresh(int32_t b, CUstream s)
{
	CUstream st[64] = {s};
	unmap_with_runs(b, st, 1);
}

/* The streams whose work on buffer b must finish before it is unmapped:
 * every stream of the iteration that references it, and s. */
static void unmap_buf(int32_t b, CUstream s)
{
	CUstream st[64];
	int n = 0;
	st[n++] = s;
	streams_of(b, st, &n);
	/* an offload's copy out reads it too (offload.c) */
	if (replay_engine.off && replay_engine.off[b] == REPLAY_OFF_LEAVING && n < 64)
		st[n++] = replay_engine.copy_out;
	unmap_with_runs(b, st, n);
}

void replay_evict_after(int32_t p, CUstream s)
{
	const struct pl_plan *pl = replay_engine.plan;
	for (uint32_t i = pl->evict_off[p]; i < pl->evict_off[p + 1]; i++) {
		int32_t b = pl->evict[i];
		if (!replay_engine.live[b] || replay_engine.evicted[b])
			continue;
		unmap_buf(b, s);
		replay_engine.evicted[b] = 1;
		replay_iv_add(b);
		replay_engine.totals.evictions++;
		if (replay_engine.off && replay_engine.off[b] == REPLAY_OFF_LEAVING)
			replay_engine.off[b] = REPLAY_OFF_HOST;
	}
}

/* SAVE and STASH: buffer b's content into a copy of its own (whole
 * chunks, within the budget), slot[b] its address. */
static CUresult copy_aside(int32_t b, uint64_t *slot, CUstream s)
{
	const struct prof_buf *u = &replay_engine.profile->bufs[b];
	if (slot[b])
		return CUDA_SUCCESS; /* recovery runs steps again */
	uint64_t a;
	CUresult r = remat_alloc_scratch(u->size, &a, s);
	if (r != CUDA_SUCCESS) {
		remat_log(REMAT_LOG_INFO,
		          "no room for a copy of buffer %d within the budget of %lld bytes", b,
		          (long long)replay_engine.budget);
		return r;
	}
	if ((r = remat_drv.cuMemcpyDtoDAsync(a, u->addr, u->size, s)) != CUDA_SUCCESS) {
		remat_alloc_scratch_free(a, u->size, s);
		return r;
	}
	slot[b] = a;
	return CUDA_SUCCESS;
}

/* RESTORE and UNSTASH: the copy back into b, then freed.  It stays until
 * it is back: a failed copy leaves it for the recovery to try again. */
static CUresult copy_back(int32_t b, uint64_t *slot, CUstream s)
{
	const struct prof_buf *u = &replay_engine.profile->bufs[b];
	if (!slot[b])
		return CUDA_SUCCESS;
	CUresult r = remat_drv.cuMemcpyDtoDAsync(u->addr, slot[b], u->size, s);
	if (r != CUDA_SUCCESS)
		return r;
	remat_alloc_scratch_free(slot[b], u->size, s);
	slot[b] = 0;
	return CUDA_SUCCESS;
}

/* One step.  *mapped is set when a MAP step mapped a live buffer here (not
 * when it was mapped already). */
static CUresult step(const struct pl_step *st, CUstream s, int mode, int32_t cur, int *mapped)
{
	int32_t b = st->arg;
	CUresult r;
	*mapped = 0;
	switch (st->kind) {
	case PL_STEP_MAP:
		if (replay_engine.live[b] ? !replay_engine.evicted[b] : replay_engine.transient[b])
			return CUDA_SUCCESS; /* mapped already (recovery runs steps out of place) */
		if ((r = map_buf(b, s)) != CUDA_SUCCESS)
			return r;
		if (replay_engine.live[b]) {
			replay_engine.evicted[b] = 0;
			replay_iv_del(b);
			*mapped = 1;
		} else {
			replay_engine.transient[b] = 1;
		}
		return CUDA_SUCCESS;
	case PL_STEP_SAVE:
		return copy_aside(b, replay_engine.saved, s);
	case PL_STEP_RESTORE:
		return copy_back(b, replay_engine.saved, s);
	case PL_STEP_STASH:
		/* Kept past this position, until the UNSTASH that puts it back. */
		return copy_aside(b, replay_engine.stash, s);
	case PL_STEP_UNSTASH:
		return copy_back(b, replay_engine.stash, s);
	case PL_STEP_REPLAY:
		if (mode == 1 && b >= cur)
			return CUDA_SUCCESS; /* not issued yet in this iteration */
		return replay_launch(b, s);
	case PL_STEP_OFFLOAD:
	case PL_STEP_PREFETCH:
	case PL_STEP_AWAIT:
		return replay_offload_step(st->kind, b, (uint32_t)(st - replay_engine.plan->steps),
		                           s, mode);
	case PL_STEP_RELEASE:
		if (replay_engine.live[b]) {
			/* In recovery, a live buffer stays: the ops after cur will
			 * not run as planned. */
			if (replay_engine.evicted[b] || mode)
				return CUDA_SUCCESS;
			unmap_buf(b, s);
			replay_engine.evicted[b] = 1;
			replay_iv_add(b);
		} else if (replay_engine.transient[b]) {
			unmap_buf(b, s);
			replay_engine.transient[b] = 0;
		}
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

#define MAX_UNDO 256

/* Live buffers this sequence mapped hold nothing trustworthy once a step
 * fails: evicted again, so a recovery rebuilds them from the start. */
static void undo_maps(const int32_t *bufs, int n, CUstream s)
{
	for (int i = 0; i < n; i++) {
		unmap_buf(bufs[i], s);
		replay_engine.evicted[bufs[i]] = 1;
		replay_iv_add(bufs[i]);
	}
}

CUresult replay_steps(int32_t q, CUstream s, int mode, int32_t cur)
{
	const struct pl_plan *pl = replay_engine.plan;
	int32_t done[MAX_UNDO];
	int ndone = 0;
	for (uint32_t i = pl->step_off[q]; i < pl->step_off[q + 1]; i++) {
		int mapped;
		CUresult r = step(&pl->steps[i], s, mode, cur, &mapped);
		if (r != CUDA_SUCCESS) {
			undo_maps(done, ndone, s);
			return r;
		}
		if (mapped && ndone < MAX_UNDO)
			done[ndone++] = pl->steps[i].arg;
		else if (mapped)
			return CUDA_ERROR_OUT_OF_MEMORY; /* too long to undo: say it failed */
	}
	return CUDA_SUCCESS;
}

static int has_buf(const int32_t *list, size_t n, int32_t b)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == b)
			return 1;
	return 0;
}

/* Op q reads b (partial writes keep what they leave: reads too). */
static int reads_buf(const struct prof_op *q, int32_t b)
{
	return has_buf(q->reads, q->nreads, b) || has_buf(q->partial, q->npartial, b);
}

/* The op before position cur that last wrote buffer b, or -1. */
static int32_t last_writer(int32_t b, int32_t cur)
{
	const struct remat_profile *p = replay_engine.profile;
	for (int32_t k = cur - 1; k >= 0; k--)
		if (has_buf(p->ops[k].writes, p->ops[k].nwrites, b))
			return k;
	return -1;
}

/* Buffer b is freed in this iteration and no op from position cur on
 * references it. */
static int untouched_from(int32_t b, int32_t cur)
{
	const struct remat_profile *p = replay_engine.profile;
	if (p->bufs[b].free_at < 0)
		return 0;
	for (size_t k = (size_t)cur; k < p->nops; k++)
		if (reads_buf(&p->ops[k], b) || has_buf(p->ops[k].writes, p->ops[k].nwrites, b))
			return 0;
	return 1;
}

/* Replaying op k of b's chain (below) now changes nothing that holds
 * content but b: every other buffer it writes it covers whole without
 * reading it, and everything else it references is mapped and unwritten
 * since k (so it reads what it read then).  What else it writes is
 * written again identically (it still holds what k wrote), rebuilt with b
 * (evicted, and k its last writer), or kept: saved and put back around the
 * replay (a later op wrote it: llm.c reuses the slices of its fused q, k,
 * v output), mapped for the replay only when evicted. */
static int replay_safe(int32_t k, int32_t b, int32_t cur)
{
	const struct remat_profile *p = replay_engine.profile;
	const struct prof_op *q = &p->ops[k];
	if (!q->replayable || replay_engine.src_of[k] < 0)
		return 0;
	for (size_t i = 0; i < q->nreads; i++) {
		int32_t r = q->reads[i];
		if (r == b)
			continue; /* rebuilt by the chain's earlier ops */
		if (has_buf(q->writes, q->nwrites, r))
			return 0; /* updated in place: its content before k is gone */
		if (!p->bufs[r].small && (!replay_engine.live[r] || replay_engine.evicted[r]))
			return 0;
		if (last_writer(r, cur) > k)
			return 0;
	}
	for (size_t i = 0; i < q->nwrites; i++) {
		int32_t w = q->writes[i];
		if (w != b && (!replay_engine.live[w] || replay_engine.saved[w]))
			return 0; /* (a plan's save of it is still out) */
	}
	return 1;
}

#define MAX_CHAIN 16

/* The ops that made b's content at cur: from the last one before cur that
 * wrote it whole without reading it (a GEMM) to every later writer (a bias
 * added in place), each safe to replay now.  Their number, 0 none. */
static int chain_of(int32_t b, int32_t cur, int32_t *chain)
{
	const struct remat_profile *p = replay_engine.profile;
	int n = 0;
	for (int32_t k = last_writer(b, cur); k >= 0; k = last_writer(b, k)) {
		if (n == MAX_CHAIN || !replay_safe(k, b, cur))
			return 0;
		chain[n++] = k;
		if (!has_buf(p->ops[k].reads, p->ops[k].nreads, b))
			break; /* written whole, blind: the chain starts here */
		if (last_writer(b, k) < 0)
			return 0; /* its content from before the iteration is gone */
	}
	for (int i = 0; i < n / 2; i++) { /* in issue order */
		int32_t t = chain[i];
		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = t;
	}
	return n;
}

static void rebuilt(int32_t b)
{
	replay_engine.evicted[b] = 0;
	replay_iv_del(b);
	if (replay_engine.off)
		replay_engine.off[b] = REPLAY_OFF_NONE;
}

/* What one rebuild maps: buffers rebuilt with b, and buffers mapped only
 * for the replays (their content is a later op's: still evicted after). */
struct rebuild_maps {
	int32_t keep[MAX_UNDO], scratch[MAX_UNDO];
	int nkeep, nscratch;
};

/* Replays op k of b's chain: maps the evicted buffers it writes, saves
 * the mapped ones holding a later op's content, launches it, puts those
 * back. */
static CUresult replay_in_chain(int32_t k, int32_t b, int32_t cur, struct rebuild_maps *m,
                                CUstream s)
{
	const struct prof_op *q = &replay_engine.profile->ops[k];
	CUresult r = CUDA_SUCCESS;
	for (size_t i = 0; i < q->nwrites && r == CUDA_SUCCESS; i++) {
		int32_t w = q->writes[i];
		int mine = w == b || last_writer(w, cur) == k;
		if (!replay_engine.evicted[w]) {
			if (!mine && (r = copy_aside(w, replay_engine.saved, s)) == CUDA_SUCCESS)
				remat_log(REMAT_LOG_DEBUG,
				          "buffer %d kept around op %d, replayed for %d", w, k, b);
			continue;
		}
		if (has_buf(m->keep, (size_t)m->nkeep, w) ||
		    has_buf(m->scratch, (size_t)m->nscratch, w))
			continue;
		if (m->nkeep == MAX_UNDO || m->nscratch == MAX_UNDO)
			r = CUDA_ERROR_OUT_OF_MEMORY; /* too many to undo: say it failed */
		else if ((r = map_buf(w, s)) == CUDA_SUCCESS) {
			if (mine)
				m->keep[m->nkeep++] = w;
			else
				m->scratch[m->nscratch++] = w;
		}
	}
	if (r == CUDA_SUCCESS)
		r = replay_launch(k, s);
	/* Put back whatever happened: a saved buffer holds content still read. */
	for (size_t i = 0; i < q->nwrites; i++) {
		CUresult back = copy_back(q->writes[i], replay_engine.saved, s);
		if (r == CUDA_SUCCESS)
			r = back;
	}
	return r;
}

/* Rebuilds evicted buffer b by replaying its chain (with every other
 * evicted buffer the chain writes last), or maps it fresh when it is kept
 * unmapped across the boundary and not written yet in this iteration:
 * nothing in it is read before its first write. */
static CUresult rebuild_unplanned(int32_t b, int32_t cur, CUstream s)
{
	if (replay_engine.boundary[b] && last_writer(b, cur) < 0) {
		CUresult r = map_buf(b, s);
		if (r == CUDA_SUCCESS)
			rebuilt(b);
		return r;
	}
	int32_t chain[MAX_CHAIN];
	int nc = chain_of(b, cur, chain);
	if (!nc)
		return CUDA_ERROR_NOT_FOUND;
	struct rebuild_maps m;
	m.nkeep = m.nscratch = 0;
	CUresult r = CUDA_SUCCESS;
	for (int i = 0; i < nc && r == CUDA_SUCCESS; i++)
		r = replay_in_chain(chain[i], b, cur, &m, s);
	for (int i = 0; i < m.nscratch; i++)
		unmap_buf(m.scratch[i], s); /* still evicted, and listed as such */
	for (int i = 0; i < m.nkeep; i++)
		if (r != CUDA_SUCCESS)
			unmap_buf(m.keep[i], s);
		else
			rebuilt(m.keep[i]);
	return r;
}

/* The first op from cur on that touches b in the profile (around the
 * boundary: the next iteration's ops from 0) writes it whole without
 * reading it: nothing in b is read before that.  Why the plan evicted it
 * with no recipe. */
static int dead_from(int32_t b, int32_t cur)
{
	const struct remat_profile *p = replay_engine.profile;
	int32_t n = (int32_t)p->nops;
	for (int32_t i = 0; i < n; i++) {
		const struct prof_op *q = &p->ops[(cur + i) % n];
		if (reads_buf(q, b))
			return 0;
		if (has_buf(q->writes, q->nwrites, b))
			return 1;
	}
	return 0;
}

/* Evicted until freed by the plan: no recipe in the plan.  After each
 * rebuild the rest is tried again, since a rebuild may map the input of
 * another.  One that cannot be rebuilt stays unmapped: an op
 * reading it then fails on the device rather than computing with wrong
 * data.  The first error, or CUDA_SUCCESS. */
static CUresult rebuild_rest(int32_t cur, CUstream s, int32_t *newly_lost)
{
	CUresult first = CUDA_SUCCESS;
	for (int32_t i = 0; i < replay_engine.niv;) {
		CUresult r = rebuild_unplanned(replay_engine.iv[i].buf, cur, s);
		if (r == CUDA_SUCCESS) {
			i = 0; /* iv changed, and what is left may be rebuildable now */
			continue;
		}
		if (r != CUDA_ERROR_NOT_FOUND && first == CUDA_SUCCESS)
			first = r;
		i++;
	}
	for (int32_t i = 0; i < replay_engine.niv; i++) {
		int32_t b = replay_engine.iv[i].buf;
		/* Freed in this iteration and touched by no op before that: its
		 * content is never read again (an unforeseen access is still
		 * caught as one to an evicted buffer). */
		if (untouched_from(b, cur))
			continue;
		/* Its content is not read before the profile writes it again:
		 * mapped fresh, so that write (the program's, after a divergence)
		 * finds memory; unmapped it would fault. */
		if (dead_from(b, cur) && map_buf(b, s) == CUDA_SUCCESS) {
			remat_log(REMAT_LOG_DEBUG,
			          "buffer %d mapped again at op %d: written before it is read", b,
			          cur);
			rebuilt(b);
			i--;
			continue;
		}
		if (first == CUDA_SUCCESS)
			first = CUDA_ERROR_NOT_FOUND;
		if (!replay_engine.lost[b]++ && newly_lost)
			(*newly_lost)++;
		remat_log(REMAT_LOG_DEBUG, "buffer %d (%llu bytes at 0x%llx) lost at op %d: %s", b,
		          (unsigned long long)replay_engine.profile->bufs[b].size,
		          (unsigned long long)replay_engine.profile->bufs[b].addr, cur,
		          last_writer(b, cur) < 0 ? "not written in this iteration"
		                                  : "its last writer cannot be replayed now");
	}
	return first;
}

CUresult replay_rebuild_all(CUstream s, int32_t *newly_lost)
{
	/* What is on its way to or from the host comes back first. */
	CUresult first = replay_engine.plan ? replay_offload_restore_all(s) : CUDA_SUCCESS;
	if (!replay_engine.plan || !replay_engine.niv)
		return first;
	int32_t cur =
	    replay_engine.pos < 0 ? (int32_t)replay_engine.profile->nops : replay_engine.pos;
	/* The plan's own recipes, in plan order: an input rebuilt earlier in
	 * the plan is rebuilt here first too. */
	for (int32_t q = cur; q < (int32_t)replay_engine.profile->nops && replay_engine.niv; q++) {
		const struct pl_plan *pl = replay_engine.plan;
		int touches = 0;
		for (uint32_t i = pl->step_off[q]; i < pl->step_off[q + 1] && !touches; i++)
			touches = pl->steps[i].kind == PL_STEP_MAP &&
			          replay_engine.live[pl->steps[i].arg] &&
			          replay_engine.evicted[pl->steps[i].arg];
		CUresult r = touches ? replay_steps(q, s, 1, cur) : CUDA_SUCCESS;
		if (r != CUDA_SUCCESS && first == CUDA_SUCCESS)
			first = r;
	}
	CUresult r = rebuild_rest(cur, s, newly_lost);
	if (first == CUDA_SUCCESS)
		first = r;
	for (size_t b = 0; b < replay_engine.profile->nbufs; b++)
		if (replay_engine.transient[b]) {
			unmap_buf((int32_t)b, s);
			replay_engine.transient[b] = 0;
		}
	return first;
}

/* ---- plan install -------------------------------------------------------- */

void replay_copies_free(CUstream s)
{
	if (!replay_engine.profile)
		return;
	for (size_t b = 0; b < replay_engine.profile->nbufs; b++) {
		const struct prof_buf *u = &replay_engine.profile->bufs[b];
		if (replay_engine.saved[b])
			remat_alloc_scratch_free(replay_engine.saved[b], u->size, s);
		if (replay_engine.stash[b])
			remat_alloc_scratch_free(replay_engine.stash[b], u->size, s);
		replay_engine.saved[b] = replay_engine.stash[b] = 0;
	}
}

void replay_boundary_buffers(int keep)
{
	const struct remat_profile *p = replay_engine.profile;
	for (size_t i = 0; i < p->nbufs; i++) {
		int32_t b = (int32_t)i;
		if (!replay_engine.boundary[b] || !replay_engine.live[b] ||
		    replay_engine.evicted[b] == keep)
			continue;
		if (keep) {
			unmap_buf(b, NULL);
			replay_engine.evicted[b] = 1;
			replay_iv_add(b);
		} else if (map_buf(b, NULL) == CUDA_SUCCESS) {
			replay_engine.evicted[b] = 0;
			replay_iv_del(b);
		} else if (!replay_engine.lost[b]++) {
			remat_warn("buffer %d, kept unmapped at the iteration boundary, cannot be "
			           "mapped again; an op that uses it fails on the device",
			           b);
		}
	}
}

void replay_plan_drop(void)
{
	replay_offload_drop();
	replay_copies_free(NULL);
	if (replay_engine.boundary)
		memset(replay_engine.boundary, 0, replay_engine.profile->nbufs);
	for (int32_t i = 0; i < replay_engine.nsrcs; i++)
		free(replay_engine.srcs[i].params);
	free(replay_engine.srcs);
	replay_engine.srcs = NULL;
	replay_engine.nsrcs = 0;
	if (replay_engine.src_of)
		memset(replay_engine.src_of, 0xff,
		       (size_t)replay_engine.profile->nops * sizeof(*replay_engine.src_of));
	if (replay_engine.plan)
		pl_plan_free(replay_engine.plan);
	replay_engine.plan = NULL;
}

int replay_plan_install(struct pl_plan *pl, char *why, size_t whylen)
{
	if (replay_plan_validate(replay_engine.profile, pl, replay_engine.budget, NULL, why,
	                         whylen)) {
		pl_plan_free(pl);
		return -1;
	}
	replay_plan_drop();
	replay_engine.plan = pl;
	if (replay_offload_install(pl, why, whylen)) {
		replay_plan_drop();
		return -1;
	}
	for (int32_t i = 0; i < pl->nboundary; i++)
		replay_engine.boundary[pl->boundary[i]] = 1;
	int32_t n = 0;
	for (uint32_t i = 0; i < pl->step_off[pl->nops]; i++)
		if (pl->steps[i].kind == PL_STEP_REPLAY &&
		    replay_engine.src_of[pl->steps[i].arg] < 0)
			replay_engine.src_of[pl->steps[i].arg] = n++;
	/* The last writer of each evicted buffer is kept too: a divergence may
	 * need a buffer the plan never rebuilds (evicted until its free). */
	for (int32_t p = 0; p < pl->nops; p++)
		for (uint32_t i = pl->evict_off[p]; i < pl->evict_off[p + 1]; i++) {
			int32_t k = last_writer(pl->evict[i], p + 1);
			if (k >= 0 && replay_engine.src_of[k] < 0 &&
			    replay_op_replayable(replay_engine.profile, k))
				replay_engine.src_of[k] = n++;
		}
	replay_engine.srcs = calloc(n ? (size_t)n : 1, sizeof(*replay_engine.srcs));
	if (!replay_engine.srcs) {
		replay_plan_drop();
		return -1;
	}
	replay_engine.nsrcs = n;
	for (int32_t k = 0; k < pl->nops; k++) {
		int32_t si = replay_engine.src_of[k];
		if (si < 0)
			continue;
		replay_engine.srcs[si].len = (uint32_t)replay_engine.profile->ops[k].params_len;
		replay_engine.srcs[si].params = calloc(1, replay_engine.srcs[si].len + 8);
		replay_engine.srcs[si].iter = UINT64_MAX;
		if (!replay_engine.srcs[si].params) {
			replay_plan_drop();
			return -1;
		}
	}
	return 0;
}
