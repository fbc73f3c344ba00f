/*
 * park.c — buffers the plan parks on the host (parked_on_host,
 * docs/plan-format.md): live across the boundary and touched by no op of
 * the iteration.  When an iteration starts applying the plan, each one not
 * parked yet is copied into its place in the pinned pool (offload.c
 * allocates it with the plan, after the offload slots) and unmapped; it
 * stays so from iteration to iteration: no copy in the steady state.
 *
 * A parked buffer is in the evicted list, REPLAY_OFF_PARKED, so an op
 * that touches it is caught like one touching an evicted buffer and the
 * divergence makes it whole (replay_offload_restore), as does anything
 * that stops the plan (an iteration that does not apply it, the plan
 * dropped).  Its content is copied back before any op can see it; a copy
 * back that fails leaves it unmapped (an op reading it fails on the
 * device, nothing reads what it could not restore) and its host copy
 * where it is.  A copy out that fails leaves it mapped, and the plan is
 * not applied without that saving (engine.c stops it).
 */
#include "../alloc/alloc.h"
#include "../core/capture.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

static void *host_copy(int32_t b)
{
	return replay_engine.off_pool + replay_engine.park_at[b] - 1;
}

CUresult replay_park_all(void)
{
	if (!replay_engine.park_at)
		return CUDA_SUCCESS;
	const struct remat_profile *p = replay_engine.profile;
	int synced = 0;
	for (size_t i = 0; i < p->nbufs; i++) {
		int32_t b = (int32_t)i;
		if (!replay_engine.park_at[b] || !replay_engine.live[b] ||
		    replay_engine.evicted[b] || replay_engine.off[b] != REPLAY_OFF_NONE)
			continue;
		/* Once, before the first copy out: whatever the program's
		 * streams still do with it (set-up, an earlier iteration) ends
		 * first.  Not while a stream is captured: the copy would go
		 * into the graph. */
		if (!synced) {
			if (__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE))
				return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
			CUresult r = remat_drv.cuCtxSynchronize();
			if (r != CUDA_SUCCESS)
				return r;
			synced = 1;
		}
		const struct prof_buf *u = &p->bufs[b];
		CUresult r = remat_drv.cuMemcpyDtoH(host_copy(b), u->addr, u->size);
		if (r != CUDA_SUCCESS)
			return r; /* still mapped, whole */
		replay_unmap_fresh(b, NULL);
		replay_engine.off[b] = REPLAY_OFF_PARKED;
		replay_engine.evicted[b] = 1;
		replay_iv_add(b);
		replay_engine.totals.parked++;
	}
	return CUDA_SUCCESS;
}

CUresult replay_park_restore(int32_t b, CUstream s)
{
	const struct prof_buf *u = &replay_engine.profile->bufs[b];
	CUresult r = replay_map_buf(b, s, NULL);
	if (r != CUDA_SUCCESS)
		return r;
	r = remat_drv.cuMemcpyHtoDAsync(u->addr, host_copy(b), u->size, s);
	/* whole before any stream's next op (the one that touches it may be
	 * on another stream than s) */
	if (r == CUDA_SUCCESS && !__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE))
		r = remat_drv.cuStreamSynchronize(s);
	if (r != CUDA_SUCCESS) {
		replay_unmap_fresh(b, s);
		return r;
	}
	replay_engine.off[b] = REPLAY_OFF_NONE;
	replay_engine.evicted[b] = 0;
	replay_iv_del(b);
	return CUDA_SUCCESS;
}

/* A parked buffer of an allocation being freed: its host copy is dropped,
 * and it is gone (neither evicted nor live). */
static int forget(int32_t b)
{
	if (replay_engine.off[b] != REPLAY_OFF_PARKED)
		return 0;
	replay_engine.off[b] = REPLAY_OFF_NONE;
	replay_engine.evicted[b] = 0;
	replay_engine.live[b] = 0;
	return 1;
}

void replay_park_forget(CUdeviceptr p, size_t size)
{
	if (!replay_engine.park_at)
		return;
	/* parked regions of the allocation too (only its first region
	 * starts at p): none of them may be mapped again into a range the
	 * allocator hands out anew.  A parked buffer is in the evicted list,
	 * sorted by address: a free looks at what is evicted in its range,
	 * not at every buffer of the profile. */
	replay_iv_drop(p, p + size, forget);
}
