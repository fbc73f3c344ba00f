/*
 * vmm.c — the virtual memory management API, for real.
 *
 * A physical allocation (cuMemCreate) is a memfd of its size, so one
 * handle can be mapped at several addresses and its contents survive an
 * unmap.  The descriptor is closed at once (a job with thousands of chunks
 * would run out of descriptors): a PROT_NONE "holder" mapping outside the
 * device range keeps the pages, and mremap(holder, 0, ...) makes each new
 * mapping of the same pages.  Where mremap cannot do that (valgrind does
 * not implement it), each handle keeps its descriptor and mappings are
 * made from it, with the descriptor limit raised.  cuMemAddressReserve takes a range of the device
 * address space; cuMemMap maps the memfd there MAP_SHARED|MAP_FIXED but inaccessible;
 * cuMemSetAccess makes it readable/writable; cuMemUnmap puts a PROT_NONE
 * mapping back, so any later touch faults.  Arguments are checked as the
 * real driver checks them (granularity alignment, mapping only inside a
 * reservation and never over another mapping, unmapping exactly whole
 * mappings, releasing a mapped handle keeps its memory until unmapped).
 */
#include "driver.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

struct phys {
	void *holder; /* shared mapping of the memfd, never accessible */
	int fd;       /* the memfd, kept only where mremap cannot duplicate (-1) */
	size_t size;
	CUmemAllocationProp prop;
	int refs; /* handle references: cuMemCreate, cuMemRetainAllocationHandle */
	int maps; /* live mappings */
	/* In the list of every allocation not yet destroyed (lock). */
	struct phys *prev, *next;
};

struct mapping {
	uintptr_t va;
	size_t size;
	struct phys *h;
	int prot;
};

struct reservation {
	uintptr_t base;
	size_t size;
	struct mapping *maps; /* sorted by va */
	size_t nmaps, cap;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct reservation *res; /* sorted by base */
static size_t nres, capres;
static struct phys *all_phys;

static bool aligned(uint64_t v)
{
	return (v & (sim_cfg.granularity - 1)) == 0;
}

static CUresult check_prop(const CUmemAllocationProp *prop)
{
	if (prop == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.id != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
		return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_SUCCESS;
}

static CUresult granularity(size_t *g, const CUmemAllocationProp *prop,
                            CUmemAllocationGranularity_flags option)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (g == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	    option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = check_prop(prop);
	if (r != CUDA_SUCCESS)
		return r;
	*g = sim_cfg.granularity;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity_out,
                                                      const CUmemAllocationProp *prop,
                                                      CUmemAllocationGranularity_flags option)
{
	cuMemGetAllocationGranularity_params p = {granularity_out, prop, option};
	API_CALL(cuMemGetAllocationGranularity, &p, granularity(granularity_out, prop, option));
}

/* ---- physical allocations --------------------------------------------- */

static void phys_destroy(struct phys *h)
{
	pthread_mutex_lock(&lock);
	if (h->prev)
		h->prev->next = h->next;
	else
		all_phys = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&lock);
	if (h->fd >= 0)
		close(h->fd);
	munmap(h->holder, h->size);
	phys_release(h->size);
	free(h);
}

/* 1 when mremap(old, 0, ...) makes a second mapping of shared pages (Linux
 * does; valgrind does not), tried once on a page of its own. */
static bool mremap_duplicates(void)
{
	static int known = -1;
	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE) >= 0)
		return known;
	long page = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("simcuda-probe", MFD_CLOEXEC);
	void *a = MAP_FAILED, *b = MAP_FAILED;
	if (fd >= 0 && ftruncate(fd, page) == 0)
		a = mmap(NULL, (size_t)page, PROT_NONE, MAP_SHARED, fd, 0);
	if (a != MAP_FAILED)
		b = mremap(a, 0, (size_t)page, MREMAP_MAYMOVE);
	int works = b != MAP_FAILED;
	if (b != MAP_FAILED)
		munmap(b, (size_t)page);
	if (a != MAP_FAILED)
		munmap(a, (size_t)page);
	if (fd >= 0)
		close(fd);
	if (!works) {
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	__atomic_store_n(&known, works, __ATOMIC_RELEASE);
	return works;
}

