/*
 * program.c — the program's own virtual memory management (alloc.h,
 * "the program's own VMM"): cuMemAddressReserve, cuMemCreate, cuMemMap
 * and the rest, called by the program itself (PyTorch's expandable
 * segments).
 *
 * A handle libremat backs ("ours") is a number only libremat knows; its
 * physical memory is chunks of the device's granularity from the pool, so
 * the budget counts them and run mode can take any one of them away.  A
 * range the program reserves is carved from the allocator's large region,
 * so its pages have the allocator's own books (remat_device.page...): an
 * exclusive mapping of one of our handles there keeps its chunks in those
 * pages ("owns" them), and an eviction or a rebuild changes them there
 * like it does for the allocator's allocations.  Such mappings, once the
 * program made them readable and writable by their device alone, join
 * into extents (maximal contiguous runs): what the profiler sees as
 * long-lived allocations.  The chunk at a page may change while it is an
 * extent; a handle takes the chunks back from its pages when it is
 * unmapped.  Everything libremat does not take (exportable handles,
 * other memory kinds or locations, a range it cannot carve) goes to the
 * driver as it is; a handle mapped twice, or given any other access, is
 * kept whole (never part of an extent).
 */
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "../core/search.h"
#include "alloc.h"
#include "internal.h"

#define HANDLE_TAG (1ull << 63) /* no pointer the driver hands out looks like this */

enum { ACCESS_NONE, ACCESS_OWN, ACCESS_OTHER };

struct prog_handle {
	uint64_t value; /* what the program holds */
	CUdevice dev;
	uint32_t refs; /* cuMemCreate, cuMemRetainAllocationHandle; 0: invalid to the program */
	uint32_t maps; /* live mappings */
	int whole;     /* mapped twice at once: never evicted */
	size_t nchunks;
	/* Chunk k of its memory, 0 when it has none (its content was dropped
	 * by an eviction).  Not up to date while a mapping owns the pages. */
	CUmemGenericAllocationHandle *chunk;
	CUmemAllocationProp prop; /* as created, for the program's queries */
};

struct prog_res {
	uint64_t base, size;
	CUdevice dev;             /* whose large region it was carved from */
	struct remat_extent *ext; /* reported, by address */
	size_t next, capext;
	int dirty; /* its extents need working out again */
};

struct prog_map {
	uint64_t va, size;
	struct prog_handle *h; /* NULL: a driver handle mapped in a range of ours */
	struct prog_res *res;  /* the carved range it lies in, NULL: none */
	int access;
	int owns; /* exclusive, in a range of its handle's device: chunks in the pages */
};

/* The program's own VMM as libremat sees it (under the allocator's lock). */
static struct alloc_prog {
	struct prog_handle **handles; /* by value (values only grow) */
	size_t nhandles, caphandles;
	uint64_t serial;
	struct prog_res **resv; /* by base */
	size_t nres, capres;
	struct prog_map *maps; /* by va, never overlapping */
	size_t nmaps, capmaps;
	struct remat_prog_change *changes; /* not reported yet */
	size_t nchanges, capchanges;
} prog;
int remat_prog_live;

static void set_live(void)
{
	__atomic_store_n(&remat_prog_live, prog.nhandles || prog.nres, __ATOMIC_RELEASE);
}

/* Keys of the sorted arrays, for search.h. */
static uint64_t handle_value(const void *v, size_t i)
{
	return ((struct prog_handle *const *)v)[i]->value;
}
static uint64_t map_end(const void *v, size_t i)
{
	return ((const struct prog_map *)v)[i].va + ((const struct prog_map *)v)[i].size;
}
static uint64_t res_base(const void *v, size_t i)
{
	return ((struct prog_res *const *)v)[i]->base;
}
static uint64_t res_end(const void *v, size_t i)
{
	return ((struct prog_res *const *)v)[i]->base + ((struct prog_res *const *)v)[i]->size;
}

static struct prog_handle *handle_find(uint64_t value)
{
	size_t i = remat_search_key(prog.handles, prog.nhandles, handle_value, value);
	return i < prog.nhandles ? prog.handles[i] : NULL;
}

/* Index of the first mapping ending after va. */
static size_t map_after(uint64_t va)
{
	return remat_range_from(prog.maps, prog.nmaps, map_end, va);
}

/* The carved range holding va, or NULL. */
static struct prog_res *res_of(uint64_t va)
{
	size_t i = remat_range_holding(prog.resv, prog.nres, res_base, res_end, va);
	return i < prog.nres ? prog.resv[i] : NULL;
}

