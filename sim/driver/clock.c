/*
 * clock.c — the deterministic simulated clock.
 *
 * Every stream has a simulated time.  An op starts at the latest of: its
 * stream's time, the completion times of the ops it waits for (events,
 * legacy-stream ordering), and the host's simulated time when it was
 * enqueued (the latest completion the host has waited for).  Durations:
 *
 *   kernel   module cost_ns() when given, else 2000 ns + 0.5 ns x threads
 *   memcpy   1000 ns + bytes / 20 per ns device to device,
 *            1000 ns + bytes at SIMCUDA_PCIE_GBPS between device and
 *            page-locked host memory (a copy engine, engine.c),
 *            1000 ns + bytes / 10 per ns with pageable host memory (staged)
 *   memset   1000 ns + bytes / 40 per ns
 *   host fn  1000 ns; event records, waits, async alloc/free: 0 ns
 *
 * None of it depends on wall-clock time or thread scheduling, so the same
 * program reaches the same times on every run.
 */
#include "driver.h"

#include <cupti_activity.h>
#include <math.h>

_Atomic uint64_t sim_host_time;

void clock_host_observe(uint64_t t)
{
	uint64_t cur = atomic_load(&sim_host_time);
	while (cur < t && !atomic_compare_exchange_weak(&sim_host_time, &cur, t))
		;
}

uint64_t clock_now(void)
{
	uint64_t h = atomic_load(&sim_host_time), s = atomic_load(&sim_stats.sim_time_ns);
	return h > s ? h : s;
}

double clock_kernel_ns(const struct sim_func *f, void *const *args, simcuda_dim3 grid,
                       simcuda_dim3 block)
{
	if (f->k->cost_ns) {
		double c = f->k->cost_ns(args, grid, block);
		return isfinite(c) && c > 0 ? c : 0;
	}
	double threads = (double)grid.x * grid.y * grid.z * block.x * block.y * block.z;
	return 2000.0 + 0.5 * threads;
}

uint64_t clock_copy_ns(size_t bytes, int copy_kind, bool pinned_host)
{
	if (pinned_host && (copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ||
	                    copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH))
		return 1000 + (uint64_t)llround((double)bytes / sim_cfg.pcie_bytes_per_ns);
	unsigned per_ns = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD ? 20 : 10;
	return 1000 + bytes / per_ns;
}

uint64_t clock_set_ns(size_t bytes)
{
	return 1000 + bytes / 40;
}
