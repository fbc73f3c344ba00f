/*
 * offload.c — carrying out a plan's offload steps (plan version 3): a
 * buffer version goes to page-locked host memory after its last use and
 * comes back before its next, on two copy streams of libremat's own (one
 * per direction, as the copy engines), overlapped with the program's
 * kernels.
 *
 *   OFFLOAD b   the copy-out stream waits for every stream that uses b (its
 *               producer and readers: event records), then copies b into
 *               its slot of the pinned pool; off_ev[b] marks the end.
 *   evict b     unmapped once the copy out too has passed (steps.c adds the
 *               copy-out stream to the streams the unmap waits for).
 *   PREFETCH b  b mapped again for the copy-in stream (a chunk still
 *               waiting to be unmapped is taken back in stream order), which
 *               waits for off_ev[b] and copies the slot back; fetch_ev[b].
 *   AWAIT b     every stream that uses b waits for fetch_ev[b]; b is whole.
 *
 * Until the await b stays in the evicted list, so an op the plan did not
 * foresee touching it is caught like one touching an evicted buffer, and
 * replay_offload_restore makes it whole (a divergence, a failed step, the
 * plan dropped): whatever state it is in, it ends mapped with its content
 * on the caller's stream, or stays unmapped when that fails (an op reading
 * it then fails on the device; nothing trains on a buffer not restored).
 *
 * The pool is sized by the plan: a slot per buffer the plan offloads,
 * allocated when the plan is installed (cuMemAllocHost) and freed with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../core/config.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

#define SLOT_ALIGN 4096

/* Waits of `waiter` for the work issued so far on every stream that uses
 * b and on s (an event recorded on each, waited for at once: a stream
 * wait takes the event's latest record). */
static CUresult follow_users(CUstream waiter, int32_t b, CUstream s)
{
	CUresult r = remat_drv.cuEventRecord(engine.off_scratch, s);
	if (r == CUDA_SUCCESS)
		r = remat_drv.cuStreamWaitEvent(waiter, engine.off_scratch, 0);
	for (int i = 0; r == CUDA_SUCCESS && i < engine.profile->nstreams && i < 64; i++) {
		CUstream t = engine.profile->streams[i];
		if (!(engine.bstreams[b] >> i & 1) || t == s)
			continue;
		r = remat_drv.cuEventRecord(engine.off_scratch, t);
		if (r == CUDA_SUCCESS)
			r = remat_drv.cuStreamWaitEvent(waiter, engine.off_scratch, 0);
	}
	return r;
}

/* Every other stream that uses b waits for the work issued so far on s. */
static CUresult users_follow(int32_t b, CUstream s)
{
	CUresult r = remat_drv.cuEventRecord(engine.off_scratch, s);
	for (int i = 0; r == CUDA_SUCCESS && i < engine.profile->nstreams && i < 64; i++) {
		CUstream t = engine.profile->streams[i];
		if ((engine.bstreams[b] >> i & 1) && t != s)
			r = remat_drv.cuStreamWaitEvent(t, engine.off_scratch, 0);
	}
	return r;
}

/* Every stream that uses b (and s) waits for ev. */
static CUresult users_wait(CUevent ev, int32_t b, CUstream s)
{
	CUresult r = remat_drv.cuStreamWaitEvent(s, ev, 0);
	for (int i = 0; r == CUDA_SUCCESS && i < engine.profile->nstreams && i < 64; i++) {
		CUstream t = engine.profile->streams[i];
		if ((engine.bstreams[b] >> i & 1) && t != s)
			r = remat_drv.cuStreamWaitEvent(t, ev, 0);
	}
	return r;
}

static void *slot(int32_t b)
{
	return engine.off_pool + engine.off_slot[b];
}

static void present(int32_t b)
{
	engine.evicted[b] = 0;
	replay_iv_del(b);
	engine.off[b] = REPLAY_OFF_NONE;
}

