/*
 * swap.c — run mode's safety net before a plan applies (Capuchin-style
 * swapping).  The warm-up, detection, profiled and planning iterations run
 * the program unmodified; on a device smaller than one such iteration a
 * chunk the driver refuses would end the job before any plan exists.
 * Instead the least recently used large allocation is copied to the host
 * and its chunks are unmapped (its virtual range stays reserved, so every
 * pointer to it stays valid).  From the first swap on, each op is checked
 * before it is issued (session/swap_in.c): the allocations its parameter
 * words, copy or set ranges point into are stamped as used, pinned until
 * the op is issued, and those on the host are mapped again at the same
 * address and copied back.  Slow, synchronous, bit-exact.
 *
 * LRU costs nothing until the first swap: allocations are stamped when
 * made, and only the op checks (armed by the first swap) stamp uses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "alloc.h"
#include "../core/capture.h"
#include "internal.h"

int remat_alloc_swap_armed, remat_alloc_nswapped;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void remat_alloc_swap_enable(int on)
{
	pthread_mutex_lock(&alloc_state.lock);
	alloc_state.swapping = on;
	pthread_mutex_unlock(&alloc_state.lock);
}

static size_t dev_index(const struct remat_device *d)
{
	return (size_t)(d - alloc_state.devs);
}

/* The least recently used large allocation of d that may go, or NULL. */
static struct remat_entry *victim(struct remat_device *d)
{
	struct remat_entry *best = NULL, *e;
	for (size_t i = 0; (e = remat_map_next(&alloc_state.live, &i));) {
		if (e->small || e->host || e->pins || (size_t)e->dev != dev_index(d))
			continue;
		if (!best || e->used < best->used)
			best = e;
	}
	return best;
}

int remat_swap_make_room(struct remat_device *d)
{
	/* Swapping synchronizes and copies synchronously: not during a
	 * capture that forbids it (the allocation fails instead). */
	if (remat_capture_strict())
		return -1;
	/* Frees and unmaps the streams have not reached yet come first: they
	 * give memory back without a copy. */
	if (d->npending || d->nzombie) {
		uint64_t before = alloc_state.physical - (uint64_t)d->npool * d->gran;
		remat_pending_reclaim_wait(d);
		if (d->npool || alloc_state.physical - (uint64_t)d->npool * d->gran < before)
			return 0;
	}
	struct remat_entry *e = victim(d);
	if (!e)
		return -1;
	void *host = malloc(e->size);
	if (!host) {
		remat_warn("out of host memory to swap %llu bytes out of the device",
		           (unsigned long long)e->size);
		return -1;
	}
	uint64_t t0 = now_ns();
	/* Work queued on any stream may still read or write it. */
	remat_drv.cuCtxSynchronize();
	remat_pending_reclaim_wait(d);
	if (remat_drv.cuMemcpyDtoH(host, e->addr, e->size) != CUDA_SUCCESS) {
		free(host);
		remat_warn("cannot copy %llu bytes at 0x%llx to the host; not swapping",
		           (unsigned long long)e->size, (unsigned long long)e->addr);
		return -1;
	}
	size_t first = (e->addr - d->large_base) / d->gran;
	size_t n = (e->size + d->gran - 1) / d->gran;
	for (size_t pg = first; pg < first + n; pg++)
		if (d->page[pg])
			remat_large_unmap_page(d, pg);
	e->host = host;
	__atomic_add_fetch(&remat_alloc_nswapped, 1, __ATOMIC_RELAXED);
	alloc_state.swap_stats.outs++;
	alloc_state.swap_stats.out_bytes += e->size;
	alloc_state.swap_stats.host += e->size;
	if (alloc_state.swap_stats.host > alloc_state.swap_stats.host_max)
		alloc_state.swap_stats.host_max = alloc_state.swap_stats.host;
	alloc_state.swap_stats.ns += now_ns() - t0;
	if (!remat_alloc_swap_armed) {
		remat_log(REMAT_LOG_INFO,
		          "the device is full before a plan applies: swapping least recently "
		          "used allocations to the host until it does");
		/* The session watches every op from now on (it looks at this
		 * after each allocation): each must bring back what it touches. */
		__atomic_store_n(&remat_alloc_swap_armed, 1, __ATOMIC_RELEASE);
	}
	remat_log(REMAT_LOG_DEBUG, "swapped out %llu bytes at 0x%llx", (unsigned long long)e->size,
	          (unsigned long long)e->addr);
	return 0;
}

void remat_swap_forget(struct remat_entry *e)
{
	free(e->host);
	alloc_state.swap_stats.host -= e->size;
	e->host = NULL;
	__atomic_sub_fetch(&remat_alloc_nswapped, 1, __ATOMIC_RELAXED);
}

static CUresult swap_in(struct remat_entry *e)
{
	struct remat_device *d = &alloc_state.devs[e->dev];
	uint64_t t0 = now_ns();
	size_t first = (e->addr - d->large_base) / d->gran;
	size_t n = (e->size + d->gran - 1) / d->gran;
	/* Pinned while its chunks are found: making room must not pick it. */
	e->pins++;
	CUresult r = remat_large_map_pages(d, first, n, NULL, 0);
	e->pins--;
	if (r == CUDA_SUCCESS)
		r = remat_drv.cuMemcpyHtoD(e->addr, e->host, e->size);
	if (r != CUDA_SUCCESS) {
		remat_warn("cannot bring %llu swapped bytes at 0x%llx back to the device (error "
		           "%d): the device is too small even with swapping",
		           (unsigned long long)e->size, (unsigned long long)e->addr, (int)r);
		return r;
	}
	/* A pageable copy may return before the device has the data: the op
	 * that needs it may run on any stream. */
	remat_drv.cuCtxSynchronize();
	remat_swap_forget(e);
	alloc_state.swap_stats.ins++;
	alloc_state.swap_stats.in_bytes += e->size;
	alloc_state.swap_stats.ns += now_ns() - t0;
	return CUDA_SUCCESS;
}

