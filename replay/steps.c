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

#include "../interpose/remat.h"
#include "../interpose/alloc/alloc.h"
#include "../profiler/internal.h"
#include "internal.h"

/* ---- evicted intervals: the unplanned-access check ---------------------- */

static int32_t iv_upper(uint64_t addr)
{
	int32_t lo = 0, hi = E.niv;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (E.iv[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int32_t replay_find_evicted(uint64_t lo, uint64_t hi)
{
	if (!E.niv || hi <= lo)
		return -1;
	int32_t i = iv_upper(hi - 1); /* first interval starting at or after hi */
	if (i > 0 && E.iv[i - 1].hi > lo)
		return E.iv[i - 1].buf;
	return -1;
}

void replay_iv_add(int32_t b)
{
	const struct replay_buf *u = &E.P->bufs[b];
	int32_t i = iv_upper(u->addr);
	memmove(E.iv + i + 1, E.iv + i, (size_t)(E.niv - i) * sizeof(*E.iv));
	E.iv[i] = (struct replay_iv){u->addr, u->addr + u->size, b};
	E.niv++;
}

void replay_iv_del(int32_t b)
{
	for (int32_t i = 0; i < E.niv; i++)
		if (E.iv[i].buf == b) {
			memmove(E.iv + i, E.iv + i + 1, (size_t)(E.niv - i - 1) * sizeof(*E.iv));
			E.niv--;
			return;
		}
}

int32_t replay_buf_at(uint64_t addr)
{
	int32_t lo = 0, hi = E.P->nbufs;
	while (lo < hi) {
		int32_t mid = (lo + hi) / 2;
		if (E.P->bufs[E.by_addr[mid]].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < E.P->nbufs && E.P->bufs[E.by_addr[lo]].addr == addr ? E.by_addr[lo] : -1;
}

/* ---- replay sources ------------------------------------------------------ */

void replay_capture(int32_t pos, const struct remat_op *op)
{
	struct replay_src *s = &E.srcs[E.src_of[pos]];
	const struct replay_op *q = &E.P->ops[pos];
	s->iter = E.iter;
	s->func = op->func;
	memcpy(s->grid, op->grid, sizeof(s->grid));
	memcpy(s->block, op->block, sizeof(s->block));
	s->shmem = op->shmem;
	s->dst = op->dst;
	s->src = op->src;
	s->bytes = op->bytes;
	s->value = op->value;
	s->elem = op->elem;
	if (q->kind != REMAT_OP_KERNEL)
		return;
	if (q->via_extra) {
		for (void **e = op->extra; e && *e != CU_LAUNCH_PARAM_END; e += 2)
			if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER && e[1])
				memcpy(s->params, e[1], s->len);
		return;
	}
	const struct remat_kinfo *k = q->kinfo;
	for (size_t j = 0; j < k->nparams; j++)
		memcpy(s->params + k->param[j][0], op->params[j], k->param[j][1]);
}

int replay_launch(int32_t k, CUstream st)
{
	int32_t si = E.src_of[k];
	struct replay_src *s = si >= 0 ? &E.srcs[si] : NULL;
	if (!s || s->iter != E.iter) {
		if (!E.warned_src++)
			remat_warn("replay of op %d: it was not recorded in this iteration; the "
			           "rebuilt buffer is wrong",
			           k);
		return -1;
	}
	const struct replay_op *q = &E.P->ops[k];
	CUresult r = CUDA_SUCCESS;
	E.replays++;
	switch (q->kind) {
	case REMAT_OP_KERNEL:
		if (q->via_extra) {
			size_t len = s->len;
			void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, s->params,
			                 CU_LAUNCH_PARAM_BUFFER_SIZE, &len, CU_LAUNCH_PARAM_END};
			r = remat_drv.cuLaunchKernel(s->func, s->grid[0], s->grid[1], s->grid[2],
			                             s->block[0], s->block[1], s->block[2],
			                             s->shmem, st, NULL, extra);
		} else {
			const struct remat_kinfo *ki = q->kinfo;
			void *stack[64], **kp = stack;
			if (ki->nparams > 64 && !(kp = malloc(ki->nparams * sizeof(*kp))))
				return -1;
			/* kernelParams point into this iteration's copy of the bytes */
			for (size_t j = 0; j < ki->nparams; j++)
				kp[j] = s->params + ki->param[j][0];
			r = remat_drv.cuLaunchKernel(s->func, s->grid[0], s->grid[1], s->grid[2],
			                             s->block[0], s->block[1], s->block[2],
			                             s->shmem, st, kp, NULL);
			if (kp != stack)
				free(kp);
		}
		break;
	case REMAT_OP_MEMCPY:
		r = remat_drv.cuMemcpyDtoDAsync(s->dst, s->src, s->bytes, st);
		break;
	case REMAT_OP_MEMSET:
		r = s->elem == 1
		        ? remat_drv.cuMemsetD8Async(s->dst, (unsigned char)s->value, s->bytes, st)
		    : s->elem == 2 ? remat_drv.cuMemsetD16Async(s->dst, (unsigned short)s->value,
		                                                s->bytes / 2, st)
		                   : remat_drv.cuMemsetD32Async(s->dst, s->value, s->bytes / 4, st);
		break;
	default:
		return -1;
	}
	if (r != CUDA_SUCCESS) {
		remat_warn("replay of op %d failed (CUDA error %d)", k, (int)r);
		return -1;
	}
	return 0;
}

/* ---- memory -------------------------------------------------------------- */

static int map_buf(int32_t b, CUstream s)
{
	const struct replay_buf *u = &E.P->bufs[b];
	CUresult r = remat_alloc_map(u->addr, u->rounded, s);
	if (r != CUDA_SUCCESS) {
		remat_warn("rebuild of buffer %d (%llu bytes) does not fit in REMAT_BUDGET=%llu "
		           "(CUDA error %d)",
		           b, (unsigned long long)u->rounded, (unsigned long long)E.budget, (int)r);
		return -1;
	}
	return 0;
}

/* The streams whose work on buffer b must finish before it is unmapped:
 * every stream of the iteration that references it, and s. */
static void unmap_buf(int32_t b, CUstream s)
{
	const struct replay_buf *u = &E.P->bufs[b];
	CUstream st[64];
	int n = 0;
	st[n++] = s;
	for (int i = 0; i < E.P->nstreams; i++)
		if ((E.bstreams[b] >> i & 1) && E.P->streams[i] != s)
			st[n++] = E.P->streams[i];
	remat_alloc_unmap_after(u->addr, u->rounded, st, n);
}

void replay_evict_after(int32_t p, CUstream s)
{
	const struct rplan *pl = E.plan;
	for (uint32_t i = pl->evict_off[p]; i < pl->evict_off[p + 1]; i++) {
		int32_t b = pl->evict[i];
		if (!E.live[b] || E.evicted[b])
			continue;
		unmap_buf(b, s);
		E.evicted[b] = 1;
		replay_iv_add(b);
		E.evictions++;
	}
}

static int step(const struct rplan_step *st, CUstream s, int mode, int32_t cur)
{
	int32_t b = st->arg;
	const struct replay_buf *u = st->kind == RPLAN_REPLAY ? NULL : &E.P->bufs[b];
	switch (st->kind) {
	case RPLAN_MAP:
		if (E.live[b] ? !E.evicted[b] : E.transient[b])
			return 0; /* mapped already (recovery runs steps out of place) */
		if (map_buf(b, s))
			return -1;
		if (E.live[b]) {
			E.evicted[b] = 0;
			replay_iv_del(b);
		} else {
			E.transient[b] = 1;
		}
		return 0;
	case RPLAN_SAVE: {
		if (E.saved[b])
			return 0;
		uint64_t a;
		if (remat_alloc_scratch(u->size, &a, s) != CUDA_SUCCESS) {
			remat_warn("no room for a copy of buffer %d within REMAT_BUDGET=%llu", b,
			           (unsigned long long)E.budget);
			return -1;
		}
		remat_drv.cuMemcpyDtoDAsync(a, u->addr, u->size, s);
		E.saved[b] = a;
		return 0;
	}
	case RPLAN_RESTORE:
		if (!E.saved[b])
			return 0;
		remat_drv.cuMemcpyDtoDAsync(u->addr, E.saved[b], u->size, s);
		remat_alloc_scratch_free(E.saved[b], u->size, s);
		E.saved[b] = 0;
		return 0;
	case RPLAN_REPLAY:
		if (mode == 1 && b >= cur)
			return 0; /* not issued yet in this iteration */
		return replay_launch(b, s);
	case RPLAN_RELEASE:
		if (E.live[b]) {
			/* In recovery, a live buffer stays: the ops after cur will
			 * not run as planned. */
			if (E.evicted[b] || mode)
				return 0;
			unmap_buf(b, s);
			E.evicted[b] = 1;
			replay_iv_add(b);
		} else if (E.transient[b]) {
			unmap_buf(b, s);
			E.transient[b] = 0;
		}
		return 0;
	}
	return -1;
}

int replay_steps(int32_t q, CUstream s, int mode, int32_t cur)
{
	const struct rplan *pl = E.plan;
	int rc = 0;
	for (uint32_t i = pl->step_off[q]; i < pl->step_off[q + 1]; i++)
		if (step(&pl->steps[i], s, mode, cur))
			rc = -1;
	return rc;
}

/* The op before position cur that last wrote buffer b, or -1. */
static int32_t last_writer(int32_t b, int32_t cur)
{
	const struct replay_profile *P = E.P;
	for (int32_t k = cur - 1; k >= 0; k--)
		for (uint32_t i = 0; i < P->ops[k].nwr; i++)
			if (P->wr[P->ops[k].wr_off + i] == b)
				return k;
	return -1;
}

/* Replaying op k now rebuilds b and changes nothing else: b is all it
 * writes, and everything else it references is mapped and unwritten since
 * (so it reads what it read then). */
static int replay_safe(int32_t k, int32_t b, int32_t cur)
{
	const struct replay_profile *P = E.P;
	const struct replay_op *q = &P->ops[k];
	if (!q->replayable || E.src_of[k] < 0 || q->nwr != 1 || P->wr[q->wr_off] != b)
		return 0;
	for (uint32_t i = 0; i < q->nref; i++) {
		int32_t r = P->ref[q->ref_off + i];
		if (r == b)
			continue;
		if (!P->bufs[r].small && (!E.live[r] || E.evicted[r]))
			return 0;
		if (last_writer(r, cur) > k)
			return 0;
	}
	return 1;
}

void replay_rebuild_all(CUstream s)
{
	if (!E.plan || !E.niv)
		return;
	int32_t cur = E.pos < 0 ? E.P->nops : E.pos;
	/* The plan's own recipes, in plan order: an input rebuilt earlier in
	 * the plan is rebuilt here first too. */
	for (int32_t q = cur; q < E.P->nops && E.niv; q++) {
		const struct rplan *pl = E.plan;
		int touches = 0;
		for (uint32_t i = pl->step_off[q]; i < pl->step_off[q + 1] && !touches; i++)
			touches = pl->steps[i].kind == RPLAN_MAP && E.live[pl->steps[i].arg] &&
			          E.evicted[pl->steps[i].arg];
		if (touches)
			replay_steps(q, s, 1, cur);
	}
	/* Evicted until freed by the plan: no recipe in the plan, so replay
	 * the op that last wrote it, when that is safe. */
	while (E.niv) {
		int32_t b = E.iv[0].buf;
		map_buf(b, s);
		E.evicted[b] = 0;
		replay_iv_del(b);
		int32_t k = last_writer(b, cur);
		if (k < 0 || !replay_safe(k, b, cur) || replay_launch(k, s))
			remat_warn("buffer %d was evicted with no rebuild planned before its free; "
			           "mapped again, its content is lost",
			           b);
	}
	for (int32_t b = 0; b < E.P->nbufs; b++)
		if (E.transient[b]) {
			unmap_buf(b, s);
			E.transient[b] = 0;
		}
}

/* ---- plan install -------------------------------------------------------- */

static int check_plan(const struct rplan *pl, char *why, size_t n)
{
	const struct replay_profile *P = E.P;
	if (pl->nops != P->nops || pl->graph_hash != P->graph_hash) {
		snprintf(why, n,
		         "made for graph 0x%016llx with %d ops, this one is 0x%016llx with %d",
		         (unsigned long long)pl->graph_hash, pl->nops,
		         (unsigned long long)P->graph_hash, P->nops);
		return -1;
	}
	for (int32_t p = 0; p < pl->nops; p++) {
		for (uint32_t i = pl->step_off[p]; i < pl->step_off[p + 1]; i++) {
			const struct rplan_step *st = &pl->steps[i];
			if (st->kind == RPLAN_REPLAY) {
				if (st->arg < 0 || st->arg >= p || !P->ops[st->arg].replayable ||
				    (P->ops[st->arg].kind == REMAT_OP_KERNEL &&
				     !P->ops[st->arg].via_extra &&
				     !((struct remat_kinfo *)P->ops[st->arg].kinfo)
				          ->layout_known)) {
					snprintf(why, n,
					         "op %d replays op %d, which cannot be replayed", p,
					         st->arg);
					return -1;
				}
			} else if (st->arg < 0 || st->arg >= P->nbufs || st->kind > RPLAN_RELEASE ||
			           (P->bufs[st->arg].small &&
			            (st->kind == RPLAN_MAP || st->kind == RPLAN_RELEASE))) {
				/* A small buffer shares its chunk: it can be saved
				 * and restored, never mapped or released. */
				snprintf(why, n, "op %d: bad step (%d, %d)", p, st->kind, st->arg);
				return -1;
			}
		}
		for (uint32_t i = pl->evict_off[p]; i < pl->evict_off[p + 1]; i++)
			if (pl->evict[i] < 0 || pl->evict[i] >= P->nbufs ||
			    P->bufs[pl->evict[i]].small) {
				snprintf(why, n, "op %d evicts buffer %d, which cannot be evicted",
				         p, pl->evict[i]);
				return -1;
			}
	}
	return 0;
}

void replay_plan_drop(void)
{
	for (int32_t i = 0; i < E.nsrcs; i++)
		free(E.srcs[i].params);
	free(E.srcs);
	E.srcs = NULL;
	E.nsrcs = 0;
	if (E.src_of)
		memset(E.src_of, 0xff, (size_t)E.P->nops * sizeof(*E.src_of));
	if (E.plan)
		rplan_free(E.plan);
	E.plan = NULL;
}

int replay_plan_install(struct rplan *pl)
{
	char why[256];
	if (check_plan(pl, why, sizeof(why))) {
		remat_warn("plan rejected: %s; training continues unmodified", why);
		rplan_free(pl);
		return -1;
	}
	replay_plan_drop();
	E.plan = pl;
	int32_t n = 0;
	for (uint32_t i = 0; i < pl->step_off[pl->nops]; i++)
		if (pl->steps[i].kind == RPLAN_REPLAY && E.src_of[pl->steps[i].arg] < 0)
			E.src_of[pl->steps[i].arg] = n++;
	/* The last writer of each evicted buffer is kept too: a divergence may
	 * need a buffer the plan never rebuilds (evicted until its free). */
	for (int32_t p = 0; p < pl->nops; p++)
		for (uint32_t i = pl->evict_off[p]; i < pl->evict_off[p + 1]; i++) {
			int32_t k = last_writer(pl->evict[i], p + 1);
			if (k >= 0 && E.src_of[k] < 0 && E.P->ops[k].replayable &&
			    (E.P->ops[k].kind != REMAT_OP_KERNEL || E.P->ops[k].via_extra ||
			     ((struct remat_kinfo *)E.P->ops[k].kinfo)->layout_known))
				E.src_of[k] = n++;
		}
	E.srcs = calloc(n ? (size_t)n : 1, sizeof(*E.srcs));
	if (!E.srcs) {
		replay_plan_drop();
		return -1;
	}
	E.nsrcs = n;
	for (int32_t k = 0; k < pl->nops; k++) {
		int32_t si = E.src_of[k];
		if (si < 0)
			continue;
		E.srcs[si].len = E.P->ops[k].params_len;
		E.srcs[si].params = calloc(1, E.srcs[si].len + 8);
		E.srcs[si].iter = UINT64_MAX;
		if (!E.srcs[si].params) {
			replay_plan_drop();
			return -1;
		}
	}
	return 0;
}