CUresult replay_offload_restore(int32_t b, CUstream s)
{
	const struct prof_buf *u = &engine.profile->bufs[b];
	CUresult r = CUDA_SUCCESS;
	switch (engine.off[b]) {
	case REPLAY_OFF_LEAVING: /* still mapped and whole; the copy out is harmless */
		engine.off[b] = REPLAY_OFF_NONE;
		return CUDA_SUCCESS;
	case REPLAY_OFF_COMING:
		if ((r = users_wait(engine.fetch_ev[b], b, s)) == CUDA_SUCCESS)
			present(b);
		return r;
	case REPLAY_OFF_HOST:
		if ((r = replay_map_buf(b, s, NULL)) != CUDA_SUCCESS)
			return r;
		if ((r = remat_drv.cuStreamWaitEvent(s, engine.off_ev[b], 0)) == CUDA_SUCCESS &&
		    (r = remat_drv.cuMemcpyHtoDAsync(u->addr, slot(b), u->size, s)) ==
		        CUDA_SUCCESS &&
		    (r = users_follow(b, s)) == CUDA_SUCCESS) {
			present(b);
			return CUDA_SUCCESS;
		}
		/* not whole: unmapped again, an op reading it fails on the device */
		replay_unmap_fresh(b, s);
		return r;
	default:
		return CUDA_SUCCESS;
	}
}

CUresult replay_offload_restore_all(CUstream s)
{
	CUresult first = CUDA_SUCCESS;
	if (!engine.off)
		return first;
	for (size_t b = 0; b < engine.profile->nbufs; b++) {
		CUresult r = replay_offload_restore((int32_t)b, s);
		if (r != CUDA_SUCCESS && first == CUDA_SUCCESS)
			first = r;
	}
	return first;
}

CUresult replay_offload_step(int kind, int32_t b, CUstream s, int mode)
{
	const struct prof_buf *u = &engine.profile->bufs[b];
	CUresult r;
	if (mode == 1) /* recovery: whole again, whatever was planned here */
		return replay_offload_restore(b, s);
	switch (kind) {
	case PL_STEP_OFFLOAD:
		if (engine.off[b] != REPLAY_OFF_NONE || !engine.live[b] || engine.evicted[b])
			return CUDA_SUCCESS;
		if ((r = follow_users(engine.copy_out, b, s)) != CUDA_SUCCESS ||
		    (r = remat_drv.cuMemcpyDtoHAsync(slot(b), u->addr, u->size, engine.copy_out)) !=
		        CUDA_SUCCESS ||
		    (r = remat_drv.cuEventRecord(engine.off_ev[b], engine.copy_out)) !=
		        CUDA_SUCCESS)
			return r;
		engine.off[b] = REPLAY_OFF_LEAVING;
		engine.totals.offloads++;
		return CUDA_SUCCESS;
	case PL_STEP_PREFETCH:
		if (mode == 2) {
			/* verification evicts nothing: the copy comes back in place,
			 * to be compared with what the buffer holds (verify.c) */
			if (engine.off[b] != REPLAY_OFF_LEAVING)
				return CUDA_SUCCESS;
			if ((r = remat_drv.cuStreamWaitEvent(s, engine.off_ev[b], 0)) !=
			        CUDA_SUCCESS ||
			    (r = remat_drv.cuMemcpyHtoDAsync(u->addr, slot(b), u->size, s)) !=
			        CUDA_SUCCESS)
				return r;
			engine.off[b] = REPLAY_OFF_NONE;
			return CUDA_SUCCESS;
		}
		if (engine.off[b] != REPLAY_OFF_HOST)
			return CUDA_SUCCESS;
		if ((r = replay_map_buf(b, engine.copy_in, "prefetch")) != CUDA_SUCCESS)
			return r;
		if ((r = remat_drv.cuStreamWaitEvent(engine.copy_in, engine.off_ev[b], 0)) !=
		        CUDA_SUCCESS ||
		    (r = remat_drv.cuMemcpyHtoDAsync(u->addr, slot(b), u->size, engine.copy_in)) !=
		        CUDA_SUCCESS ||
		    (r = remat_drv.cuEventRecord(engine.fetch_ev[b], engine.copy_in)) !=
		        CUDA_SUCCESS) {
			replay_unmap_fresh(b, engine.copy_in);
			return r;
		}
		engine.off[b] = REPLAY_OFF_COMING;
		return CUDA_SUCCESS;
	default: /* PL_STEP_AWAIT */
		if (engine.off[b] != REPLAY_OFF_COMING)
			return CUDA_SUCCESS;
		if ((r = users_wait(engine.fetch_ev[b], b, s)) != CUDA_SUCCESS)
			return r;
		present(b);
		return CUDA_SUCCESS;
	}
}

