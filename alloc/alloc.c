/*
 * alloc.c — the allocator's entry points: one lock, one reservation per
 * device made on its first allocation, the table of live allocations.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

#define MAX_DEVICES REMAT_MAX_DEVICES

struct alloc_state alloc_state = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                  .live = REMAT_MAP_INIT(struct remat_entry)};

static int device_init(struct remat_device *d, CUdevice dev)
{
	d->ready = -1;
	d->dev = dev;
	int vmm = 1;
	if (remat_drv.cuDeviceGetAttribute(&vmm,
	                                   CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
	                                   dev) == CUDA_SUCCESS &&
	    !vmm) {
		remat_warn("device %d has no virtual memory management; allocations pass through",
		           (int)dev);
		return -1;
	}
	memset(&d->prop, 0, sizeof(d->prop));
	d->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	d->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	d->prop.location.id = dev;
	d->access.location = d->prop.location;
	d->access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	size_t total = 0;
	if (remat_drv.cuMemGetAllocationGranularity(&d->gran, &d->prop,
	                                            CU_MEM_ALLOC_GRANULARITY_MINIMUM) ||
	    !d->gran || remat_drv.cuDeviceTotalMem(&total, dev) || !total) {
		remat_warn("device %d: cannot query granularity or memory size; allocations pass "
		           "through",
		           (int)dev);
		return -1;
	}
	uint64_t g = d->gran;
	uint64_t small = (total / 8 + g - 1) / g * g;
	if (small < 64 * g)
		small = 64 * g;
	/* Each allocation has a range of its own and freed ranges are reused
	 * first fit, so the address space needs slack over physical memory. */
	uint64_t large = (8 * (uint64_t)total + g - 1) / g * g;
	/* Run mode quarantines freed ranges for a whole iteration, and SAVE
	 * steps need room for transient copies: virtual space is cheap. */
	uint64_t scratch = ((uint64_t)total + g - 1) / g * g;
	CUdeviceptr base = 0;
	while (remat_drv.cuMemAddressReserve(&base, small + large + scratch, g, 0, 0) !=
	       CUDA_SUCCESS) {
		if (large <= (uint64_t)total) {
			remat_warn("device %d: cannot reserve %llu bytes of address space; "
			           "allocations pass through",
			           (int)dev, (unsigned long long)(small + large + scratch));
			return -1;
		}
		large = (large / 2 + g - 1) / g * g;
	}
	d->base = base;
	d->size = small + large + scratch;
	d->small_top = base;
	d->large_base = base + small;
	d->npages = (large + scratch) / g;
	d->page = calloc(d->npages, sizeof(*d->page));
	d->page_pending = malloc(d->npages * sizeof(*d->page_pending));
	d->page_zombie = malloc(d->npages * sizeof(*d->page_zombie));
	d->page_owner = calloc(d->npages, sizeof(*d->page_owner));
	if (!d->page || !d->page_pending || !d->page_zombie || !d->page_owner ||
	    remat_range_init(&d->small_va, base, small) ||
	    remat_range_init(&d->large_va, base + small, large) ||
	    remat_range_init(&d->scratch_va, base + small + large, scratch)) {
		remat_warn("out of host memory for the allocator; allocations pass through");
		return -1;
	}
	memset(d->page_pending, 0xff, d->npages * sizeof(*d->page_pending));
	memset(d->page_zombie, 0xff, d->npages * sizeof(*d->page_zombie));
	if (!alloc_state.first_gran)
		alloc_state.first_gran = d->gran;
	d->ready = 1;
	remat_log(REMAT_LOG_INFO,
	          "device %d: reserved %llu MiB of address space at 0x%llx, granularity %zu",
	          (int)dev, (unsigned long long)(d->size >> 20), (unsigned long long)base, d->gran);
	return 0;
}

/* Which large allocation covers each page: the op checks (swap.c) find an
 * interior pointer's allocation through it. */
