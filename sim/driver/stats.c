/*
 * stats.c — counters of executed work and the physical high-water mark,
 * read by tests (simcudaGetStats) and printed at exit with SIMCUDA_REPORT=1
 * or written to SIMCUDA_REPORT_FILE, in one key=value line that other
 * tools parse:
 *
 *   simcuda: peak_physical=<bytes> ops=<n> kernels=<n> memcpy=<n> memset=<n> host_funcs=<n>
 * sim_time_ns=<n> faults_injected=<n> vmm_create=<n> vmm_map=<n> vmm_set_access=<n>
 * vmm_unmap=<n> vmm_release=<n> vmm_reserve=<n> host_time_ns=<n> device=<name>
 */
#include "driver.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct sim_counters sim_stats;

EXPORT int simcudaGetStats(struct simcuda_stats *out)
{
	if (out == NULL)
		return -1;
	*out = (struct simcuda_stats){
	    .capacity = sim_cfg.capacity,
	    .physical_in_use = phys_in_use(),
	    .peak_physical = atomic_load(&sim_stats.peak_physical),
	    .ops = atomic_load(&sim_stats.ops),
	    .kernels = atomic_load(&sim_stats.kernels),
	    .memcpy = atomic_load(&sim_stats.memcpy),
	    .memset = atomic_load(&sim_stats.memset),
	    .host_funcs = atomic_load(&sim_stats.host_funcs),
	    .allocs = atomic_load(&sim_stats.allocs),
	    .frees = atomic_load(&sim_stats.frees),
	    .sim_time_ns = clock_now(),
	    .faults_injected = atomic_load(&sim_stats.faults_injected),
	    .vmm_create = atomic_load(&sim_stats.vmm_calls[VMM_CREATE]),
	    .vmm_map = atomic_load(&sim_stats.vmm_calls[VMM_MAP]),
	    .vmm_set_access = atomic_load(&sim_stats.vmm_calls[VMM_SET_ACCESS]),
	    .vmm_unmap = atomic_load(&sim_stats.vmm_calls[VMM_UNMAP]),
	    .vmm_release = atomic_load(&sim_stats.vmm_calls[VMM_RELEASE]),
	    .vmm_reserve = atomic_load(&sim_stats.vmm_calls[VMM_RESERVE]),
	    .host_time_ns = clock_host(),
	    .host_latest_ns = clock_host_latest(),
	};
	return 0;
}

static void report_line(FILE *f)
{
	struct simcuda_stats s;
	simcudaGetStats(&s);
	fprintf(f,
	        "simcuda: peak_physical=%" PRIu64 " ops=%" PRIu64 " kernels=%" PRIu64
	        " memcpy=%" PRIu64 " memset=%" PRIu64 " host_funcs=%" PRIu64 " sim_time_ns=%" PRIu64
	        " faults_injected=%" PRIu64 " vmm_create=%" PRIu64 " vmm_map=%" PRIu64
	        " vmm_set_access=%" PRIu64 " vmm_unmap=%" PRIu64 " vmm_release=%" PRIu64
	        " vmm_reserve=%" PRIu64 " host_time_ns=%" PRIu64 " device=%s\n",
	        s.peak_physical, s.ops, s.kernels, s.memcpy, s.memset, s.host_funcs, s.sim_time_ns,
	        s.faults_injected, s.vmm_create, s.vmm_map, s.vmm_set_access, s.vmm_unmap,
	        s.vmm_release, s.vmm_reserve, s.host_latest_ns, sim_prof.device);
}

static pid_t loader_pid;

static void report_at_exit(void)
{
	/* A forked child (a test harness, a data-loader worker) inherits the
	 * handler but is not the program whose device use is reported (a
	 * sweep's child is: stats_adopt). */
	if (getpid() != loader_pid)
		return;
	if (sim_cfg.report)
		report_line(stderr);
	if (sim_cfg.report_file) {
		FILE *f = fopen(sim_cfg.report_file, "w");
		if (f == NULL) {
			fprintf(stderr, "simcuda: cannot write SIMCUDA_REPORT_FILE=%s\n",
			        sim_cfg.report_file);
			return;
		}
		report_line(f);
		fclose(f);
	}
}

void stats_adopt(const char *path)
{
	loader_pid = getpid();
	sim_cfg.report_file = path;
}

/* Configuration is read when the library loads, so a bad SIMCUDA_* value
 * stops the program before it does anything else. */
__attribute__((constructor)) static void driver_load(void)
{
	sim_config_load();
	loader_pid = getpid();
	atexit(report_at_exit);
}
