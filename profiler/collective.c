/*
 * collective.c — collectives in the profiled iteration.  An NCCL kernel
 * waits for the other ranks' processes, which go at their own pace: the
 * profiler must not make this process wait for one before the others can
 * reach it.  So a collective is recorded without host copies around it
 * (every buffer it references counts as read and written), an event after
 * it says when it is done, and while one is in flight the
 * synchronisations around the next ops wait for their own stream only,
 * never for the whole context.
 */
#include <string.h>

#include "../core/driver.h"
#include "internal.h"

#define MAX_IN_FLIGHT 64

/* The collectives in flight, by their events, and events to reuse. */
static struct prof_collectives {
	CUevent in_flight[MAX_IN_FLIGHT];
	int nflight;
	CUevent spare[MAX_IN_FLIGHT];
	int nspare;
} co;

int prof_collective_name(const char *name)
{
	/* NCCL 2.19+ names its kernels ncclDevKernel_*, older ones ncclKernel_*
	 * (mangled C++ names contain them too). */
	return name && (strstr(name, "ncclDevKernel_") || strstr(name, "ncclKernel_"));
}

void prof_collective_issued(CUstream s)
{
	CUevent e = co.nspare ? co.spare[--co.nspare] : NULL;
	if (!e && remat_drv.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		return;
	if (co.nflight == MAX_IN_FLIGHT || remat_drv.cuEventRecord(e, s) != CUDA_SUCCESS) {
		co.spare[co.nspare++] = e;
		return;
	}
	co.in_flight[co.nflight++] = e;
}

/* Forgets the collectives that completed; 1 when one is still running. */
int prof_collective_in_flight(void)
{
	for (int i = 0; i < co.nflight;) {
		if (remat_drv.cuEventQuery(co.in_flight[i]) == CUDA_ERROR_NOT_READY) {
			i++;
			continue;
		}
		co.spare[co.nspare++] = co.in_flight[i];
		co.in_flight[i] = co.in_flight[--co.nflight];
	}
	return co.nflight > 0;
}

void prof_sync(CUstream s)
{
	if (prof_collective_in_flight())
		remat_drv.cuStreamSynchronize(s);
	else
		remat_drv.cuCtxSynchronize();
}

void prof_sync_all(void)
{
	/* The collectives first, by their own events (the other ranks issue
	 * them too), then the context with nothing of theirs in flight. */
	for (int i = 0; i < co.nflight; i++) {
		remat_drv.cuEventSynchronize(co.in_flight[i]);
		co.spare[co.nspare++] = co.in_flight[i];
	}
	co.nflight = 0;
	remat_drv.cuCtxSynchronize();
}
