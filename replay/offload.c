/*
 * offload.c — carrying out a plan's offload steps (plan version 3): a
 * buffer version goes to page-locked host memory after its last use and
 * comes back before its next, on two copy streams of libremat's own (one
 * per direction, as the copy engines), overlapped with the program's
 * kernels.
 *
 *   OFFLOAD b   the copy-out stream waits for every stream that uses b (its
 *               producer and readers: event records) and for the copy back
 *               of its slot's last users, then copies b into the slot of
 *               this copy in the pinned pool; out_ev marks the end.
 *   evict b     unmapped once the copy out too has passed (steps.c adds the
 *               copy-out stream to the streams the unmap waits for).
 *   PREFETCH b  b mapped again for the copy-in stream (a chunk still
 *               waiting to be unmapped is taken back in stream order), which
 *               waits for out_ev and copies the slot back; back_ev.
 *   AWAIT b     every stream that uses b waits for back_ev; b is whole.
 *
 * Until the await b stays in the evicted list, so an op the plan did not
 * foresee touching it is caught like one touching an evicted buffer, and
 * replay_offload_restore makes it whole (a divergence, a failed step, the
 * plan dropped): whatever state it is in, it ends mapped with its content
 * on the caller's stream, or stays unmapped when that fails (an op reading
 * it then fails on the device; nothing trains on a buffer not restored).
 *
 * The pool is sized by the plan (offload_slots.c: copies whose time on the
 * host does not overlap share bytes), allocated when the plan is installed
 * (cuMemAllocHost) and freed with it.  A copy out into shared bytes waits
 * for the copy back of their last user.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc/alloc.h"
#include "../core/config.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

/* Waits of `waiter` for the work issued so far on every stream that uses
 * b and on s (an event recorded on each, waited for at once: a stream
 * wait takes the event's latest record). */
static CUresult follow_users(CUstream waiter, int32_t b, CUstream s)
{
	CUresult r = remat_drv.cuEventRecord(replay_engine.off_scratch, s);
	if (r == CUDA_SUCCESS)
		r = remat_drv.cuStreamWaitEvent(waiter, replay_engine.off_scratch, 0);
	for (int i = 0; r == CUDA_SUCCESS && i < replay_engine.profile->nstreams && i < 64; i++) {
		CUstream t = replay_engine.profile->streams[i];
		if (!(replay_engine.bstreams[b] >> i & 1) || t == s)
			continue;
		r = remat_drv.cuEventRecord(replay_engine.off_scratch, t);
		if (r == CUDA_SUCCESS)
			r = remat_drv.cuStreamWaitEvent(waiter, replay_engine.off_scratch, 0);
	}
	return r;
}

/* Every other stream that uses b waits for the work issued so far on s. */
static CUresult users_follow(int32_t b, CUstream s)
{
	CUresult r = remat_drv.cuEventRecord(replay_engine.off_scratch, s);
	for (int i = 0; r == CUDA_SUCCESS && i < replay_engine.profile->nstreams && i < 64; i++) {
		CUstream t = replay_engine.profile->streams[i];
		if ((replay_engine.bstreams[b] >> i & 1) && t != s)
			r = remat_drv.cuStreamWaitEvent(t, replay_engine.off_scratch, 0);
	}
	return r;
}

/* Every stream that uses b (and s) waits for ev. */
static CUresult users_wait(CUevent ev, int32_t b, CUstream s)
{
	CUresult r = remat_drv.cuStreamWaitEvent(s, ev, 0);
	for (int i = 0; r == CUDA_SUCCESS && i < replay_engine.profile->nstreams && i < 64; i++) {
		CUstream t = replay_engine.profile->streams[i];
		if ((replay_engine.bstreams[b] >> i & 1) && t != s)
			r = remat_drv.cuStreamWaitEvent(t, ev, 0);
	}
	return r;
}

/* Where b's host copy is, and the events of its copy out and copy back. */
static void *slot(int32_t b)
{
	return replay_engine.off_pool + replay_engine.slots.slot[replay_engine.off_copy[b]];
}

