/*
 * pending.c — stream-ordered frees.  cudaFreeAsync(p, s) only means "p is
 * free once s gets there": an event recorded on s at the free marks that
 * point, and whoever gets the memory next is ordered after it (same stream:
 * nothing to do; another stream: it waits on the event; a synchronous
 * allocation: the host waits).  Chunks return to the pool only once the
 * event has completed.
 */
#include "../core/capture.h"
#include "../core/grow.h"
#include "internal.h"

CUevent remat_event_get(void)
{
	if (alloc_state.nspare_ev)
		return alloc_state.spare_ev[--alloc_state.nspare_ev];
	CUevent e = NULL;
	if (remat_drv.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		return NULL;
	return e;
}

void remat_event_put(CUevent e)
{
	if (REMAT_GROW(alloc_state.spare_ev, alloc_state.nspare_ev, alloc_state.cap_spare_ev))
		return; /* leaks one event; harmless */
	alloc_state.spare_ev[alloc_state.nspare_ev++] = e;
}

int remat_pending_add(struct remat_device *d, uint64_t addr, uint64_t size, CUstream stream,
                      int small, size_t pages)
{
	CUevent ev = remat_event_get();
	if (!ev || remat_drv.cuEventRecord(ev, stream) != CUDA_SUCCESS) {
		/* No event: fall back to what cudaFree does, wait for the stream. */
		if (ev)
			remat_event_put(ev);
		remat_drv.cuStreamSynchronize(stream);
		return -1;
	}
	size_t i;
	for (i = 0; i < d->npending && d->pending[i].used; i++)
		;
	if (i == d->npending) {
		if (REMAT_GROW(d->pending, d->npending, d->cap_pending)) {
			remat_drv.cuEventSynchronize(ev);
			remat_event_put(ev);
			return -1;
		}
		d->npending++;
	}
	d->pending[i] = (struct remat_pending){.addr = addr,
	                                       .size = size,
	                                       .ev = ev,
	                                       .stream = stream,
	                                       .pages_left = pages,
	                                       .small = small,
	                                       .used = 1};
	return (int)i;
}

void remat_pending_order(struct remat_device *d, struct remat_pending *p, CUstream stream,
                         int async)
{
	(void)d;
	if (p->ordered_gen == alloc_state.gen)
		return;
	p->ordered_gen = alloc_state.gen;
	if (async && p->stream == stream)
		return;
	if (async)
		remat_drv.cuStreamWaitEvent(stream, p->ev, 0);
	else
		remat_drv.cuEventSynchronize(p->ev);
}

void remat_pending_release(struct remat_device *d, int32_t i)
{
	remat_event_put(d->pending[i].ev);
	d->pending[i].used = 0;
	while (d->npending && !d->pending[d->npending - 1].used)
		d->npending--;
}

static void reclaim(struct remat_device *d, int wait)
{
	/* Querying or waiting for an event is an unsafe call during a stream
	 * capture that forbids them here: it would invalidate the capture.
	 * What is pending stays pending until the capture ends. */
	if (remat_capture_strict())
		return;
	for (size_t i = 0; i < d->npending; i++) {
		struct remat_pending *p = &d->pending[i];
		if (!p->used)
			continue;
		/* Only a completed free gives its pages back. */
		if ((wait ? remat_drv.cuEventSynchronize(p->ev) : remat_drv.cuEventQuery(p->ev)) !=
		    CUDA_SUCCESS)
			continue;
		if (!p->small) {
			size_t first = (p->addr - d->large_base) / d->gran;
			size_t n = (p->size + d->gran - 1) / d->gran;
			for (size_t pg = first; pg < first + n && p->pages_left; pg++) {
				if (d->page_pending[pg] != (int32_t)i)
					continue;
				remat_large_unmap_page(d, pg);
				p->pages_left--;
			}
		}
		remat_pending_release(d, (int32_t)i);
	}
	remat_zombie_reclaim(d, wait);
	remat_pool_trim(d);
}

void remat_pending_reclaim(struct remat_device *d)
{
	reclaim(d, 0);
}

void remat_pending_reclaim_wait(struct remat_device *d)
{
	reclaim(d, 1);
}
