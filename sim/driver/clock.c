/*
 * clock.c — the deterministic simulated clock.
 *
 * Every stream has a simulated time, and every host thread one of its own
 * that each driver call advances by its cost (profile.c) and each wait
 * moves to what it waited for.  An op starts at the latest of: its stream's
 * time, the completion of the ops it waits for, and its thread's host time
 * when it was enqueued.  Under SIMCUDA_DEVICE=legacy there is one host time
 * for the process, the latest completion any thread waited for, and no
 * call costs anything.  Durations: sim/README.md ("Simulated clock").
 * None of it depends on wall-clock time or thread scheduling.
 */
#include "driver.h"

#include <cupti_activity.h>
#include <math.h>

/* The latest host time of any thread (legacy: the process's host time). */
static _Atomic uint64_t host_latest;
/* This thread's host time; a thread starts at the latest of any thread's
 * when it first calls (it was created at about that time). */
static _Thread_local uint64_t th_host;
static _Thread_local bool th_started;

static void latest_at_least(uint64_t t)
{
	uint64_t cur = atomic_load(&host_latest);
	while (cur < t && !atomic_compare_exchange_weak(&host_latest, &cur, t))
		;
}

uint64_t clock_host(void)
{
	if (sim_prof.legacy)
		return atomic_load(&host_latest);
	if (!th_started) {
		th_host = atomic_load(&host_latest);
		th_started = true;
	}
	return th_host;
}

void clock_host_observe(uint64_t t)
{
	if (!sim_prof.legacy && t > clock_host())
		th_host = t;
	latest_at_least(t);
}

void clock_host_spend(uint64_t ns)
{
	if (ns == 0)
		return;
	th_host = clock_host() + ns;
	latest_at_least(th_host);
}

uint64_t clock_host_latest(void)
{
	return atomic_load(&host_latest);
}

uint64_t clock_now(void)
{
	uint64_t h = atomic_load(&host_latest), s = atomic_load(&sim_stats.sim_time_ns);
	return h > s ? h : s;
}

/* The bytes a kernel without declared work moves: one 4-byte element per
 * thread through each pointer parameter into device memory, no more than
 * the allocation holds past the pointer. */
static double default_bytes(const struct simcuda_kernel *k, void *const *args, double threads)
{
	double bytes = 0;
	for (unsigned i = 0; args && i < k->nparams; i++) {
		uintptr_t p;
		if (k->param_size[i] != sizeof(p))
			continue;
		__builtin_memcpy(&p, args[i], sizeof(p));
		uintptr_t base;
		size_t size;
		if (!dev_addr(p) ||
		    !(alloc_range_of(p, &base, &size) || vmm_range_of(p, &base, &size)))
			continue;
		double room = (double)(base + size - p);
		bytes += fmin(room, 4.0 * threads);
	}
	return bytes;
}

static double priced(struct simcuda_work w)
{
	unsigned m = w.math < SIMCUDA_MATHS ? w.math : SIMCUDA_MATH_FP32;
	double t = fmax(w.flops / sim_prof.flops_per_ns[m], w.bytes / sim_prof.hbm_bytes_per_ns);
	return fmax(sim_prof.floor_ns, t) + fmax(w.wire_ns, 0);
}

double clock_kernel_ns(const struct sim_func *f, void *const *args, simcuda_dim3 grid,
                       simcuda_dim3 block)
{
	const struct simcuda_kernel *k = f->k;
	double threads = (double)grid.x * grid.y * grid.z * block.x * block.y * block.z;
	double c;
	if (sim_prof.legacy)
		c = k->cost_ns ? k->cost_ns(args, grid, block) : 2000.0 + 0.5 * threads;
	else if (k->work)
		c = priced(k->work(args, grid, block));
	else
		c = priced((struct simcuda_work){0, default_bytes(k, args, threads), 0, 0});
	return isfinite(c) && c > 0 ? c : 0;
}

uint64_t clock_copy_ns(size_t bytes, int copy_kind, bool pinned_host)
{
	if (pinned_host && (copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ||
	                    copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH))
		return 1000 + (uint64_t)llround((double)bytes / sim_prof.pcie_bytes_per_ns);
	/* A device copy reads and writes its bytes after a fixed start, as the
	 * copy engines' copies: the fit libremat makes of it holds. */
	if (copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD && !sim_prof.legacy)
		return 1000 + (uint64_t)llround(2.0 * (double)bytes / sim_prof.hbm_bytes_per_ns);
	unsigned per_ns = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD ? 20 : 10;
	return 1000 + bytes / per_ns;
}

uint64_t clock_set_ns(size_t bytes)
{
	if (!sim_prof.legacy)
		return 1000 + (uint64_t)llround((double)bytes / sim_prof.hbm_bytes_per_ns);
	return 1000 + bytes / 40;
}