static struct remat_device *dev_of(CUdevice dev)
{
	return &alloc_state.devs[dev];
}

static size_t page_of(const struct remat_device *d, uint64_t va)
{
	return (va - d->large_base) / d->gran;
}

/* ---- extents ------------------------------------------------------------- */

static void change(uint64_t addr, uint64_t size, int added)
{
	if (!REMAT_GROW(prog.changes, prog.nchanges, prog.capchanges))
		prog.changes[prog.nchanges++] = (struct remat_prog_change){addr, size, added};
	/* Out of host memory: the profiler misses it and its profile holds
	 * less; nothing outside an extent is ever evicted. */
}

static int has_extent(const struct remat_extent *v, size_t n, struct remat_extent e)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].addr == e.addr && v[i].size == e.size)
			return 1;
	return 0;
}

/* The extents of r again, and what changed since it was last reported. */
static void extents(struct prog_res *r)
{
	struct remat_extent *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = map_after(r->base); i < prog.nmaps && prog.maps[i].va < r->base + r->size;
	     i++) {
		const struct prog_map *m = &prog.maps[i];
		if (!m->owns || m->access != ACCESS_OWN)
			continue;
		if (n && v[n - 1].addr + v[n - 1].size == m->va) {
			v[n - 1].size += m->size;
			continue;
		}
		if (REMAT_GROW(v, n, cap))
			break;
		v[n++] = (struct remat_extent){m->va, m->size};
	}
	for (size_t i = 0; i < r->next; i++)
		if (!has_extent(v, n, r->ext[i]))
			change(r->ext[i].addr, r->ext[i].size, 0);
	for (size_t i = 0; i < n; i++)
		if (!has_extent(r->ext, r->next, v[i]))
			change(v[i].addr, v[i].size, 1);
	free(r->ext);
	r->ext = v;
	r->next = n;
	r->capext = cap;
}

/* The ranges of mappings [first, last) need their extents again. */
static void mark(size_t first, size_t last)
{
	for (size_t i = first; i < last; i++)
		if (prog.maps[i].res)
			prog.maps[i].res->dirty = 1;
}

static void extents_marked(void)
{
	for (size_t i = 0; i < prog.nres; i++)
		if (prog.resv[i]->dirty) {
			prog.resv[i]->dirty = 0;
			extents(prog.resv[i]);
		}
}

