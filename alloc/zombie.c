/*
 * zombie.c — run mode's deferred unmaps.  An evicted buffer (or a released
 * transient) may still be read by work queued on the streams that used it:
 * its pages stay mapped until an event recorded on each of those streams
 * has completed, then the chunks go back to the pool (and past the pool's
 * bound, to the driver), so physical usage really drops.
 */
#include "../core/grow.h"
#include "internal.h"

static void zombie_release(struct remat_device *d, int32_t i)
{
	struct remat_zombie *z = &d->zombie[i];
	__atomic_fetch_sub(&alloc_state.zombies, 1, __ATOMIC_RELAXED);
	for (int k = 0; k < z->nev; k++)
		remat_event_put(z->ev[k]);
	z->nev = 0;
	z->used = 0;
	while (d->nzombie && !d->zombie[d->nzombie - 1].used)
		d->nzombie--;
}

static int32_t zombie_slot(struct remat_device *d)
{
	size_t i;
	for (i = 0; i < d->nzombie && d->zombie[i].used; i++)
		;
	if (i == d->nzombie) {
		if (REMAT_GROW(d->zombie, d->nzombie, d->cap_zombie))
			return -1;
		d->nzombie++;
	}
	d->zombie[i] = (struct remat_zombie){.used = 1};
	__atomic_fetch_add(&alloc_state.zombies, 1, __ATOMIC_RELAXED);
	return (int32_t)i;
}

int remat_zombie_add(struct remat_device *d, size_t first, size_t n, const CUstream *streams,
                     int ns)
{
	int32_t zi = zombie_slot(d);
	struct remat_zombie *z = zi >= 0 ? &d->zombie[zi] : NULL;
	for (int k = 0; z && k < ns; k++) {
		CUevent ev = k < REMAT_ZOMBIE_EVENTS ? remat_event_get() : NULL;
		if (!ev || remat_drv.cuEventRecord(ev, streams[k]) != CUDA_SUCCESS) {
			/* No event to wait on: the unmap cannot be deferred safely. */
			if (ev)
				remat_event_put(ev);
			remat_drv.cuStreamSynchronize(streams[k]);
			continue;
		}
		z->ev[z->nev++] = ev;
	}
	for (size_t pg = first; pg < first + n; pg++) {
		if (!d->page[pg])
			continue;
		if (d->page_zombie[pg] >= 0 || d->page_pending[pg] >= 0)
			continue; /* already on its way out */
		if (!z) {
			remat_large_unmap_page(d, pg);
			continue;
		}
		d->page_zombie[pg] = zi;
		z->pages_left++;
	}
	if (z && !z->pages_left)
		zombie_release(d, zi);
	return z ? 0 : -1;
}

static void zombie_unmap(struct remat_device *d, int32_t zi)
{
	/* Pages of one zombie are found by scanning: zombies are few and the
	 * scan stops once every page is accounted for. */
	struct remat_zombie *z = &d->zombie[zi];
	for (size_t pg = 0; pg < d->npages && z->pages_left; pg++) {
		if (d->page_zombie[pg] != zi)
			continue;
		remat_large_unmap_page(d, pg);
		z->pages_left--;
	}
	zombie_release(d, zi);
}

void remat_zombie_reclaim(struct remat_device *d, int wait)
{
	for (size_t i = 0; i < d->nzombie; i++) {
		struct remat_zombie *z = &d->zombie[i];
		if (!z->used)
			continue;
		/* Pages are unmapped only once every stream got there: an
		 * event that cannot be waited for (recorded in a capture, or a
		 * capture forbids waiting now) keeps them mapped. */
		int done = 1;
		for (int k = 0; k < z->nev && done; k++)
			done = (wait ? remat_drv.cuEventSynchronize(z->ev[k])
			             : remat_drv.cuEventQuery(z->ev[k])) == CUDA_SUCCESS;
		if (done)
			zombie_unmap(d, (int32_t)i);
	}
}

int remat_zombie_take(struct remat_device *d, size_t pg, CUstream s, int async)
{
	int32_t zi = d->page_zombie[pg];
	if (zi < 0)
		return 0;
	struct remat_zombie *z = &d->zombie[zi];
	for (int k = 0; k < z->nev; k++) {
		if (async)
			remat_drv.cuStreamWaitEvent(s, z->ev[k], 0);
		else
			remat_drv.cuEventSynchronize(z->ev[k]);
	}
	d->page_zombie[pg] = -1;
	if (--z->pages_left == 0)
		zombie_release(d, zi);
	return 1;
}

int remat_page_take(struct remat_device *d, size_t pg, CUstream stream, int async)
{
	if (!d->page[pg])
		return 0;
	int32_t pi = d->page_pending[pg];
	if (pi >= 0) {
		struct remat_pending *pe = &d->pending[pi];
		remat_pending_order(d, pe, stream, async);
		d->page_pending[pg] = -1;
		if (--pe->pages_left == 0)
			remat_pending_release(d, pi);
		return 1;
	}
	if (remat_zombie_take(d, pg, stream, async))
		return 1;
	return 1; /* mapped and owned by nobody: a transient left mapped */
}