/* 4 MiB each way, timed with events, once: what a copy engine moves per
 * ns (its fixed cost counted in, which errs on the slow side). */
double replay_offload_measure(void)
{
	static double measured = -1;
	if (measured >= 0)
		return measured;
	measured = 0;
	const size_t bytes = 4u << 20;
	void *host = NULL;
	CUdeviceptr dev = 0;
	CUstream st = NULL;
	CUevent ev[3] = {NULL, NULL, NULL};
	float ms[2] = {0, 0};
	if (!remat_drv.cuMemAllocHost || !remat_drv.cuEventElapsedTime ||
	    !remat_drv.cuMemcpyHtoDAsync || !remat_drv.cuEventDestroy)
		return measured;
	int ok = remat_drv.cuMemAllocHost(&host, bytes) == CUDA_SUCCESS &&
	         remat_drv.cuMemAlloc(&dev, bytes) == CUDA_SUCCESS &&
	         remat_drv.cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS;
	for (int i = 0; ok && i < 3; i++)
		ok = remat_drv.cuEventCreate(&ev[i], 0) == CUDA_SUCCESS;
	if (ok) {
		memset(host, 0, bytes);
		ok = remat_drv.cuEventRecord(ev[0], st) == CUDA_SUCCESS &&
		     remat_drv.cuMemcpyHtoDAsync(dev, host, bytes, st) == CUDA_SUCCESS &&
		     remat_drv.cuEventRecord(ev[1], st) == CUDA_SUCCESS &&
		     remat_drv.cuMemcpyDtoHAsync(host, dev, bytes, st) == CUDA_SUCCESS &&
		     remat_drv.cuEventRecord(ev[2], st) == CUDA_SUCCESS &&
		     remat_drv.cuEventSynchronize(ev[2]) == CUDA_SUCCESS &&
		     remat_drv.cuEventElapsedTime(&ms[0], ev[0], ev[1]) == CUDA_SUCCESS &&
		     remat_drv.cuEventElapsedTime(&ms[1], ev[1], ev[2]) == CUDA_SUCCESS;
	}
	float slow = ms[0] > ms[1] ? ms[0] : ms[1];
	if (ok && slow > 0)
		measured = (double)bytes / (slow * 1e6);
	for (int i = 0; i < 3; i++)
		if (ev[i])
			remat_drv.cuEventDestroy(ev[i]);
	if (st)
		remat_drv.cuStreamSynchronize(st);
	if (dev)
		remat_drv.cuMemFree(dev);
	if (host)
		remat_drv.cuMemFreeHost(host);
	remat_log(REMAT_LOG_INFO, "offload: host<->device copies at %.1f GB/s%s", measured,
	          measured > 0 ? "" : " (could not be measured: no offload)");
	return measured;
}