size_t remat_prog_changes(struct remat_prog_change *out, size_t cap)
{
	pthread_mutex_lock(&alloc_state.lock);
	size_t n = prog.nchanges < cap ? prog.nchanges : cap;
	if (n) {
		memcpy(out, prog.changes, n * sizeof(*out));
		memmove(prog.changes, prog.changes + n,
		        (prog.nchanges - n) * sizeof(*prog.changes));
		prog.nchanges -= n;
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return n;
}

/* ---- chunks --------------------------------------------------------------- */

/* A chunk for a page whose content is gone, mapped there. */
static CUresult refill(struct remat_device *d, size_t pg)
{
	CUmemGenericAllocationHandle c;
	CUresult r = remat_pool_get(d, &c);
	if (r == CUDA_SUCCESS && (r = remat_map_chunk(d, d->large_base + pg * d->gran, c)))
		remat_pool_put(d, c);
	if (r == CUDA_SUCCESS)
		d->page[pg] = c;
	return r;
}

/* Page pg of an owning mapping, settled: an unmap still waiting for the
 * streams is waited for and cancelled (the mapping keeps its chunk). */
static void settle(struct remat_device *d, size_t pg)
{
	if (d->page_zombie[pg] >= 0)
		remat_zombie_take(d, pg, NULL, 0);
}

/* Mapping m stops owning its pages: its handle's chunks are the pages'
 * again (fresh ones where an eviction left none, so that every mapping
 * of the handle shows the same memory). */
static CUresult disown(struct prog_map *m)
{
	struct remat_device *d = dev_of(m->h->dev);
	size_t pg0 = page_of(d, m->va);
	for (size_t k = 0; k < m->size / d->gran; k++) {
		settle(d, pg0 + k);
		CUresult r = d->page[pg0 + k] ? CUDA_SUCCESS : refill(d, pg0 + k);
		if (r != CUDA_SUCCESS)
			return r;
		m->h->chunk[k] = d->page[pg0 + k];
	}
	m->owns = 0;
	return CUDA_SUCCESS;
}

static void handle_destroy(struct prog_handle *h)
{
	struct remat_device *d = dev_of(h->dev);
	for (size_t k = 0; k < h->nchunks; k++)
		if (h->chunk[k])
			remat_pool_put(d, h->chunk[k]);
	remat_pool_trim(d);
	for (size_t i = 0; i < prog.nhandles; i++)
		if (prog.handles[i] == h) {
			memmove(prog.handles + i, prog.handles + i + 1,
			        (--prog.nhandles - i) * sizeof(*prog.handles));
			break;
		}
	free(h->chunk);
	free(h);
	set_live();
}

/* ---- reservations --------------------------------------------------------- */

CUresult remat_prog_reserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                            unsigned long long flags)
{
	CUdevice dev;
	if (!p || !size || flags || (align & (align - 1)) ||
	    remat_drv.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = remat_device_ready(dev);
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	struct prog_res *res = NULL;
	if (!d || size % d->gran || REMAT_GROW(prog.resv, prog.nres, prog.capres) ||
	    !(res = calloc(1, sizeof(*res))))
		goto out;
	uint64_t a = align > d->gran ? align : d->gran, va = 0;
	if (addr && addr % a == 0 && !remat_range_alloc_at(&d->large_va, addr, size))
		va = addr;
	if (!va)
		va = remat_range_alloc(&d->large_va, size, a);
	if (!va) {
		static int told;
		if (!told++)
			remat_log(
			    REMAT_LOG_INFO,
			    "no room in libremat's address space for the program's reservation of "
			    "%zu bytes: it passes through, and what is mapped there is never "
			    "evicted",
			    size);
		goto out;
	}
	/* Pages still holding a chunk for a free the streams have not reached
	 * (alloc/pending.c) are let go first: the program maps its own. */
	for (size_t pg = page_of(d, va); pg < page_of(d, va + size); pg++)
		if (d->page[pg]) {
			remat_page_take(d, pg, NULL, 0);
			remat_large_unmap_page(d, pg);
		}
	*res = (struct prog_res){.base = va, .size = size, .dev = dev};
	size_t i = remat_search_from(prog.resv, prog.nres, res_base, va);
	memmove(prog.resv + i + 1, prog.resv + i, (prog.nres - i) * sizeof(*prog.resv));
	prog.resv[i] = res;
	prog.nres++;
	res = NULL;
	set_live();
	*p = va;
	r = CUDA_SUCCESS;
out:
	free(res);
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

CUresult remat_prog_address_free(CUdeviceptr p, size_t size)
{
	pthread_mutex_lock(&alloc_state.lock);
	struct prog_res *res = res_of(p);
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	if (res) {
		/* Only a whole range, and only once nothing is mapped in it. */
		size_t m = map_after(p);
		r = CUDA_ERROR_INVALID_VALUE;
		if (res->base == p && res->size == size &&
		    (m == prog.nmaps || prog.maps[m].va >= res->base + res->size)) {
			size_t i = 0;
			while (prog.resv[i] != res)
				i++;
			memmove(prog.resv + i, prog.resv + i + 1,
			        (prog.nres - i - 1) * sizeof(*prog.resv));
			prog.nres--;
			remat_range_free(&dev_of(res->dev)->large_va, res->base, res->size);
			free(res->ext);
			free(res);
			set_live();
			r = CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

/* ---- handles ---------------------------------------------------------------- */

/* What libremat backs: device memory of no special kind, not exportable. */
static int takes(const CUmemAllocationProp *prop)
{
	static const CUmemAllocationProp plain;
	return prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && !prop->requestedHandleTypes &&
	       !prop->win32HandleMetaData &&
	       !memcmp(&prop->allocFlags, &plain.allocFlags, sizeof(plain.allocFlags));
}

CUresult remat_prog_create(CUmemGenericAllocationHandle *out, size_t size,
                           const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (!out || !prop || !size || flags)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!takes(prop)) {
		remat_log(
		    REMAT_LOG_DEBUG,
		    "the program's cuMemCreate of %zu bytes passes through (exportable, or not "
		    "plain device memory): never evicted",
		    size);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	pthread_mutex_lock(&alloc_state.lock);
	struct remat_device *d = remat_device_ready(prop->location.id);
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	struct prog_handle *h = NULL;
	if (!d || size % d->gran)
		goto out;
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if (REMAT_GROW(prog.handles, prog.nhandles, prog.caphandles) ||
	    !(h = calloc(1, sizeof(*h))) || !(h->chunk = calloc(size / d->gran, sizeof(*h->chunk))))
		goto out;
	h->nchunks = size / d->gran;
	alloc_state.shortfall = 0;
	for (size_t k = 0; k < h->nchunks; k++)
		if ((r = remat_pool_get(d, &h->chunk[k])) != CUDA_SUCCESS) {
			if (r == CUDA_ERROR_OUT_OF_MEMORY && alloc_state.shortfall)
				remat_alloc_refused(d, size, size);
			while (k--)
				remat_pool_put(d, h->chunk[k]);
			remat_pool_trim(d);
			goto out;
		}
	remat_log(REMAT_LOG_DEBUG,
	          "the program's cuMemCreate of %zu bytes: %zu chunks of libremat's", size,
	          h->nchunks);
	h->value = HANDLE_TAG | ++prog.serial;
	h->dev = prop->location.id;
	h->refs = 1;
	h->prop = *prop;
	prog.handles[prog.nhandles++] = h;
	set_live();
	*out = h->value;
	h = NULL;
	r = CUDA_SUCCESS;
out:
	if (h)
		free(h->chunk);
	free(h);
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

CUresult remat_prog_release(CUmemGenericAllocationHandle v)
{
	if (!(v & HANDLE_TAG))
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&alloc_state.lock);
	struct prog_handle *h = handle_find(v);
	CUresult r = h ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
	if (h && !h->refs)
		r = CUDA_ERROR_INVALID_VALUE; /* released already */
	else if (h && !--h->refs && !h->maps)
		handle_destroy(h); /* memory still mapped stays until its last unmap */
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

CUresult remat_prog_props(CUmemAllocationProp *prop, CUmemGenericAllocationHandle v)
{
	if (!(v & HANDLE_TAG))
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&alloc_state.lock);
	struct prog_handle *h = handle_find(v);
	CUresult r = !h                  ? CUDA_ERROR_NOT_SUPPORTED
	             : !h->refs || !prop ? CUDA_ERROR_INVALID_VALUE
	                                 : CUDA_SUCCESS;
	if (r == CUDA_SUCCESS)
		*prop = h->prop;
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

/* The handle's memory stays where it is: another reference is no alias
 * (mapping it a second time is, and makes it whole then). */
CUresult remat_prog_retain(CUmemGenericAllocationHandle *out, void *addr)
{
	uint64_t va = (uint64_t)(uintptr_t)addr;
	pthread_mutex_lock(&alloc_state.lock);
	size_t i = map_after(va);
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	if (i < prog.nmaps && prog.maps[i].va <= va && prog.maps[i].h) {
		r = out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
		if (out) {
			prog.maps[i].h->refs++;
			*out = prog.maps[i].h->value;
		}
	}
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

int remat_prog_mapped_handle(CUmemGenericAllocationHandle v)
{
	if (!(v & HANDLE_TAG))
		return 0;
	pthread_mutex_lock(&alloc_state.lock);
	struct prog_handle *h = handle_find(v);
	int mapped = h && h->maps;
	pthread_mutex_unlock(&alloc_state.lock);
	return mapped;
}

/* ---- mappings --------------------------------------------------------------- */

int remat_prog_touches(uint64_t va, uint64_t size)
{
	pthread_mutex_lock(&alloc_state.lock);
	int owns = 0;
	for (size_t i = map_after(va); !owns && i < prog.nmaps && prog.maps[i].va < va + size; i++)
		owns = prog.maps[i].owns;
	pthread_mutex_unlock(&alloc_state.lock);
	return owns;
}

/* Undoes the chunk maps [0, n) of a mapping being made at va. */
static void unmap_chunks(uint64_t va, size_t n, size_t gran)
{
	for (size_t k = n; k--;)
		remat_drv.cuMemUnmap(va + k * gran, gran);
}

static CUresult insert_map(struct prog_map m)
{
	if (REMAT_GROW(prog.maps, prog.nmaps, prog.capmaps))
		return CUDA_ERROR_OUT_OF_MEMORY;
	size_t i = map_after(m.va);
	memmove(prog.maps + i + 1, prog.maps + i, (prog.nmaps - i) * sizeof(*prog.maps));
	prog.maps[i] = m;
	prog.nmaps++;
	return CUDA_SUCCESS;
}

/* A driver handle mapped inside a range of ours: the driver does it; we
 * remember it, so that nothing else is mapped over it. */
static CUresult map_foreign(struct prog_res *res, uint64_t va, size_t size, size_t off,
                            CUmemGenericAllocationHandle v, unsigned long long flags)
{
	if (size > res->base + res->size - va)
		return CUDA_ERROR_INVALID_VALUE;
	if (REMAT_GROW(prog.maps, prog.nmaps, prog.capmaps))
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult r = remat_drv.cuMemMap(va, size, off, v, flags);
	if (r == CUDA_SUCCESS)
		insert_map((struct prog_map){.va = va, .size = size, .res = res});
	return r;
}

/* Handle h is mapped again while mapped: from now on its chunks are its
 * own and every mapping of it is whole. */
static CUresult make_whole(struct prog_handle *h)
{
	for (size_t i = 0; i < prog.nmaps; i++)
		if (prog.maps[i].h == h && prog.maps[i].owns) {
			CUresult r = disown(&prog.maps[i]);
			if (r != CUDA_SUCCESS)
				return r;
			extents(prog.maps[i].res);
		}
	h->whole = 1;
	return CUDA_SUCCESS;
}

CUresult remat_prog_map(CUdeviceptr va, size_t size, size_t off, CUmemGenericAllocationHandle v,
                        unsigned long long flags)
{
	pthread_mutex_lock(&alloc_state.lock);
	struct prog_handle *h = v & HANDLE_TAG ? handle_find(v) : NULL;
	struct prog_res *res = res_of(va);
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;
	if (!h) {
		if (res)
			r = map_foreign(res, va, size, off, v, flags);
		goto out;
	}
	struct remat_device *d = dev_of(h->dev);
	size_t g = d->gran, n = size / g, i = map_after(va);
	/* As the driver checks: offset 0, granularity, within one
	 * reservation, over no other mapping. */
	r = CUDA_ERROR_INVALID_VALUE;
	if (!h->refs || flags || off || !size || size > h->nchunks * g || va % g || size % g ||
	    (res && size > res->base + res->size - va) ||
	    (i < prog.nmaps && prog.maps[i].va < va + size))
		goto out;
	if (h->maps && !h->whole && (r = make_whole(h)) != CUDA_SUCCESS)
		goto out;
	struct prog_map m = {.va = va, .size = size, .h = h, .res = res};
	m.owns = res && res->dev == h->dev && !h->whole;
	size_t k;
	for (k = 0; k < n; k++) {
		r = h->chunk[k] ? CUDA_SUCCESS : remat_pool_get(d, &h->chunk[k]);
		if (r == CUDA_SUCCESS)
			r = remat_drv.cuMemMap(va + k * g, g, 0, h->chunk[k], 0);
		if (r != CUDA_SUCCESS)
			break;
	}
	if (r == CUDA_SUCCESS)
		r = insert_map(m);
	if (r != CUDA_SUCCESS) {
		unmap_chunks(va, k, g);
		goto out;
	}
	if (res && res->dev == h->dev)
		for (k = 0; k < n; k++) {
			size_t pg = page_of(d, va + k * g);
			d->page[pg] = h->chunk[k];
			if (m.owns)
				h->chunk[k] = 0; /* the page's now */
		}
	h->maps++;
out:
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

/* The mappings [*first, *last) that exactly tile [va, va+size): 0, or -1
 * when that range cuts one of them or holds gaps. */
static int tiling(uint64_t va, uint64_t size, size_t *first, size_t *last)
{
	size_t i = map_after(va), j = i;
	uint64_t at = va;
	while (j < prog.nmaps && prog.maps[j].va == at && at < va + size)
		at += prog.maps[j++].size;
	*first = i;
	*last = j;
	return at == va + size && j > i ? 0 : -1;
}

/* The mappings [*first, *last) a call on [va, va+size) is for: NOT
 * SUPPORTED when none of ours is there (the driver's), INVALID_VALUE when
 * the range is not made of whole mappings, as the driver wants them. */
static CUresult whole_range(uint64_t va, uint64_t size, size_t *first, size_t *last)
{
	size_t i = map_after(va);
	if (!size || i == prog.nmaps || prog.maps[i].va >= va + size)
		return CUDA_ERROR_NOT_SUPPORTED;
	return tiling(va, size, first, last) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static CUresult unmap_one(struct prog_map *m)
{
	if (!m->h)
		return remat_drv.cuMemUnmap(m->va, m->size);
	struct prog_handle *h = m->h;
	struct remat_device *d = dev_of(h->dev);
	size_t g = d->gran;
	int paged = m->res && m->res->dev == h->dev;
	for (size_t k = 0; k < m->size / g; k++) {
		uint64_t va = m->va + k * g;
		size_t pg = paged ? page_of(d, va) : 0;
		if (paged)
			settle(d, pg);
		/* A page an eviction left empty has nothing mapped: the handle
		 * gets no chunk for it (its content was dead). */
		CUmemGenericAllocationHandle c = paged ? d->page[pg] : h->chunk[k];
		if (c) {
			CUresult r = remat_drv.cuMemUnmap(va, g);
			if (r != CUDA_SUCCESS)
				return r;
		}
		if (m->owns)
			h->chunk[k] = c;
		if (paged)
			d->page[pg] = 0;
	}
	return CUDA_SUCCESS;
}

CUresult remat_prog_unmap(CUdeviceptr va, size_t size)
{
	pthread_mutex_lock(&alloc_state.lock);
	size_t first, last;
	CUresult r = whole_range(va, size, &first, &last);
	if (r != CUDA_SUCCESS)
		goto out;
	for (size_t i = first; i < last; i++)
		if ((r = unmap_one(&prog.maps[i])) != CUDA_SUCCESS) {
			last = i; /* what is done is forgotten, the rest stays */
			break;
		}
	for (size_t i = first; i < last; i++) {
		struct prog_handle *h = prog.maps[i].h;
		if (h && !--h->maps && !h->refs)
			handle_destroy(h);
	}
	mark(first, last);
	memmove(prog.maps + first, prog.maps + last, (prog.nmaps - last) * sizeof(*prog.maps));
	prog.nmaps -= last - first;
	extents_marked();
out:
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

/* Readable and writable by the handle's own device, and nothing else:
 * what a rebuild maps again (remat_device.access). */
static int access_of(const struct prog_handle *h, const CUmemAccessDesc *desc, size_t count)
{
	if (count == 1 && desc[0].location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	    desc[0].location.id == h->dev)
		return desc[0].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? ACCESS_OWN
		       : desc[0].flags == CU_MEM_ACCESS_FLAGS_PROT_NONE    ? ACCESS_NONE
		                                                           : ACCESS_OTHER;
	return ACCESS_OTHER;
}

CUresult remat_prog_set_access(CUdeviceptr va, size_t size, const CUmemAccessDesc *desc,
                               size_t count)
{
	pthread_mutex_lock(&alloc_state.lock);
	size_t first, last;
	CUresult r = whole_range(va, size, &first, &last);
	if (r == CUDA_SUCCESS && (!desc || !count))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		goto out;
	/* Pages an eviction left empty get a chunk again: the driver changes
	 * the access of mapped memory only. */
	for (size_t i = first; i < last; i++) {
		struct prog_map *m = &prog.maps[i];
		struct remat_device *d = m->owns ? dev_of(m->h->dev) : NULL;
		for (size_t k = 0; d && k < m->size / d->gran; k++) {
			size_t pg = page_of(d, m->va + k * d->gran);
			settle(d, pg);
			if (!d->page[pg] && (r = refill(d, pg)) != CUDA_SUCCESS)
				goto out;
		}
	}
	if ((r = remat_drv.cuMemSetAccess(va, size, desc, count)) != CUDA_SUCCESS)
		goto out;
	for (size_t i = first; i < last; i++)
		if (prog.maps[i].h)
			prog.maps[i].access = access_of(prog.maps[i].h, desc, count);
	mark(first, last);
	extents_marked();
out:
	pthread_mutex_unlock(&alloc_state.lock);
	return r;
}

/* ---- accounting ------------------------------------------------------------- */

/* Physical bytes of our handles outside every extent (with the lock). */
uint64_t remat_prog_fixed(void)
{
	uint64_t bytes = 0;
	for (size_t i = 0; i < prog.nhandles; i++)
		for (size_t k = 0; k < prog.handles[i]->nchunks; k++)
			bytes += prog.handles[i]->chunk[k] ? dev_of(prog.handles[i]->dev)->gran : 0;
	for (size_t i = 0; i < prog.nmaps; i++) {
		const struct prog_map *m = &prog.maps[i];
		if (!m->owns || m->access == ACCESS_OWN)
			continue;
		struct remat_device *d = dev_of(m->h->dev);
		for (size_t k = 0; k < m->size / d->gran; k++)
			bytes += d->page[page_of(d, m->va + k * d->gran)] ? d->gran : 0;
	}
	return bytes;
}