static void set_owner(struct remat_device *d, uint64_t va, size_t size, uint64_t owner)
{
	if (va < d->large_base)
		return;
	size_t first = (va - d->large_base) / d->gran, n = (size + d->gran - 1) / d->gran;
	for (size_t k = 0; k < n && first + k < d->npages; k++)
		d->page_owner[first + k] = owner;
}

struct remat_device *remat_device_ready(CUdevice dev)
{
	if (dev < 0 || dev >= MAX_DEVICES)
		return NULL;
	struct remat_device *d = &alloc_state.devs[dev];
	if (!d->ready)
		device_init(d, dev);
	return d->ready > 0 ? d : NULL;
}

void remat_alloc_refused(struct remat_device *d, size_t size, uint64_t need)
{
	uint64_t used = alloc_state.physical - (uint64_t)d->npool * d->gran;
	remat_warn("allocation of %zu bytes exceeds REMAT_BUDGET=%llu by %llu bytes "
	           "(%llu bytes in use, %llu more needed); the allocation fails",
	           size, (unsigned long long)alloc_state.budget,
	           (unsigned long long)(used + need - alloc_state.budget), (unsigned long long)used,
	           (unsigned long long)need);
}

CUresult remat_alloc(CUdeviceptr *p, size_t size, CUstream stream, int async,
                     struct remat_alloc_info *info)
{
	if (!p || !size)
		return CUDA_ERROR_INVALID_VALUE;
	CUdevice dev;
	if (remat_drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = remat_device_ready(dev);
	if (!d) {
		pthread_mutex_unlock(&alloc_state.lock);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	alloc_state.gen++;
	remat_pending_reclaim(d);
	uint64_t want = alloc_state.follow_next < alloc_state.nfollow
	                    ? alloc_state.follow[alloc_state.follow_next++]
	                    : 0;
	int small = size < d->gran;
	uint64_t va = 0;
	alloc_state.shortfall = 0;
	CUresult r = small ? remat_small_alloc(d, &va, size, stream, async, want)
	                   : remat_large_alloc(d, &va, size, stream, async, want);
	static int told;
	if (r == CUDA_ERROR_OUT_OF_MEMORY && !alloc_state.shortfall && !alloc_state.budget &&
	    alloc_state.swapping && !told++)
		remat_warn(
		    "the device is out of memory (allocation of %zu bytes) while no plan is "
		    "applied, even after swapping what could go to the host (%d allocation(s)): "
		    "the iterations before the plan run unmodified and need at least their "
		    "largest set of buffers used together",
		    size, remat_alloc_nswapped);
	if (r == CUDA_ERROR_OUT_OF_MEMORY && alloc_state.shortfall)
		remat_alloc_refused(d, size,
		                    small ? d->gran : (size + d->gran - 1) / d->gran * d->gran);
	if (r == CUDA_SUCCESS) {
		struct remat_entry e = {
		    .addr = va,
		    .size = size,
		    .dev = dev,
		    .small = small,
		    .used = __atomic_add_fetch(&alloc_state.clock, 1, __ATOMIC_RELAXED)};
		struct remat_entry *slot = remat_map_insert(&alloc_state.live, va);
		if (!slot) {
			if (small)
				remat_small_free(d, va, size, stream, 0);
			else
				remat_large_free(d, va, size, stream, 0);
			r = CUDA_ERROR_OUT_OF_MEMORY;
		} else {
			*slot = e;
			alloc_state.live_bytes += size;
			*p = va;
			set_owner(d, va, size, small ? 0 : va);
			if (info) {
				info->size = size;
				info->small = small;
				info->rounded =
				    small ? 0 : (size + d->gran - 1) / d->gran * d->gran;
			}
		}
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

static struct remat_device *device_of(uint64_t addr)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		if (alloc_state.devs[i].ready > 0 &&
		    addr - alloc_state.devs[i].base < alloc_state.devs[i].size)
			return &alloc_state.devs[i];
	return NULL;
}

/* Pages [first, first+n) of the large or scratch region covering
 * [addr, addr+bytes), or NULL when that is not such a range. */
static struct remat_device *pages_of(uint64_t addr, uint64_t bytes, size_t *first, size_t *n)
{
	struct remat_device *d = device_of(addr);
	if (!d || addr < d->large_base || !bytes)
		return NULL;
	*first = (addr - d->large_base) / d->gran;
	*n = (addr + bytes - 1 - d->large_base) / d->gran + 1 - *first;
	return *first + *n <= d->npages ? d : NULL;
}

CUresult remat_alloc_map(uint64_t addr, uint64_t bytes, CUstream stream)
{
	size_t first, n;
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = pages_of(addr, bytes, &first, &n);
	alloc_state.shortfall = 0;
	CUresult r = d ? remat_large_map_pages(d, first, n, stream, 1) : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

int remat_alloc_unmap_after(uint64_t addr, uint64_t bytes, const CUstream *streams, int n)
{
	size_t first, np;
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = pages_of(addr, bytes, &first, &np);
	int r = d ? remat_zombie_add(d, first, np, streams, n) : -1;
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

int remat_alloc_mapped(uint64_t addr, uint64_t bytes)
{
	size_t first, n;
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = pages_of(addr, bytes, &first, &n);
	int all = d != NULL;
	for (size_t k = 0; d && k < n; k++)
		all &= d->page[first + k] && d->page_zombie[first + k] < 0 &&
		       d->page_pending[first + k] < 0;
	pthread_mutex_unlock(&alloc_state.lock);
	return all;
}

void remat_alloc_poll(int wait)
{
	/* Called for every op in run mode: nothing to do is the common case. */
	if (!wait && !__atomic_load_n(&alloc_state.zombies, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&alloc_state.lock);
	for (int i = 0; i < MAX_DEVICES; i++)
		if (alloc_state.devs[i].ready > 0 &&
		    (alloc_state.devs[i].nzombie || alloc_state.devs[i].npending)) {
			if (wait)
				remat_pending_reclaim_wait(&alloc_state.devs[i]);
			else
				remat_pending_reclaim(&alloc_state.devs[i]);
		}
	pthread_mutex_unlock(&alloc_state.lock);
}

CUresult remat_alloc_scratch(uint64_t bytes, uint64_t *addr, CUstream stream)
{
	CUdevice dev;
	if (remat_drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS || dev < 0 || dev >= MAX_DEVICES)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = &alloc_state.devs[dev];
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
	uint64_t b = d->ready > 0 ? (bytes + d->gran - 1) / d->gran * d->gran : 0;
	uint64_t va = b ? remat_range_alloc(&d->scratch_va, b, d->gran) : 0;
	if (va) {
		alloc_state.shortfall = 0;
		r = remat_large_map_pages(d, (va - d->large_base) / d->gran, b / d->gran, stream,
		                          1);
		if (r == CUDA_SUCCESS)
			*addr = va;
		else
			remat_range_free(&d->scratch_va, va, b);
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

void remat_alloc_scratch_free(uint64_t addr, uint64_t bytes, CUstream stream)
{
	size_t first, n;
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = pages_of(addr, bytes, &first, &n);
	if (d) {
		/* The range may be handed out again at once: its next user takes
		 * over pages still waiting for the unmap, ordered after it. */
		remat_zombie_add(d, first, n, &stream, 1);
		remat_range_free(&d->scratch_va, d->large_base + first * d->gran,
		                 (uint64_t)n * d->gran);
	}
	pthread_mutex_unlock(&alloc_state.lock);
}

void remat_alloc_set_budget(uint64_t bytes)
{
	pthread_mutex_lock(&alloc_state.lock);
	alloc_state.budget = bytes;
	/* Spare chunks kept while uncapped count against the cap now. */
	for (int i = 0; bytes && i < MAX_DEVICES; i++)
		if (alloc_state.devs[i].ready > 0)
			remat_pool_trim(&alloc_state.devs[i]);
	pthread_mutex_unlock(&alloc_state.lock);
}

void remat_alloc_quarantine(int on)
{
	pthread_mutex_lock(&alloc_state.lock);
	alloc_state.quarantining = on;
	for (int i = 0; !on && i < MAX_DEVICES; i++)
		if (alloc_state.devs[i].ready > 0)
			remat_large_unquarantine(&alloc_state.devs[i]);
	pthread_mutex_unlock(&alloc_state.lock);
}

void remat_alloc_boundary(int wait)
{
	pthread_mutex_lock(&alloc_state.lock);
	for (int i = 0; i < MAX_DEVICES; i++) {
		struct remat_device *d = &alloc_state.devs[i];
		if (d->ready <= 0)
			continue;
		if (wait && d->nzombie)
			remat_zombie_reclaim(d, 1);
		remat_large_unquarantine(d);
		remat_pool_trim(d);
	}
	pthread_mutex_unlock(&alloc_state.lock);
}

int remat_free(CUdeviceptr p, CUstream stream, int async, CUresult *rc)
{
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_entry e;
	if (!p || remat_map_remove(&alloc_state.live, p, &e)) {
		pthread_mutex_unlock(&alloc_state.lock);
		return 0;
	}
	struct remat_device *d = &alloc_state.devs[e.dev];
	if (e.host)
		remat_swap_forget(&e);
	if (e.small) {
		remat_small_free(d, p, e.size, stream, async);
	} else {
		set_owner(d, p, e.size, 0);
		remat_large_free(d, p, e.size, stream, async);
	}
	alloc_state.live_bytes -= e.size;
	remat_pending_reclaim(d);
	pthread_mutex_unlock(&alloc_state.lock);
	if (rc)
		*rc = CUDA_SUCCESS;
	return 1;
}

int remat_alloc_owns(CUdeviceptr p, struct remat_alloc_info *info)
{
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_entry *e = remat_map_find(&alloc_state.live, p);
	if (e && info) {
		size_t g = alloc_state.devs[e->dev].gran;
		info->size = e->size;
		info->small = e->small;
		info->rounded = e->small ? 0 : (e->size + g - 1) / g * g;
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return e != NULL;
}

void remat_alloc_follow(const CUdeviceptr *addrs, size_t n)
{
	pthread_mutex_lock(&alloc_state.lock);
	CUdeviceptr *f = n ? malloc(n * sizeof(*f)) : NULL;
	if (f)
		memcpy(f, addrs, n * sizeof(*f));
	free(alloc_state.follow);
	alloc_state.follow = f;
	alloc_state.nfollow = f ? n : 0;
	alloc_state.follow_next = 0;
	pthread_mutex_unlock(&alloc_state.lock);
}

void remat_alloc_stats(struct remat_alloc_stats *s)
{
	pthread_mutex_lock(&alloc_state.lock);
	s->physical = alloc_state.physical;
	s->peak = alloc_state.peak;
	s->small_pool = alloc_state.small_bytes;
	s->live = alloc_state.live_bytes;
	s->pooled = 0;
	for (int i = 0; i < MAX_DEVICES; i++)
		if (alloc_state.devs[i].ready > 0)
			s->pooled += (uint64_t)alloc_state.devs[i].npool * alloc_state.devs[i].gran;
	s->granularity = alloc_state.first_gran;
	s->program_fixed = remat_prog_fixed();
	pthread_mutex_unlock(&alloc_state.lock);
}

void remat_alloc_reset_peak(void)
{
	pthread_mutex_lock(&alloc_state.lock);
	alloc_state.peak = alloc_state.physical;
	pthread_mutex_unlock(&alloc_state.lock);
}
