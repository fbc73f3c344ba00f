/*
 * devmem.c — device memory as a distinct host address range.
 *
 * One large PROT_NONE, MAP_NORESERVE reservation stands for the device's
 * virtual address space; cuMemAlloc allocations and cuMemAddressReserve
 * ranges are carved from it, so any device address is recognisable (the
 * fault handler needs only two compares) and anything not live in it is
 * inaccessible.  Physical memory is counted separately against
 * SIMCUDA_MEMORY, with a high-water mark.
 */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

uintptr_t sim_dev_base, sim_dev_end;

/* Big enough that next-fit rarely wraps: freed ranges are reused late,
 * which keeps a use-after-free pointing at inaccessible memory. */
#define VA_SPAN  (1ull << 40)
#define VA_ALIGN (1ull << 30)
/* A hint, so device addresses are the same on every run (traces and logs
 * compare across runs); the kernel picks another spot if it is taken. */
#define VA_HINT (1ull << 45)

struct range {
	uintptr_t base;
	size_t size;
	enum range_kind kind;
};

static pthread_mutex_t va_lock = PTHREAD_MUTEX_INITIALIZER;
static struct range *ranges; /* sorted by base */
static size_t nranges, cap_ranges;
static uintptr_t cursor;

static pthread_mutex_t phys_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t phys_used, alloc_count;

int devmem_init(void)
{
	for (uint64_t span = VA_SPAN; span >= (64ull << 30); span >>= 1) {
		void *p = mmap((void *)(uintptr_t)VA_HINT, span + VA_ALIGN, PROT_NONE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		uintptr_t base = ((uintptr_t)p + VA_ALIGN - 1) & ~(uintptr_t)(VA_ALIGN - 1);
		sim_dev_base = base;
		sim_dev_end = base + span;
		cursor = sim_dev_base;
		return 0;
	}
	fprintf(stderr, "simcuda: cannot reserve the device address range\n");
	return -1;
}

CUresult phys_charge(uint64_t bytes)
{
	if (sim_cfg.sweep == SWEEP_ALLOC) {
		pthread_mutex_lock(&phys_lock);
		uint64_t next = alloc_count + 1;
		pthread_mutex_unlock(&phys_lock);
		sweep_point(SWEEP_ALLOC, next);
	}
	pthread_mutex_lock(&phys_lock);
	uint64_t n = ++alloc_count;
	CUresult r = CUDA_SUCCESS;
	if (sim_cfg.fail_alloc && n == sim_cfg.fail_alloc) {
		r = CUDA_ERROR_OUT_OF_MEMORY; /* fault injection */
		atomic_fetch_add(&sim_stats.faults_injected, 1);
	} else if (bytes > sim_cfg.capacity || phys_used + bytes > sim_cfg.capacity)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else {
		phys_used += bytes;
		if (phys_used > atomic_load(&sim_stats.peak_physical))
			atomic_store(&sim_stats.peak_physical, phys_used);
		atomic_fetch_add(&sim_stats.allocs, 1);
	}
	pthread_mutex_unlock(&phys_lock);
	return r;
}

void phys_release(uint64_t bytes)
{
	pthread_mutex_lock(&phys_lock);
	phys_used -= bytes;
	atomic_fetch_add(&sim_stats.frees, 1);
	pthread_mutex_unlock(&phys_lock);
}

uint64_t phys_in_use(void)
{
	pthread_mutex_lock(&phys_lock);
	uint64_t u = phys_used;
	pthread_mutex_unlock(&phys_lock);
	return u;
}

/* Index of the first range whose base is >= a. */
static size_t lower_bound(uintptr_t a)
{
	size_t lo = 0, hi = nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ranges[mid].base < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool range_free(uintptr_t a, size_t size)
{
	if (a < sim_dev_base || a + size > sim_dev_end || a + size < a)
		return false;
	size_t i = lower_bound(a);
	if (i < nranges && ranges[i].base < a + size)
		return false;
	if (i > 0 && ranges[i - 1].base + ranges[i - 1].size > a)
		return false;
	return true;
}

/* First fit from `from` to the end of the range; 0 when nothing fits. */
static uintptr_t fit_from(uintptr_t from, size_t size, size_t align)
{
	uintptr_t a = (from + align - 1) & ~(uintptr_t)(align - 1);
	for (size_t i = lower_bound(from); a + size <= sim_dev_end; i++) {
		if (i > 0 && ranges[i - 1].base + ranges[i - 1].size > a)
			a = (ranges[i - 1].base + ranges[i - 1].size + align - 1) &
			    ~(uintptr_t)(align - 1);
		if (i >= nranges || a + size <= ranges[i].base)
			return a + size <= sim_dev_end ? a : 0;
	}
	return 0;
}

uintptr_t va_take(size_t size, size_t align, uintptr_t fixed, enum range_kind kind)
{
	if (size == 0 || size > sim_dev_end - sim_dev_base)
		return 0;
	pthread_mutex_lock(&va_lock);
	uintptr_t a = 0;
	if (fixed && (fixed & (align - 1)) == 0 && range_free(fixed, size))
		a = fixed;
	if (a == 0)
		a = fit_from(cursor, size, align);
	if (a == 0)
		a = fit_from(sim_dev_base, size, align); /* wrapped around */
	if (a) {
		if (nranges == cap_ranges) {
			size_t nc = cap_ranges ? cap_ranges * 2 : 1024;
			struct range *nr = realloc(ranges, nc * sizeof(*nr));
			if (nr == NULL) {
				pthread_mutex_unlock(&va_lock);
				return 0;
			}
			ranges = nr;
			cap_ranges = nc;
		}
		size_t i = lower_bound(a);
		memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof(*ranges));
		ranges[i] = (struct range){a, size, kind};
		nranges++;
		if (!fixed)
			cursor = a + size;
	}
	pthread_mutex_unlock(&va_lock);
	return a;
}

void va_give(uintptr_t addr)
{
	pthread_mutex_lock(&va_lock);
	size_t i = lower_bound(addr);
	if (i < nranges && ranges[i].base == addr) {
		memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof(*ranges));
		nranges--;
	}
	pthread_mutex_unlock(&va_lock);
}

void va_seal(uintptr_t addr, size_t size)
{
	/* A fresh anonymous PROT_NONE mapping both drops the pages and makes
	 * the range fault again, whatever was mapped there before. */
	if (mmap((void *)addr, size, PROT_NONE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED) {
		perror("simcuda: mmap (sealing device range)");
		abort();
	}
}