static CUevent out_ev(int32_t b)
{
	return replay_engine.out_ev[replay_engine.off_copy[b]];
}

static CUevent back_ev(int32_t b)
{
	return replay_engine.back_ev[replay_engine.off_copy[b]];
}

/* b's host copy back into b on s, after its copy out; its slot's next
 * user waits for the copy back. */
static CUresult copy_back(int32_t b, CUstream s)
{
	const struct prof_buf *u = &replay_engine.profile->bufs[b];
	CUresult r = remat_drv.cuStreamWaitEvent(s, out_ev(b), 0);
	if (r == CUDA_SUCCESS)
		r = remat_drv.cuMemcpyHtoDAsync(u->addr, slot(b), u->size, s);
	if (r == CUDA_SUCCESS)
		r = remat_drv.cuEventRecord(back_ev(b), s);
	return r;
}

static void present(int32_t b)
{
	replay_engine.evicted[b] = 0;
	replay_iv_del(b);
	replay_engine.off[b] = REPLAY_OFF_NONE;
}

CUresult replay_offload_restore(int32_t b, CUstream s)
{
	CUresult r = CUDA_SUCCESS;
	switch (replay_engine.off[b]) {
	case REPLAY_OFF_LEAVING: /* still mapped and whole; the copy out is harmless */
		replay_engine.off[b] = REPLAY_OFF_NONE;
		return CUDA_SUCCESS;
	case REPLAY_OFF_COMING:
		if ((r = users_wait(back_ev(b), b, s)) == CUDA_SUCCESS)
			present(b);
		return r;
	case REPLAY_OFF_PARKED:
		return replay_park_restore(b, s);
	case REPLAY_OFF_HOST:
		if ((r = replay_map_buf(b, s, NULL)) != CUDA_SUCCESS)
			return r;
		if ((r = copy_back(b, s)) == CUDA_SUCCESS &&
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
	if (!replay_engine.off)
		return first;
	for (size_t b = 0; b < replay_engine.profile->nbufs; b++) {
		CUresult r = replay_offload_restore((int32_t)b, s);
		if (r != CUDA_SUCCESS && first == CUDA_SUCCESS)
			first = r;
	}
	/* Copies skipped from here on break the chain of slot users that each
	 * copy out follows: every later one waits for every copy back so far. */
	if (replay_engine.copy_out && replay_engine.copy_in && replay_engine.off_scratch) {
		if (remat_drv.cuEventRecord(replay_engine.off_scratch, replay_engine.copy_in) ==
		    CUDA_SUCCESS)
			remat_drv.cuStreamWaitEvent(replay_engine.copy_out,
			                            replay_engine.off_scratch, 0);
		if (remat_drv.cuEventRecord(replay_engine.off_scratch, s) == CUDA_SUCCESS)
			remat_drv.cuStreamWaitEvent(replay_engine.copy_out,
			                            replay_engine.off_scratch, 0);
	}
	return first;
}

CUresult replay_offload_step(int kind, int32_t b, uint32_t step, CUstream s, int mode)
{
	const struct prof_buf *u = &replay_engine.profile->bufs[b];
	CUresult r;
	if (mode == 1) /* recovery: whole again, whatever was planned here */
		return replay_offload_restore(b, s);
	switch (kind) {
	case PL_STEP_OFFLOAD: {
		if (replay_engine.off[b] != REPLAY_OFF_NONE || !replay_engine.live[b] ||
		    replay_engine.evicted[b])
			return CUDA_SUCCESS;
		int32_t c = replay_engine.slots.copy_of_step[step];
		const struct replay_slots *sl = &replay_engine.slots;
		r = follow_users(replay_engine.copy_out, b, s);
		for (uint32_t i = sl->after_off[c]; r == CUDA_SUCCESS && i < sl->after_off[c + 1];
		     i++)
			r = remat_drv.cuStreamWaitEvent(replay_engine.copy_out,
			                                replay_engine.back_ev[sl->after[i]], 0);
		if (r != CUDA_SUCCESS ||
		    (r = remat_drv.cuMemcpyDtoHAsync(replay_engine.off_pool + sl->slot[c], u->addr,
		                                     u->size, replay_engine.copy_out)) !=
		        CUDA_SUCCESS ||
		    (r = remat_drv.cuEventRecord(replay_engine.out_ev[c],
		                                 replay_engine.copy_out)) != CUDA_SUCCESS)
			return r;
		replay_engine.off[b] = REPLAY_OFF_LEAVING;
		replay_engine.off_copy[b] = c;
		replay_engine.totals.offloads++;
		return CUDA_SUCCESS;
	}
	case PL_STEP_PREFETCH:
		if (mode == 2) {
			/* verification evicts nothing: the copy comes back in place,
			 * to be compared with what the buffer holds (verify.c) */
			if (replay_engine.off[b] != REPLAY_OFF_LEAVING)
				return CUDA_SUCCESS;
			if ((r = copy_back(b, s)) != CUDA_SUCCESS)
				return r;
			replay_engine.off[b] = REPLAY_OFF_NONE;
			return CUDA_SUCCESS;
		}
		if (replay_engine.off[b] != REPLAY_OFF_HOST)
			return CUDA_SUCCESS;
		if ((r = replay_map_buf(b, replay_engine.copy_in, "prefetch")) != CUDA_SUCCESS)
			return r;
		if ((r = copy_back(b, replay_engine.copy_in)) != CUDA_SUCCESS) {
			replay_unmap_fresh(b, replay_engine.copy_in);
			return r;
		}
		replay_engine.off[b] = REPLAY_OFF_COMING;
		return CUDA_SUCCESS;
	default: /* PL_STEP_AWAIT */
		if (replay_engine.off[b] != REPLAY_OFF_COMING)
			return CUDA_SUCCESS;
		if ((r = users_wait(back_ev(b), b, s)) != CUDA_SUCCESS)
			return r;
		present(b);
		return CUDA_SUCCESS;
	}
}

/* What a copy engine moves per ns, each way (the slower), measured once:
 * a copy of S bytes and one of S/2, timed with events (after one each way
 * untimed); the difference is
 * what S/2 bytes more cost, without the fixed cost of a copy (which the
 * planner's model adds on its own), so a small S measures the rate too.
 * S is up to 4 MiB of libremat's own scratch memory, taken like any
 * allocation and within the budget: from the chunks its pool holds spare
 * and the room left under the budget (this runs at an iteration boundary,
 * the job's lowest point), at least one chunk (when the device is full
 * before the plan, swapping makes room for it).  On the copy-out stream
 * the plan's copies use later. */
static double per_ns(float half_ms, float whole_ms, size_t bytes)
{
	if (whole_ms > half_ms)
		return (double)(bytes - bytes / 2) / ((double)(whole_ms - half_ms) * 1e6);
	/* no difference to time (a coarse clock): the whole copy, fixed cost in */
	return whole_ms > 0 ? (double)bytes / ((double)whole_ms * 1e6) : 0;
}

double replay_offload_measure(void)
{
	static double measured = -1;
	if (measured >= 0)
		return measured;
	measured = 0;
	/* what the iteration freed is back in the pool first (once: it waits) */
	remat_alloc_poll(1);
	struct remat_alloc_stats as;
	remat_alloc_stats(&as);
	uint64_t gran = as.granularity ? as.granularity : 1;
	uint64_t room = replay_engine.budget > 0 && (uint64_t)replay_engine.budget > as.physical
	                    ? (uint64_t)replay_engine.budget - as.physical
	                    : 0;
	size_t bytes = 4u << 20;
	if (as.pooled + room < bytes)
		bytes = (size_t)((as.pooled + room) / gran * gran);
	if (bytes < gran)
		bytes = gran;
	void *host = NULL;
	uint64_t dev = 0;
	CUevent ev[5] = {NULL, NULL, NULL, NULL, NULL};
	float ms[4] = {0, 0, 0, 0};
	if (!remat_drv.cuMemAllocHost || !remat_drv.cuEventElapsedTime ||
	    !remat_drv.cuMemcpyHtoDAsync || !remat_drv.cuEventDestroy)
		return measured;
	if (!replay_engine.copy_out &&
	    remat_drv.cuStreamCreate(&replay_engine.copy_out, CU_STREAM_NON_BLOCKING) !=
	        CUDA_SUCCESS)
		replay_engine.copy_out = NULL;
	CUstream st = replay_engine.copy_out;
	int ok = st && remat_drv.cuMemAllocHost(&host, bytes) == CUDA_SUCCESS &&
	         remat_alloc_scratch(bytes, &dev, st) == CUDA_SUCCESS;
	if (!ok)
		dev = 0;
	for (int i = 0; ok && i < 5; i++)
		ok = remat_drv.cuEventCreate(&ev[i], 0) == CUDA_SUCCESS;
	if (ok) {
		memset(host, 0, bytes);
		/* one copy each way first, untimed: whatever the engines still
		 * had queued (the job's own copies) is done before ev[0] */
		ok = remat_drv.cuMemcpyHtoDAsync(dev, host, bytes / 2, st) == CUDA_SUCCESS &&
		     remat_drv.cuMemcpyDtoHAsync(host, dev, bytes / 2, st) == CUDA_SUCCESS &&
		     remat_drv.cuEventRecord(ev[0], st) == CUDA_SUCCESS &&
		     remat_drv.cuMemcpyHtoDAsync(dev, host, bytes / 2, st) == CUDA_SUCCESS &&
		     remat_drv.cuEventRecord(ev[1], st) == CUDA_SUCCESS &&
		     remat_drv.cuMemcpyHtoDAsync(dev, host, bytes, st) == CUDA_SUCCESS &&
		     remat_drv.cuEventRecord(ev[2], st) == CUDA_SUCCESS &&
		     remat_drv.cuMemcpyDtoHAsync(host, dev, bytes / 2, st) == CUDA_SUCCESS &&
		     remat_drv.cuEventRecord(ev[3], st) == CUDA_SUCCESS &&
		     remat_drv.cuMemcpyDtoHAsync(host, dev, bytes, st) == CUDA_SUCCESS &&
		     remat_drv.cuEventRecord(ev[4], st) == CUDA_SUCCESS &&
		     remat_drv.cuEventSynchronize(ev[4]) == CUDA_SUCCESS;
		for (int i = 0; ok && i < 4; i++)
			ok = remat_drv.cuEventElapsedTime(&ms[i], ev[i], ev[i + 1]) == CUDA_SUCCESS;
	}
	if (ok) {
		remat_log(
		    REMAT_LOG_DEBUG,
		    "offload: %zu and %zu bytes to the device in %.6f and %.6f ms, back in %.6f "
		    "and %.6f ms",
		    bytes / 2, bytes, (double)ms[0], (double)ms[1], (double)ms[2], (double)ms[3]);
		double in = per_ns(ms[0], ms[1], bytes), out = per_ns(ms[2], ms[3], bytes);
		measured = in < out ? in : out;
	}
	for (int i = 0; i < 5; i++)
		if (ev[i])
			remat_drv.cuEventDestroy(ev[i]);
	if (st)
		remat_drv.cuStreamSynchronize(st);
	if (dev)
		remat_alloc_scratch_free(dev, bytes, st);
	if (host)
		remat_drv.cuMemFreeHost(host);
	remat_log(REMAT_LOG_INFO, "offload: host<->device copies at %.1f GB/s%s (%zu bytes timed)",
	          measured, measured > 0 ? "" : " (could not be measured: no offload)", bytes);
	return measured;
}

void replay_offload_drop(void)
{
	if (!replay_engine.off)
		return;
	/* The pool goes with the plan: nothing may still be on the host. */
	replay_offload_restore_all(NULL);
	if (replay_engine.copy_out)
		remat_drv.cuStreamSynchronize(replay_engine.copy_out);
	if (replay_engine.copy_in)
		remat_drv.cuStreamSynchronize(replay_engine.copy_in);
	remat_drv.cuCtxSynchronize();
	for (int32_t c = 0; c < replay_engine.slots.ncopies; c++) {
		if (replay_engine.out_ev && replay_engine.out_ev[c])
			remat_drv.cuEventDestroy(replay_engine.out_ev[c]);
		if (replay_engine.back_ev && replay_engine.back_ev[c])
			remat_drv.cuEventDestroy(replay_engine.back_ev[c]);
	}
	if (replay_engine.off_pool)
		remat_drv.cuMemFreeHost(replay_engine.off_pool);
	free(replay_engine.off);
	free(replay_engine.off_copy);
	free(replay_engine.park_at);
	replay_engine.park_at = NULL;
	free(replay_engine.out_ev);
	free(replay_engine.back_ev);
	replay_slots_free(&replay_engine.slots);
	replay_engine.off = NULL;
	replay_engine.off_copy = NULL;
	replay_engine.out_ev = replay_engine.back_ev = NULL;
	replay_engine.off_pool = NULL;
	replay_engine.off_pool_bytes = 0;
}

int replay_offload_install(const struct pl_plan *pl, char *why, size_t n)
{
	size_t nb = replay_engine.profile->nbufs;
	int any = pl->nparked > 0;
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
	if (!(replay_engine.off = calloc(nb, 1)) ||
	    !(replay_engine.off_copy = calloc(nb, sizeof(int32_t))) ||
	    replay_slots_plan(replay_engine.profile, pl, &replay_engine.slots))
		goto oom;
	size_t nc = replay_engine.slots.ncopies ? (size_t)replay_engine.slots.ncopies : 1;
	replay_engine.out_ev = calloc(nc, sizeof(CUevent));
	replay_engine.back_ev = calloc(nc, sizeof(CUevent));
	if (!replay_engine.out_ev || !replay_engine.back_ev)
		goto oom;
	if ((!replay_engine.copy_out &&
	     remat_drv.cuStreamCreate(&replay_engine.copy_out, CU_STREAM_NON_BLOCKING) !=
	         CUDA_SUCCESS) ||
	    (!replay_engine.copy_in &&
	     remat_drv.cuStreamCreate(&replay_engine.copy_in, CU_STREAM_NON_BLOCKING) !=
	         CUDA_SUCCESS) ||
	    (!replay_engine.off_scratch &&
	     remat_drv.cuEventCreate(&replay_engine.off_scratch, CU_EVENT_DISABLE_TIMING) !=
	         CUDA_SUCCESS))
		goto oom;
	for (int32_t c = 0; c < replay_engine.slots.ncopies; c++)
		if (remat_drv.cuEventCreate(&replay_engine.out_ev[c], CU_EVENT_DISABLE_TIMING) ||
		    remat_drv.cuEventCreate(&replay_engine.back_ev[c], CU_EVENT_DISABLE_TIMING))
			goto oom;
	/* the parked buffers' host copies after the slots, 256-byte aligned */
	uint64_t total = (replay_engine.slots.pool_bytes + 255) & ~(uint64_t)255, parked = total;
	if (pl->nparked && !(replay_engine.park_at = calloc(nb, sizeof(uint64_t))))
		goto oom;
	for (int32_t i = 0; i < pl->nparked; i++) {
		replay_engine.park_at[pl->parked[i]] = total + 1;
		total += (replay_engine.profile->bufs[pl->parked[i]].size + 255) & ~(uint64_t)255;
	}
	parked = total - parked;
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
	replay_engine.off_pool = pool;
	replay_engine.off_pool_bytes = total;
	remat_log(REMAT_LOG_INFO,
	          "offload: %llu bytes of pinned host memory for the plan (%d copies of %llu "
	          "bytes, at most %llu held at once)",
	          (unsigned long long)(total - parked), replay_engine.slots.ncopies,
	          (unsigned long long)replay_engine.slots.sum,
	          (unsigned long long)replay_engine.slots.live_peak);
	if (pl->nparked)
		remat_log(REMAT_LOG_INFO,
		          "offload: %d buffers no op touches parked on the host while the plan "
		          "applies (%llu bytes of pinned host memory more)",
		          pl->nparked, (unsigned long long)parked);
	return 0;
oom:
	snprintf(why, n, "out of memory setting up its offload (copy streams, events)");
	replay_offload_drop();
	return -1;
}
