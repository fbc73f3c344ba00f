/*
 * simcuda_stats.h — counters of the simulated device, for tests.  The
 * simulated libcuda.so.1 exports simcudaGetStats (its only non-CUDA name);
 * SIMCUDA_REPORT=1 prints the same numbers at exit.
 */
#ifndef SIMCUDA_STATS_H
#define SIMCUDA_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct simcuda_stats {
	uint64_t capacity;        /* SIMCUDA_MEMORY, bytes */
	uint64_t physical_in_use; /* cuMemAlloc (rounded to 512) + cuMemCreate bytes now */
	uint64_t peak_physical;   /* high-water mark of physical_in_use */
	uint64_t ops;             /* stream operations executed, of any kind */
	uint64_t kernels;         /* kernels executed */
	uint64_t memcpy;          /* copies executed */
	uint64_t memset;          /* memsets executed */
	uint64_t host_funcs;      /* cuLaunchHostFunc callbacks executed */
	uint64_t allocs;          /* successful device allocations (cuMemAlloc*, cuMemCreate) */
	uint64_t frees;           /* device memory given back */
	uint64_t sim_time_ns;     /* latest simulated time any stream reached */
	uint64_t faults_injected; /* SIMCUDA_FAIL_ALLOC/FAIL_LAUNCH faults that fired */
	/* Memory driver calls made (by anyone, whatever their result). */
	uint64_t vmm_create, vmm_map, vmm_set_access, vmm_unmap, vmm_release;
	uint64_t vmm_reserve;    /* cuMemAddressReserve and cuMemAddressFree */
	uint64_t host_time_ns;   /* the calling thread's simulated host time */
	uint64_t host_latest_ns; /* the latest simulated host time of any thread */
};

/* Fills *out; returns 0 (-1 when out is NULL). */
int simcudaGetStats(struct simcuda_stats *out);

#ifdef __cplusplus
}
#endif
#endif
