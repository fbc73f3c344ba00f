/*
 * pinned.c — page-locked host memory (cuMemAllocHost, cuMemHostAlloc,
 * cuMemHostRegister).  It is ordinary host memory, remembered as pinned so
 * that copies follow CUDA's rules for pinned buffers (copy.c): no staging,
 * asynchronous copies truly asynchronous — a buffer changed before the
 * copy ran is copied changed, as on a GPU.
 */
#include "driver.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct pinned {
	uintptr_t base;
	size_t size;
	unsigned flags;
	bool registered; /* cuMemHostRegister: the caller owns the memory */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pinned *tab; /* sorted by base */
static size_t n, cap;

static size_t upper(uintptr_t p) /* first entry with base > p */
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tab[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct pinned *containing(uintptr_t p)
{
	size_t i = upper(p);
	return i && p < tab[i - 1].base + tab[i - 1].size ? &tab[i - 1] : NULL;
}

bool pinned_range(const void *p, size_t bytes)
{
	pthread_mutex_lock(&lock);
	struct pinned *e = containing((uintptr_t)p);
	bool ok = e && bytes <= e->base + e->size - (uintptr_t)p;
	pthread_mutex_unlock(&lock);
	return ok;
}

bool pinned_range_of(uintptr_t p, uintptr_t *base, size_t *size)
{
	pthread_mutex_lock(&lock);
	struct pinned *e = containing(p);
	if (e) {
		*base = e->base;
		*size = e->size;
	}
	pthread_mutex_unlock(&lock);
	return e != NULL;
}

static CUresult add(uintptr_t base, size_t size, unsigned flags, bool registered)
{
	pthread_mutex_lock(&lock);
	size_t i = upper(base);
	/* no overlap with an existing pinned range */
	if ((i && tab[i - 1].base + tab[i - 1].size > base) ||
	    (i < n && tab[i].base < base + size)) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	}
	if (n == cap) {
		size_t nc = cap ? cap * 2 : 64;
		struct pinned *nt = realloc(tab, nc * sizeof(*nt));
		if (nt == NULL) {
			pthread_mutex_unlock(&lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		tab = nt;
		cap = nc;
	}
	memmove(&tab[i + 1], &tab[i], (n - i) * sizeof(*tab));
	tab[i] = (struct pinned){base, size, flags, registered};
	n++;
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

/* Removes the entry starting exactly at p; false when there is none or it
 * is of the other kind. */
static bool take(uintptr_t p, bool registered, struct pinned *out)
{
	pthread_mutex_lock(&lock);
	size_t i = upper(p);
	bool ok = i && tab[i - 1].base == p && tab[i - 1].registered == registered;
	if (ok) {
		*out = tab[i - 1];
		memmove(&tab[i - 1], &tab[i], (n - i) * sizeof(*tab));
		n--;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

static CUresult host_alloc(void **pp, size_t bytes, unsigned flags)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (pp == NULL || bytes == 0 ||
	    (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
	                         CU_MEMHOSTALLOC_WRITECOMBINED)))
		return CUDA_ERROR_INVALID_VALUE;
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fresh_fill(p, bytes);
	r = add((uintptr_t)p, bytes, flags, false);
	if (r != CUDA_SUCCESS) {
		munmap(p, bytes);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*pp = p;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	cuMemAllocHost_v2_params p = {pp, bytesize};
	API_CALL(cuMemAllocHost_v2, &p, host_alloc(pp, bytesize, 0));
}

EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	cuMemHostAlloc_params p = {pp, bytesize, Flags};
	API_CALL(cuMemHostAlloc, &p, host_alloc(pp, bytesize, Flags));
}

static CUresult host_free(void *p)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	struct pinned e;
	if (p == NULL || !take((uintptr_t)p, false, &e))
		return CUDA_ERROR_INVALID_VALUE;
	/* Like cuMemFree: queued copies may still use the buffer. */
	ctx_synchronize(ctx);
	munmap(p, e.size);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
	cuMemFreeHost_params prm = {p};
	API_CALL(cuMemFreeHost, &prm, host_free(p));
}

static CUresult host_register(void *p, size_t bytes, unsigned flags)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (p == NULL || bytes == 0 || dev_addr((uintptr_t)p) ||
	    (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
	                         CU_MEMHOSTREGISTER_READ_ONLY)))
		return CUDA_ERROR_INVALID_VALUE;
	return add((uintptr_t)p, bytes, flags, true);
}

EXPORT CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
	cuMemHostRegister_v2_params prm = {p, bytesize, Flags};
	API_CALL(cuMemHostRegister_v2, &prm, host_register(p, bytesize, Flags));
}

static CUresult host_unregister(void *p)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	struct pinned e;
	if (p == NULL || !take((uintptr_t)p, true, &e))
		return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	ctx_synchronize(ctx);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemHostUnregister(void *p)
{
	cuMemHostUnregister_params prm = {p};
	API_CALL(cuMemHostUnregister, &prm, host_unregister(p));
}

static CUresult device_pointer(CUdeviceptr *out, void *p, unsigned flags)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL || flags != 0 || !pinned_range(p, 1))
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
                                                     unsigned int Flags)
{
	cuMemHostGetDevicePointer_v2_params prm = {pdptr, p, Flags};
	API_CALL(cuMemHostGetDevicePointer_v2, &prm, device_pointer(pdptr, p, Flags));
}

static CUresult host_flags(unsigned *flags, void *p)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (flags == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	struct pinned *e = containing((uintptr_t)p);
	if (e)
		*flags = e->flags;
	pthread_mutex_unlock(&lock);
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	cuMemHostGetFlags_params prm = {pFlags, p};
	API_CALL(cuMemHostGetFlags, &prm, host_flags(pFlags, p));
}
