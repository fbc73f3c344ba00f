/*
 * copy_rate.c — what a copy inside device memory costs, measured once at
 * the end of a profile: a plan's saves, restores, stashes and unstashes
 * are such copies on the compute stream, and the planner prices them with
 * this model (fixed ns per copy + bytes at a rate; trace "device_copy").
 *
 * Two sizes, each copied COPIES times back to back on a stream of our own
 * and timed with events: the difference gives the rate, the rest the fixed
 * cost.  Many copies per size because one small copy on a real GPU takes
 * about as long as an event's resolution (0.5 µs), and sizes far apart
 * because an H100 copies 1 MiB in about the time it takes to start a copy:
 * with 64 KiB against 1 MiB the difference drowned in the jitter there and
 * no model came out.  The scratch is one 8 MiB allocation made outside the
 * budget while no plan applies, and freed at once; when anything fails
 * there is no model, and copies count as free, as they did before.
 */
#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

#define COPIES 16
#define SMALL  (256u << 10)
#define LARGE  (4u << 20)

/* Elapsed ms of COPIES copies of `bytes` from base to base + LARGE. */
static int timed(CUstream s, CUevent ev[2], CUdeviceptr base, size_t bytes, float *ms)
{
	if (remat_drv.cuEventRecord(ev[0], s) != CUDA_SUCCESS)
		return -1;
	for (int i = 0; i < COPIES; i++)
		if (remat_drv.cuMemcpyDtoDAsync(base + LARGE, base, bytes, s) != CUDA_SUCCESS)
			return -1;
	if (remat_drv.cuEventRecord(ev[1], s) != CUDA_SUCCESS ||
	    remat_drv.cuEventSynchronize(ev[1]) != CUDA_SUCCESS ||
	    remat_drv.cuEventElapsedTime(ms, ev[0], ev[1]) != CUDA_SUCCESS)
		return -1;
	return 0;
}

/* The stream the copies are timed on, kept: a profile may come again. */
static struct prof_copy_rate {
	CUstream stream;
} cr;

void prof_copy_rate(int64_t *fixed_ns, int64_t *bytes_per_us)
{
	*fixed_ns = *bytes_per_us = 0;
	if (!remat_drv.cuMemAlloc || !remat_drv.cuEventElapsedTime || !remat_drv.cuEventDestroy ||
	    !remat_drv.cuStreamCreate)
		return;
	if (!cr.stream &&
	    remat_drv.cuStreamCreate(&cr.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
		cr.stream = NULL;
		return;
	}
	CUdeviceptr base = 0;
	CUevent ev[2] = {NULL, NULL};
	float small_ms = 0, large_ms = 0;
	int ok = remat_drv.cuMemAlloc(&base, 2 * (size_t)LARGE) == CUDA_SUCCESS &&
	         remat_drv.cuEventCreate(&ev[0], 0) == CUDA_SUCCESS &&
	         remat_drv.cuEventCreate(&ev[1], 0) == CUDA_SUCCESS &&
	         timed(cr.stream, ev, base, SMALL, &small_ms) == 0 &&
	         timed(cr.stream, ev, base, LARGE, &large_ms) == 0;
	/* per copy, in ns */
	double small_ns = small_ms * 1e6 / COPIES, large_ns = large_ms * 1e6 / COPIES;
	if (ok && large_ns > small_ns) {
		double per_ns = (double)(LARGE - SMALL) / (large_ns - small_ns);
		double fixed = small_ns - (double)SMALL / per_ns;
		/* the planner reads at least a byte per ns (graph_read.c) */
		if (per_ns >= 1.0) {
			*bytes_per_us = (int64_t)(per_ns * 1000.0 + 0.5);
			*fixed_ns = fixed > 0 ? (int64_t)(fixed + 0.5) : 0;
		}
	}
	for (int i = 0; i < 2; i++)
		if (ev[i])
			remat_drv.cuEventDestroy(ev[i]);
	if (base) {
		remat_drv.cuStreamSynchronize(cr.stream);
		remat_drv.cuMemFree(base);
	}
	if (*bytes_per_us)
		remat_log(REMAT_LOG_INFO,
		          "device copies: %lld ns + %.1f bytes per ns (timed on %u MiB of device "
		          "memory of libremat's own, freed at once)",
		          (long long)*fixed_ns, (double)*bytes_per_us / 1000.0, 2 * LARGE >> 20);
	else
		remat_log(REMAT_LOG_INFO,
		          "device copies could not be timed (%s; %.0f ns per %u-byte copy, %.0f ns "
		          "per %u-byte copy): plans count them as free",
		          ok ? "no rate from the two sizes" : "a call failed", small_ns, SMALL,
		          large_ns, LARGE);
}