/* The pages of a new allocation: a memfd of size bytes and its holder
 * mapping, read-write for the caller to fill (then PROT_NONE), or NULL;
 * *fd: the descriptor where mappings need it (see above), else -1. */
static void *new_backing(size_t size, int *fd_out)
{
	int fd = memfd_create("simcuda-physical", MFD_CLOEXEC);
	void *holder = MAP_FAILED;
	if (fd >= 0 && ftruncate(fd, (off_t)size) == 0)
		holder =
		    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	int keep_fd = fd >= 0 && holder != MAP_FAILED && !mremap_duplicates();
	if (fd >= 0 && !keep_fd)
		close(fd);
	*fd_out = keep_fd ? fd : -1;
	return holder == MAP_FAILED ? NULL : holder;
}

/* One more mapping of h's pages, at va, inaccessible like the holder. */
static bool map_at(const struct phys *h, uintptr_t va, size_t size)
{
	return (h->fd >= 0 ? mmap((void *)va, size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, 0)
	                   : mremap(h->holder, 0, size, MREMAP_MAYMOVE | MREMAP_FIXED,
	                            (void *)va)) != MAP_FAILED;
}

/* Changing what the device maps needs a healthy context; after a launch
 * failure these fail with its sticky error (releasing handles and address
 * ranges, host-side bookkeeping, still works). */
static CUresult vmm_usable(void)
{
	return sim_initialized() ? ctx_sticky_error() : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult mem_create(CUmemGenericAllocationHandle *handle, size_t size,
                           const CUmemAllocationProp *prop, unsigned long long flags)
{
	CUresult usable = vmm_usable();
	if (usable != CUDA_SUCCESS)
		return usable;
	if (handle == NULL || flags != 0 || size == 0 || !aligned(size))
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = check_prop(prop);
	if (r != CUDA_SUCCESS)
		return r;
	r = phys_charge(size);
	if (r != CUDA_SUCCESS)
		return r;
	struct phys *h = calloc(1, sizeof(*h));
	int fd;
	void *holder = new_backing(size, &fd);
	if (holder) {
		fresh_fill(holder, size);
		mprotect(holder, size, PROT_NONE);
	}
	if (h == NULL || holder == NULL) {
		if (holder)
			munmap(holder, size);
		if (fd >= 0)
			close(fd);
		free(h);
		phys_release(size);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	h->fd = fd;
	h->holder = holder;
	h->size = size;
	h->prop = *prop;
	h->refs = 1;
	pthread_mutex_lock(&lock);
	h->next = all_phys;
	if (all_phys)
		all_phys->prev = h;
	all_phys = h;
	pthread_mutex_unlock(&lock);
	handle_add(h, H_MEMHANDLE);
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
	return CUDA_SUCCESS;
}

/* A VMM call made (whatever its result): counted, its per-chunk host cost
 * spent, and under SIMCUDA_VMM_SYNC=device the wait of cuMemUnmap and
 * cuMemSetAccess for all work queued before it.  The wait comes after the
 * call took effect, so queued work that still uses an unmapped range
 * faults as it would on a GPU rather than finishing first. */
static CUresult vmm_done(enum sim_vmm kind, size_t bytes, CUresult r)
{
	atomic_fetch_add(&sim_stats.vmm_calls[kind], 1);
	uint64_t g = sim_cfg.granularity;
	clock_host_spend((bytes + g - 1) / g * sim_prof.vmm_chunk_ns[kind]);
	if (sim_prof.vmm_sync && (kind == VMM_UNMAP || kind == VMM_SET_ACCESS) && sim_initialized())
		ctx_synchronize(&sim_primary);
	return r;
}

EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                    const CUmemAllocationProp *prop, unsigned long long flags)
{
	cuMemCreate_params p = {handle, size, prop, flags};
	API_CALL(cuMemCreate, &p,
	         vmm_done(VMM_CREATE, size, mem_create(handle, size, prop, flags)));
}

static struct phys *handle_of(CUmemGenericAllocationHandle v)
{
	struct phys *h = (struct phys *)(uintptr_t)v;
	return handle_is(h, H_MEMHANDLE) ? h : NULL;
}

static CUresult mem_release(CUmemGenericAllocationHandle v)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&lock);
	struct phys *h = handle_of(v);
	if (h == NULL) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	bool gone = --h->refs == 0;
	if (gone)
		handle_del(h);
	/* Memory still mapped stays until its last unmap. */
	bool destroy = gone && h->maps == 0;
	pthread_mutex_unlock(&lock);
	if (destroy)
		phys_destroy(h);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
	cuMemRelease_params p = {handle};
	pthread_mutex_lock(&lock);
	struct phys *h = handle_of(handle);
	size_t bytes = h ? h->size : 0;
	pthread_mutex_unlock(&lock);
	API_CALL(cuMemRelease, &p, vmm_done(VMM_RELEASE, bytes, mem_release(handle)));
}

