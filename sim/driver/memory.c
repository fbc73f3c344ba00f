/*
 * memory.c — cuMemAlloc/cuMemFree and their stream-ordered forms.
 *
 * Each allocation gets its own page-aligned range of the device address
 * space, read-write while live and PROT_NONE (pages dropped) once freed.
 * Physical use is the size rounded up to 512 bytes, the driver's
 * allocation unit.  cuMemAllocAsync charges memory at once but the range
 * only becomes accessible when the stream reaches the allocation, and
 * cuMemFreeAsync makes it inaccessible when the stream reaches the free:
 * touching it outside that window faults, as it may on a GPU.
 */
#include "driver.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct alloc {
	uintptr_t base;
	size_t size, span; /* requested bytes; mapped bytes (whole pages) */
	uint64_t charged;
	bool mapped;   /* accessible: cuMemAlloc, or its stream reached it */
	bool pooled;   /* from cuMemAllocAsync: counted in the pool */
	bool freeing;  /* a free was requested: no further use is valid */
	bool graph_va; /* graph memory: the range stays reserved once freed */
	uint64_t id;   /* the stream ops of this allocation name it by this */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *allocs; /* sorted by base */
static size_t nallocs, cap;

static size_t find_index(uintptr_t p) /* last allocation with base <= p */
{
	size_t lo = 0, hi = nallocs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (allocs[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo; /* index + 1; 0 = none */
}

/* Graph memory can be allocated again at its address while the last free
 * there has not reached its stream: two entries share a base then, and
 * each lookup says which it wants. */
static struct alloc *pick(uintptr_t p, bool freeing)
{
	size_t i = find_index(p);
	if (i == 0)
		return NULL;
	struct alloc *a = &allocs[i - 1];
	for (size_t j = i; j > 0 && allocs[j - 1].base == a->base; j--)
		if (allocs[j - 1].freeing == freeing)
			return p < a->base + allocs[j - 1].size ? &allocs[j - 1] : NULL;
	return p < a->base + a->size ? a : NULL;
}

static struct alloc *containing(uintptr_t p)
{
	return pick(p, false);
}

static struct alloc *exact(uintptr_t p)
{
	struct alloc *a = containing(p);
	return a && a->base == p ? a : NULL;
}

/* The allocation at base p with this id (a stream op's own); id 0: the one
 * being freed there. */
static struct alloc *by_id(uintptr_t p, uint64_t id)
{
	if (id == 0) {
		struct alloc *a = pick(p, true);
		return a && a->base == p ? a : NULL;
	}
	for (size_t j = find_index(p); j > 0 && allocs[j - 1].base == p; j--)
		if (allocs[j - 1].id == id)
			return &allocs[j - 1];
	return NULL;
}

bool alloc_range_ok(uintptr_t p, size_t n)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = containing(p);
	bool ok = a && !a->freeing && n <= a->base + a->size - p;
	pthread_mutex_unlock(&lock);
	return ok;
}

bool mem_range_ok(uintptr_t p, size_t n, bool write)
{
	if (!dev_addr(p))
		return false;
	return alloc_range_ok(p, n) || vmm_range_ok(p, n, write) || gmem_range_ok(p, n);
}

static void map_rw(uintptr_t base, size_t span, size_t size)
{
	if (mmap((void *)base, span, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
		abort();
	fresh_fill((void *)base, size);
}

/* fixed: a range graphmem.c reserved (graph memory), else 0. */
static CUresult do_alloc(CUdeviceptr *dptr, size_t size, bool live, uintptr_t fixed,
                         uint64_t *id_out)
{
	static uint64_t next_id;
	if (dptr == NULL || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t charged = ((uint64_t)size + 511) & ~(uint64_t)511;
	CUresult r = phys_charge(charged);
	if (r != CUDA_SUCCESS)
		return r;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (size + page - 1) & ~(page - 1);
	/* Large allocations are aligned like the real allocator's 2 MiB
	 * pages, small ones to a page. */
	size_t align = span >= (2u << 20) ? (2u << 20) : page;
	uintptr_t base = fixed ? fixed : va_take(span, align, 0, R_ALLOC);
	if (base == 0) {
		phys_release(charged);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (live)
		map_rw(base, span, size);
	pthread_mutex_lock(&lock);
	if (nallocs == cap) {
		size_t nc = cap ? cap * 2 : 256;
		struct alloc *na = realloc(allocs, nc * sizeof(*na));
		if (na == NULL) {
			pthread_mutex_unlock(&lock);
			va_seal(base, span);
			if (!fixed)
				va_give(base);
			phys_release(charged);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		allocs = na;
		cap = nc;
	}
	size_t i = find_index(base);
	memmove(&allocs[i + 1], &allocs[i], (nallocs - i) * sizeof(*allocs));
	allocs[i] = (struct alloc){.base = base,
	                           .size = size,
	                           .span = span,
	                           .charged = charged,
	                           .mapped = live,
	                           .pooled = !live && !fixed,
	                           .graph_va = fixed != 0,
	                           .id = ++next_id};
	if (id_out)
		*id_out = allocs[i].id;
	nallocs++;
	pthread_mutex_unlock(&lock);
	if (!live && !fixed)
		pool_account((int64_t)charged);
	*dptr = (CUdeviceptr)base;
	return CUDA_SUCCESS;
}

CUresult alloc_at(uintptr_t base, size_t size, uint64_t *id)
{
	CUdeviceptr p;
	return do_alloc(&p, size, false, base, id);
}

bool alloc_live_at(uintptr_t base)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = exact(base);
	bool live = a && !a->freeing;
	pthread_mutex_unlock(&lock);
	return live;
}

bool alloc_disown_range(uintptr_t base)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = exact(base);
	if (a)
		a->graph_va = false;
	pthread_mutex_unlock(&lock);
	return a != NULL;
}

void alloc_make_live(uintptr_t p, uint64_t id)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = by_id(p, id);
	/* Even when the host already asked to free it: the free comes later
	 * in stream order. */
	if (a && !a->mapped) {
		a->mapped = true;
		map_rw(a->base, a->span, a->size);
	}
	pthread_mutex_unlock(&lock);
}

/* Removes the allocation at p (the one being freed, when another lives
 * there already); its range faults from now on. */
static void release(uintptr_t p, uint64_t id)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = by_id(p, id);
	if (a == NULL) {
		pthread_mutex_unlock(&lock);
		return;
	}
	struct alloc copy = *a;
	size_t i = (size_t)(a - allocs);
	memmove(&allocs[i], &allocs[i + 1], (nallocs - i - 1) * sizeof(*allocs));
	nallocs--;
	pthread_mutex_unlock(&lock);
	va_seal(copy.base, copy.span);
	if (!copy.graph_va)
		va_give(copy.base);
	if (copy.charged) {
		if (copy.pooled)
			pool_account(-(int64_t)copy.charged);
		phys_release(copy.charged);
	}
}

void alloc_finish_free(uintptr_t p, uint64_t id)
{
	release(p, id);
}

void alloc_free_all(void)
{
	for (;;) {
		pthread_mutex_lock(&lock);
		uintptr_t p = nallocs ? allocs[nallocs - 1].base : 0;
		pthread_mutex_unlock(&lock);
		if (p == 0)
			return;
		release(p, 0);
	}
}

static CUresult mem_alloc(CUdeviceptr *dptr, size_t size)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r == CUDA_SUCCESS)
		r = capture_forbids(ctx, NULL); /* "unsafe" during a global capture */
	return r != CUDA_SUCCESS ? r : do_alloc(dptr, size, true, 0, NULL);
}

EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	cuMemAlloc_v2_params p = {dptr, bytesize};
	API_CALL(cuMemAlloc_v2, &p, mem_alloc(dptr, bytesize));
}

/* Marks p as being freed; false when it is not a live allocation base.
 * Its capacity is given back at once, in the host's call order, even
 * though a stream-ordered free makes the range inaccessible only when its
 * stream gets there: a memory pool reuses memory freed earlier in stream
 * order right away, and the physical peak must not depend on how far the
 * workers happen to be behind. */
uint64_t alloc_begin_free(uintptr_t p)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = exact(p);
	uint64_t ok = a && !a->freeing ? a->id : 0;
	if (ok) {
		a->freeing = true;
		if (a->pooled)
			pool_account(-(int64_t)a->charged);
		phys_release(a->charged);
		a->charged = 0;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

static CUresult mem_free(CUdeviceptr p)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (p == 0)
		return CUDA_SUCCESS;
	r = capture_forbids(ctx, NULL);
	if (r != CUDA_SUCCESS)
		return r;
	uint64_t id = alloc_begin_free((uintptr_t)p);
	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	/* cuMemFree waits for work that may still use the memory. */
	ctx_synchronize(ctx);
	release((uintptr_t)p, id);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	cuMemFree_v2_params p = {dptr};
	API_CALL(cuMemFree_v2, &p, mem_free(dptr));
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUstream hs, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(hs, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	/* In a capture: a graph memory node (graphmem.c). */
	if (capture_id_of(s))
		return gmem_capture_alloc(s, size, dptr);
	struct sim_op *op = op_new(OP_ALLOC);
	if (capture_take(s, op, &r))
		return r;
	r = do_alloc(dptr, size, false, 0, &op->u.mem.id);
	if (r != CUDA_SUCCESS) {
		op_free(op);
		return r;
	}
	op->u.mem.addr = (uintptr_t)*dptr;
	stream_enqueue(s, op, false);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	cuMemAllocAsync_params p = {dptr, bytesize, hStream};
	API_CALL(cuMemAllocAsync, &p, alloc_async(dptr, bytesize, hStream, false));
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	cuMemAllocAsync_ptsz_params p = {dptr, bytesize, hStream};
	API_CALL(cuMemAllocAsync_ptsz, &p, alloc_async(dptr, bytesize, hStream, true));
}

static CUresult alloc_from_pool(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream hs,
                                bool per_thread)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool_is_default(pool))
		return CUDA_ERROR_INVALID_VALUE;
	return alloc_async(dptr, size, hs, per_thread);
}

EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
                                                CUmemoryPool pool, CUstream hStream)
{
	cuMemAllocFromPoolAsync_params p = {dptr, bytesize, pool, hStream};
	API_CALL(cuMemAllocFromPoolAsync, &p,
	         alloc_from_pool(dptr, bytesize, pool, hStream, false));
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream);
EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                     CUmemoryPool pool, CUstream hStream)
{
	cuMemAllocFromPoolAsync_ptsz_params p = {dptr, bytesize, pool, hStream};
	API_CALL(cuMemAllocFromPoolAsync_ptsz, &p,
	         alloc_from_pool(dptr, bytesize, pool, hStream, true));
}

static CUresult free_async(CUdeviceptr dptr, CUstream hs, bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(hs, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (capture_id_of(s))
		return gmem_capture_free(s, (uintptr_t)dptr);
	struct sim_op *op = op_new(OP_FREE);
	if (capture_take(s, op, &r))
		return r;
	op->u.mem.id = alloc_begin_free((uintptr_t)dptr);
	if (!op->u.mem.id) {
		op_free(op);
		return CUDA_ERROR_INVALID_VALUE;
	}
	op->u.mem.addr = (uintptr_t)dptr;
	stream_enqueue(s, op, false);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	cuMemFreeAsync_params p = {dptr, hStream};
	API_CALL(cuMemFreeAsync, &p, free_async(dptr, hStream, false));
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	cuMemFreeAsync_ptsz_params p = {dptr, hStream};
	API_CALL(cuMemFreeAsync_ptsz, &p, free_async(dptr, hStream, true));
}

static CUresult mem_info(size_t *free_bytes, size_t *total)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (free_bytes == NULL || total == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t used = phys_in_use();
	*total = sim_cfg.capacity;
	*free_bytes = used < sim_cfg.capacity ? sim_cfg.capacity - used : 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total)
{
	cuMemGetInfo_v2_params p = {free, total};
	API_CALL(cuMemGetInfo_v2, &p, mem_info(free, total));
}

bool alloc_range_of(uintptr_t p, uintptr_t *base, size_t *size)
{
	pthread_mutex_lock(&lock);
	struct alloc *a = containing(p);
	bool ok = a && !a->freeing;
	if (ok) {
		*base = a->base;
		*size = a->size;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

static CUresult address_range(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	uintptr_t base = 0;
	size_t size = 0;
	pthread_mutex_lock(&lock);
	struct alloc *a = containing((uintptr_t)dptr);
	if (a && !a->freeing) {
		base = a->base;
		size = a->size;
	}
	pthread_mutex_unlock(&lock);
	if (base == 0 && !vmm_range_of((uintptr_t)dptr, &base, &size))
		return CUDA_ERROR_NOT_FOUND;
	if (pbase)
		*pbase = (CUdeviceptr)base;
	if (psize)
		*psize = size;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	cuMemGetAddressRange_v2_params p = {pbase, psize, dptr};
	API_CALL(cuMemGetAddressRange_v2, &p, address_range(pbase, psize, dptr));
}