void replay_offload_drop(void)
{
	if (!engine.off)
		return;
	/* The pool goes with the plan: nothing may still be on the host. */
	replay_offload_restore_all(NULL);
	if (engine.copy_out)
		remat_drv.cuStreamSynchronize(engine.copy_out);
	if (engine.copy_in)
		remat_drv.cuStreamSynchronize(engine.copy_in);
	remat_drv.cuCtxSynchronize();
	for (size_t b = 0; b < engine.profile->nbufs; b++) {
		if (engine.off_ev[b])
			remat_drv.cuEventDestroy(engine.off_ev[b]);
		if (engine.fetch_ev[b])
			remat_drv.cuEventDestroy(engine.fetch_ev[b]);
	}
	if (engine.off_pool)
		remat_drv.cuMemFreeHost(engine.off_pool);
	free(engine.off);
	free(engine.off_ev);
	free(engine.fetch_ev);
	free(engine.off_slot);
	engine.off = NULL;
	engine.off_ev = engine.fetch_ev = NULL;
	engine.off_slot = NULL;
	engine.off_pool = NULL;
	engine.off_pool_bytes = 0;
}

int replay_offload_install(const struct pl_plan *pl, char *why, size_t n)
{
	size_t nb = engine.profile->nbufs;
	uint64_t total = 0;
	int any = 0;
	for (uint32_t i = 0; i < pl->step_off[pl->nops]; i++)
		any |= PL_STEP_IS_OFFLOAD(pl->steps[i].kind);
	if (!any)
		return 0;
	if (!remat_cfg.offload) {
		snprintf(why, n,
		         "it offloads buffers to host memory, which REMAT_OFFLOAD=0 "
		         "switches off");
		return -1;
	}
	if (!remat_drv.cuMemAllocHost || !remat_drv.cuMemcpyHtoDAsync ||
	    !remat_drv.cuEventDestroy) {
		snprintf(why, n,
		         "the plan offloads to host memory and the driver lacks what that needs");
		return -1;
	}
	engine.off = calloc(nb, 1);
	engine.off_ev = calloc(nb, sizeof(CUevent));
	engine.fetch_ev = calloc(nb, sizeof(CUevent));
	engine.off_slot = calloc(nb, sizeof(uint64_t));
	if (!engine.off || !engine.off_ev || !engine.fetch_ev || !engine.off_slot)
		goto oom;
	if ((!engine.copy_out &&
	     remat_drv.cuStreamCreate(&engine.copy_out, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) ||
	    (!engine.copy_in &&
	     remat_drv.cuStreamCreate(&engine.copy_in, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) ||
	    (!engine.off_scratch &&
	     remat_drv.cuEventCreate(&engine.off_scratch, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS))
		goto oom;
	for (uint32_t i = 0; i < pl->step_off[pl->nops]; i++) {
		int32_t b = pl->steps[i].arg;
		if (pl->steps[i].kind != PL_STEP_OFFLOAD || engine.off_ev[b])
			continue;
		if (remat_drv.cuEventCreate(&engine.off_ev[b], CU_EVENT_DISABLE_TIMING) ||
		    remat_drv.cuEventCreate(&engine.fetch_ev[b], CU_EVENT_DISABLE_TIMING))
			goto oom;
		engine.off_slot[b] = total;
		total += (engine.profile->bufs[b].size + SLOT_ALIGN - 1) / SLOT_ALIGN * SLOT_ALIGN;
	}
	void *pool;
	CUresult r = remat_drv.cuMemAllocHost(&pool, total);
	if (r != CUDA_SUCCESS) {
		snprintf(why, n,
		         "cannot allocate %llu bytes of pinned host memory for its offload "
		         "(CUDA error %d)",
		         (unsigned long long)total, (int)r);
		replay_offload_drop();
		return -1;
	}
	engine.off_pool = pool;
	engine.off_pool_bytes = total;
	remat_log(REMAT_LOG_INFO, "offload: %llu bytes of pinned host memory for the plan",
	          (unsigned long long)total);
	return 0;
oom:
	snprintf(why, n, "out of memory setting up its offload (copy streams, events)");
	replay_offload_drop();
	return -1;
}