static CUresult props_of(CUmemAllocationProp *prop, CUmemGenericAllocationHandle v)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (prop == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	struct phys *h = handle_of(v);
	if (h)
		*prop = h->prop;
	pthread_mutex_unlock(&lock);
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                               CUmemGenericAllocationHandle handle)
{
	cuMemGetAllocationPropertiesFromHandle_params p = {prop, handle};
	API_CALL(cuMemGetAllocationPropertiesFromHandle, &p, props_of(prop, handle));
}

/* ---- reservations ------------------------------------------------------ */

/* The reservation holding [p, p+n), or NULL. */
static struct reservation *reservation_of(uintptr_t p, size_t n)
{
	size_t lo = 0, hi = nres;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (res[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct reservation *r = &res[lo - 1];
	if (p >= r->base + r->size || n > r->base + r->size - p)
		return NULL;
	return r;
}

static CUresult address_reserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                unsigned long long flags)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ptr == NULL || flags != 0 || size == 0 || !aligned(size))
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment == 0)
		alignment = sim_cfg.granularity;
	if ((alignment & (alignment - 1)) || !aligned(alignment))
		return CUDA_ERROR_INVALID_VALUE;
	uintptr_t base = va_take(size, alignment, (uintptr_t)addr, R_RESERVE);
	if (base == 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&lock);
	if (nres == capres) {
		size_t nc = capres ? capres * 2 : 16;
		struct reservation *nr = realloc(res, nc * sizeof(*nr));
		if (nr == NULL) {
			pthread_mutex_unlock(&lock);
			va_give(base);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		res = nr;
		capres = nc;
	}
	size_t i = 0;
	while (i < nres && res[i].base < base)
		i++;
	memmove(&res[i + 1], &res[i], (nres - i) * sizeof(*res));
	res[i] = (struct reservation){.base = base, .size = size};
	nres++;
	pthread_mutex_unlock(&lock);
	*ptr = (CUdeviceptr)base;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                            CUdeviceptr addr, unsigned long long flags)
{
	cuMemAddressReserve_params p = {ptr, size, alignment, addr, flags};
	API_CALL(cuMemAddressReserve, &p,
	         vmm_done(VMM_RESERVE, size, address_reserve(ptr, size, alignment, addr, flags)));
}

static CUresult address_free(CUdeviceptr ptr, size_t size)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&lock);
	struct reservation *r = reservation_of((uintptr_t)ptr, size);
	/* Only a whole reservation, and only once nothing is mapped in it. */
	if (r == NULL || r->base != (uintptr_t)ptr || r->size != size || r->nmaps) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	free(r->maps);
	size_t i = (size_t)(r - res);
	memmove(&res[i], &res[i + 1], (nres - i - 1) * sizeof(*res));
	nres--;
	pthread_mutex_unlock(&lock);
	va_give((uintptr_t)ptr);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	cuMemAddressFree_params p = {ptr, size};
	API_CALL(cuMemAddressFree, &p, vmm_done(VMM_RESERVE, size, address_free(ptr, size)));
}

/* ---- mappings ---------------------------------------------------------- */