uint64_t remat_alloc_touch_begin(void)
{
	return __atomic_add_fetch(&alloc_state.clock, 1, __ATOMIC_RELAXED);
}

int remat_alloc_touch(uint64_t stamp, const uint64_t *lohi, size_t n, uint64_t *pinned,
                      size_t *npinned, size_t cap)
{
	int swapped = 0;
	pthread_mutex_lock(&alloc_state.lock);
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = lohi[2 * i], hi = lohi[2 * i + 1];
		for (size_t k = 0; k < REMAT_MAX_DEVICES; k++) {
			struct remat_device *d = &alloc_state.devs[k];
			if (d->ready <= 0 || lo < d->large_base ||
			    lo - d->large_base >= (uint64_t)d->npages * d->gran)
				continue;
			size_t pg = (lo - d->large_base) / d->gran;
			while (pg < d->npages && d->large_base + (uint64_t)pg * d->gran < hi) {
				uint64_t owner = d->page_owner[pg];
				struct remat_entry *e =
				    owner ? remat_map_find(&alloc_state.live, owner) : NULL;
				if (!e) {
					pg++;
					continue;
				}
				if (e->used != stamp) {
					e->used = stamp;
					if (*npinned < cap) {
						e->pins++;
						pinned[(*npinned)++] = e->addr;
						swapped += e->host != NULL;
					} else if (e->host) {
						swapped = -1;
					}
				}
				pg = (e->addr + e->size - 1 - d->large_base) / d->gran + 1;
			}
			break;
		}
		if (swapped < 0)
			break;
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return swapped;
}

CUresult remat_alloc_swap_in(const uint64_t *addrs, size_t n)
{
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&alloc_state.lock);
	if (addrs) {
		for (size_t i = 0; i < n && r == CUDA_SUCCESS; i++) {
			struct remat_entry *e = remat_map_find(&alloc_state.live, addrs[i]);
			if (e && e->host)
				r = swap_in(e);
		}
	} else {
		/* Most recently used first: if not all fit, the rest is what is
		 * least likely to be needed soon. */
		while (remat_alloc_nswapped && r == CUDA_SUCCESS) {
			struct remat_entry *best = NULL, *e;
			for (size_t i = 0; (e = remat_map_next(&alloc_state.live, &i));)
				if (e->host && (!best || e->used > best->used))
					best = e;
			r = best ? swap_in(best) : CUDA_ERROR_INVALID_VALUE;
		}
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

void remat_alloc_unpin(const uint64_t *addrs, size_t n)
{
	pthread_mutex_lock(&alloc_state.lock);
	for (size_t i = 0; i < n; i++) {
		struct remat_entry *e = remat_map_find(&alloc_state.live, addrs[i]);
		if (e && e->pins > 0)
			e->pins--;
	}
	pthread_mutex_unlock(&alloc_state.lock);
}

void remat_alloc_swap_stats(struct remat_swap_stats *s)
{
	pthread_mutex_lock(&alloc_state.lock);
	*s = alloc_state.swap_stats;
	pthread_mutex_unlock(&alloc_state.lock);
}

/* Copies over PCIe run at roughly 16 GB/s: what the same swaps would cost
 * on a real GPU, next to what they took here. */
#define PCIE_BYTES_PER_NS 16.0

void remat_alloc_swap_report(long long iteration)
{
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_swap_stats s = alloc_state.swap_stats, r = alloc_state.swap_reported;
	alloc_state.swap_reported = alloc_state.swap_stats;
	int nswapped = remat_alloc_nswapped;
	pthread_mutex_unlock(&alloc_state.lock);
	if (s.outs == r.outs && s.ins == r.ins)
		return;
	uint64_t bytes = s.out_bytes - r.out_bytes + s.in_bytes - r.in_bytes;
	char it[48] = "";
	if (iteration >= 0)
		snprintf(it, sizeof(it), " in iteration %lld", iteration);
	remat_log(REMAT_LOG_INFO,
	          "swapping%s: %llu out (%llu bytes), %llu in (%llu bytes), %.3f ms here "
	          "(~%.3f ms at 16 GB/s); %d allocation(s), %llu bytes on the host",
	          it, (unsigned long long)(s.outs - r.outs),
	          (unsigned long long)(s.out_bytes - r.out_bytes),
	          (unsigned long long)(s.ins - r.ins),
	          (unsigned long long)(s.in_bytes - r.in_bytes), (double)(s.ns - r.ns) / 1e6,
	          (double)bytes / PCIE_BYTES_PER_NS / 1e6, nswapped, (unsigned long long)s.host);
}

void remat_alloc_swap_summary(void)
{
	struct remat_swap_stats s;
	remat_alloc_swap_stats(&s);
	if (!s.outs)
		return;
	remat_log(REMAT_LOG_INFO,
	          "run mode: swapping before the plan: %llu out (%llu bytes), %llu in (%llu "
	          "bytes), %.3f ms here (~%.3f ms at 16 GB/s), at most %llu bytes on the host",
	          (unsigned long long)s.outs, (unsigned long long)s.out_bytes,
	          (unsigned long long)s.ins, (unsigned long long)s.in_bytes, (double)s.ns / 1e6,
	          (double)(s.out_bytes + s.in_bytes) / PCIE_BYTES_PER_NS / 1e6,
	          (unsigned long long)s.host_max);
}
