/*
 * host_copy.c — the profile's copies between a device buffer and the host
 * (delta.c's snapshots before and after each op, its proofs' perturbed
 * content and the results put back), on a non-blocking stream of
 * libremat's own: never the legacy stream, which would wait for every
 * blocking stream (a collective's too).  The stream is made once, by the
 * first profile, and kept.  The host side is page-locked up to a limit:
 * pageable copies are staged by the driver, several times slower.
 */
#include <stdlib.h>

#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

static struct prof_host_copy {
	int tried; /* the stream was asked for */
	CUstream stream;
	/* prof_host_room's two rooms (one op's copies while the op before's
	 * stay readable), each page-locked or not */
	uint8_t *room[2];
	size_t cap[2];
	int pinned[2];
	/* this profile's copies, and those from or into page-locked memory
	 * (what SIMCUDA_FAIL_COPY counts: tests/e2e/run_offload.sh) */
	unsigned long long copies, locked, bytes;
} hc;

void prof_host_copy_init(void)
{
	if (hc.tried)
		return;
	hc.tried = 1;
	if (!remat_drv.cuStreamCreate || !remat_drv.cuMemcpyDtoHAsync ||
	    remat_drv.cuStreamCreate(&hc.stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
		hc.stream = NULL;
		remat_log(REMAT_LOG_INFO, "write sets: no stream of libremat's own; host copies on "
		                          "the legacy stream");
		return;
	}
	remat_log(REMAT_LOG_INFO, "write sets: host copies on a stream of libremat's own");
}

CUresult prof_host_copy(void *host, uint64_t dev, size_t size, int to_host)
{
	hc.copies++;
	hc.bytes += size;
	for (int w = 0; w < 2; w++)
		hc.locked += hc.pinned[w] && (uint8_t *)host >= hc.room[w] &&
		             (uint8_t *)host < hc.room[w] + hc.cap[w];
	if (!hc.stream || (!to_host && !remat_drv.cuMemcpyHtoDAsync))
		return to_host ? remat_drv.cuMemcpyDtoH(host, dev, size)
		               : remat_drv.cuMemcpyHtoD(dev, host, size);
	CUresult r = to_host ? remat_drv.cuMemcpyDtoHAsync(host, dev, size, hc.stream)
	                     : remat_drv.cuMemcpyHtoDAsync(dev, host, size, hc.stream);
	return r == CUDA_SUCCESS ? remat_drv.cuStreamSynchronize(hc.stream) : r;
}

static void room_free(int w)
{
	if (hc.pinned[w])
		remat_drv.cuMemFreeHost(hc.room[w]);
	else
		free(hc.room[w]);
	hc.room[w] = NULL;
	hc.cap[w] = 0;
	hc.pinned[w] = 0;
}

void prof_host_room_free(void)
{
	room_free(0);
	room_free(1);
}

uint8_t *prof_host_room(int which, size_t n)
{
	int w = which & 1;
	if (n <= hc.cap[w] && hc.room[w])
		return hc.room[w];
	room_free(w);
	size_t want = n + n / 2; /* the next op may reference a little more */
	void *p = NULL;
	if (want <= PROF_PINNED_MAX && remat_drv.cuMemAllocHost && remat_drv.cuMemFreeHost &&
	    remat_drv.cuMemAllocHost(&p, want) == CUDA_SUCCESS) {
		hc.pinned[w] = 1;
	} else {
		p = malloc(want ? want : 1);
		hc.pinned[w] = 0;
	}
	hc.room[w] = p;
	hc.cap[w] = p ? want : 0;
	return hc.room[w];
}

void prof_host_copy_report(unsigned long long launches)
{
	if (hc.copies)
		remat_log(REMAT_LOG_INFO,
		          "write sets: %llu host copies (%llu page-locked), %.1f MB; %llu second "
		          "launches",
		          hc.copies, hc.locked, 1e-6 * (double)hc.bytes, launches);
	hc.copies = hc.locked = hc.bytes = 0;
}