/* Index of the first mapping of r ending after p. */
static size_t first_after(const struct reservation *r, uintptr_t p)
{
	size_t lo = 0, hi = r->nmaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->maps[mid].va + r->maps[mid].size <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mappings [*first, *last) exactly tiling [p, p+n); false otherwise. */
static bool whole_mappings(const struct reservation *r, uintptr_t p, size_t n, size_t *first,
                           size_t *last)
{
	size_t i = first_after(r, p);
	if (i == r->nmaps || r->maps[i].va != p)
		return false;
	uintptr_t at = p;
	size_t j = i;
	while (j < r->nmaps && r->maps[j].va == at && at < p + n)
		at += r->maps[j++].size;
	if (at != p + n)
		return false;
	*first = i;
	*last = j;
	return true;
}

static CUresult mem_map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle v,
                        unsigned long long flags)
{
	CUresult usable = vmm_usable();
	if (usable != CUDA_SUCCESS)
		return usable;
	/* The real driver requires offset 0 ("currently must be zero"). */
	if (flags != 0 || size == 0 || offset != 0 || !aligned(ptr) || !aligned(size))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	struct phys *h = handle_of(v);
	struct reservation *r = reservation_of((uintptr_t)ptr, size);
	CUresult rc = CUDA_SUCCESS;
	if (h == NULL || size > h->size || r == NULL)
		rc = CUDA_ERROR_INVALID_VALUE;
	size_t i = r ? first_after(r, (uintptr_t)ptr) : 0;
	if (rc == CUDA_SUCCESS && i < r->nmaps && r->maps[i].va < (uintptr_t)ptr + size)
		rc = CUDA_ERROR_INVALID_VALUE; /* overlaps an existing mapping */
	if (rc == CUDA_SUCCESS && r->nmaps == r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 16;
		struct mapping *nm = realloc(r->maps, nc * sizeof(*nm));
		if (nm == NULL)
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		else {
			r->maps = nm;
			r->cap = nc;
		}
	}
	if (rc == CUDA_SUCCESS && !map_at(h, (uintptr_t)ptr, size))
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS) {
		memmove(&r->maps[i + 1], &r->maps[i], (r->nmaps - i) * sizeof(*r->maps));
		r->maps[i] = (struct mapping){(uintptr_t)ptr, size, h, PROT_NONE};
		r->nmaps++;
		h->maps++;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                 CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	cuMemMap_params p = {ptr, size, offset, handle, flags};
	API_CALL(cuMemMap, &p, vmm_done(VMM_MAP, size, mem_map(ptr, size, offset, handle, flags)));
}

static CUresult mem_unmap(CUdeviceptr ptr, size_t size)
{
	CUresult usable = vmm_usable();
	if (usable != CUDA_SUCCESS)
		return usable;
	if (size == 0 || !aligned(ptr) || !aligned(size))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	struct reservation *r = reservation_of((uintptr_t)ptr, size);
	size_t first, last;
	if (r == NULL || !whole_mappings(r, (uintptr_t)ptr, size, &first, &last)) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	struct phys **dead = malloc((last - first) * sizeof(*dead));
	if (dead == NULL) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* No implicit synchronization, as on a GPU: work still queued that
	 * touches this range faults. */
	va_seal((uintptr_t)ptr, size);
	size_t ndead = 0;
	for (size_t i = first; i < last; i++) {
		struct phys *h = r->maps[i].h;
		if (--h->maps == 0 && h->refs == 0)
			dead[ndead++] = h;
	}
	memmove(&r->maps[first], &r->maps[last], (r->nmaps - last) * sizeof(*r->maps));
	r->nmaps -= last - first;
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < ndead; i++)
		phys_destroy(dead[i]);
	free(dead);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	cuMemUnmap_params p = {ptr, size};
	API_CALL(cuMemUnmap, &p, vmm_done(VMM_UNMAP, size, mem_unmap(ptr, size)));
}

static CUresult set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult usable = vmm_usable();
	if (usable != CUDA_SUCCESS)
		return usable;
	if (desc == NULL || count == 0 || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	int prot = -1;
	for (size_t i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
		switch (desc[i].flags) {
		case CU_MEM_ACCESS_FLAGS_PROT_NONE:
			prot = PROT_NONE;
			break;
		case CU_MEM_ACCESS_FLAGS_PROT_READ:
			prot = PROT_READ;
			break;
		case CU_MEM_ACCESS_FLAGS_PROT_READWRITE:
			prot = PROT_READ | PROT_WRITE;
			break;
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	pthread_mutex_lock(&lock);
	struct reservation *r = reservation_of((uintptr_t)ptr, size);
	size_t first, last;
	if (r == NULL || !whole_mappings(r, (uintptr_t)ptr, size, &first, &last)) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	mprotect((void *)(uintptr_t)ptr, size, prot);
	for (size_t i = first; i < last; i++)
		r->maps[i].prot = prot;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                       size_t count)
{
	cuMemSetAccess_params p = {ptr, size, desc, count};
	API_CALL(cuMemSetAccess, &p,
	         vmm_done(VMM_SET_ACCESS, size, set_access(ptr, size, desc, count)));
}

static CUresult get_access(unsigned long long *flags, const CUmemLocation *loc, CUdeviceptr ptr)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (flags == NULL || loc == NULL || loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (loc->id != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&lock);
	struct reservation *r = reservation_of((uintptr_t)ptr, 1);
	size_t i = r ? first_after(r, (uintptr_t)ptr) : 0;
	bool ok = r && i < r->nmaps && r->maps[i].va <= (uintptr_t)ptr;
	if (ok) {
		int prot = r->maps[i].prot;
		*flags = prot == PROT_NONE   ? CU_MEM_ACCESS_FLAGS_PROT_NONE
		         : prot == PROT_READ ? CU_MEM_ACCESS_FLAGS_PROT_READ
		                             : CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	}
	pthread_mutex_unlock(&lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
                                       CUdeviceptr ptr)
{
	cuMemGetAccess_params p = {flags, location, ptr};
	API_CALL(cuMemGetAccess, &p, get_access(flags, location, ptr));
}

static CUresult retain_handle(CUmemGenericAllocationHandle *out, void *addr)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	uintptr_t p = (uintptr_t)addr;
	pthread_mutex_lock(&lock);
	struct reservation *r = reservation_of(p, 1);
	size_t i = r ? first_after(r, p) : 0;
	bool ok = r && i < r->nmaps && r->maps[i].va <= p;
	if (ok) {
		struct phys *h = r->maps[i].h;
		if (h->refs++ == 0)
			handle_add(h, H_MEMHANDLE);
		*out = (CUmemGenericAllocationHandle)(uintptr_t)h;
	}
	pthread_mutex_unlock(&lock);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
                                                    void *addr)
{
	cuMemRetainAllocationHandle_params p = {handle, addr};
	API_CALL(cuMemRetainAllocationHandle, &p, retain_handle(handle, addr));
}

bool vmm_range_ok(uintptr_t p, size_t n, bool write)
{
	pthread_mutex_lock(&lock);
	struct reservation *r = reservation_of(p, n);
	bool ok = r != NULL;
	if (ok) {
		size_t i = first_after(r, p);
		uintptr_t at = p;
		while (ok && at < p + n) {
			ok = i < r->nmaps && r->maps[i].va <= at &&
			     (r->maps[i].prot & (write ? PROT_WRITE : PROT_READ));
			if (ok) {
				at = r->maps[i].va + r->maps[i].size;
				i++;
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

bool vmm_range_of(uintptr_t p, uintptr_t *base, size_t *size)
{
	pthread_mutex_lock(&lock);
	struct reservation *r = reservation_of(p, 1);
	size_t i = r ? first_after(r, p) : 0;
	bool ok = r && i < r->nmaps && r->maps[i].va <= p;
	if (ok) {
		*base = r->maps[i].va;
		*size = r->maps[i].size;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

/* ---- a sweep's child (sweep.c) ----------------------------------------- */

/* A fork shares MAP_SHARED pages: each allocation gets pages of its own,
 * a copy, and every mapping is made again from them, with its access. */
int vmm_unshare(void)
{
	int rc = 0;
	pthread_mutex_lock(&lock);
	for (struct phys *h = all_phys; h && !rc; h = h->next) {
		int fd;
		void *own = new_backing(h->size, &fd);
		if (own == NULL || mprotect(h->holder, h->size, PROT_READ)) {
			rc = -1;
			break;
		}
		memcpy(own, h->holder, h->size);
		mprotect(own, h->size, PROT_NONE);
		munmap(h->holder, h->size);
		if (h->fd >= 0)
			close(h->fd);
		h->holder = own;
		h->fd = fd;
	}
	for (size_t i = 0; i < nres && !rc; i++)
		for (size_t j = 0; j < res[i].nmaps && !rc; j++) {
			const struct mapping *m = &res[i].maps[j];
			if (!map_at(m->h, m->va, m->size) ||
			    mprotect((void *)m->va, m->size, m->prot))
				rc = -1;
		}
	pthread_mutex_unlock(&lock);
	return rc;
}
