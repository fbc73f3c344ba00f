/*
 * trainer_vmm.c — expandable segments for --alloc vmm, as PyTorch's
 * expandable_segments:True builds them (c10/cuda/CUDACachingAllocator.cpp,
 * ExpandableSegment): a virtual range as large as 9/8 of the device's
 * memory is reserved per stream and pool, and physical chunks are created
 * and mapped at its end as the pool needs them.  Chunks stay mapped until
 * the program ends.
 *
 * The driver's VMM functions are reached as PyTorch reaches them
 * (c10/cuda/driver_api.cpp): through the runtime's
 * cudaGetDriverEntryPointByVersion, not by linking their names, so a
 * preloaded library sees them only through cuGetProcAddress.
 */
#include "trainer.h"

#include <cudaTypedefs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define LARGE_CHUNK (20u << 20) /* PyTorch's large-pool page (kLargeBuffer) */
#define DRIVER_ABI  12000       /* the version of the entry points asked for */

static struct {
	PFN_cuMemGetAllocationGranularity_v10020 granularity;
	PFN_cuMemAddressReserve_v10020 reserve;
	PFN_cuMemAddressFree_v10020 address_free;
	PFN_cuMemCreate_v10020 create;
	PFN_cuMemRelease_v10020 release;
	PFN_cuMemMap_v10020 map;
	PFN_cuMemUnmap_v10020 unmap;
	PFN_cuMemSetAccess_v10020 set_access;
	CUmemAllocationProp prop;
	size_t granule;
	size_t reserve_bytes; /* of each range, before rounding to its chunk */
} drv;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void *entry_point(const char *name)
{
	void *fn = NULL;
	enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
	RT(cudaGetDriverEntryPointByVersion(name, &fn, DRIVER_ABI, cudaEnableDefault, &found));
	if (found != cudaDriverEntryPointSuccess || fn == NULL) {
		fprintf(stderr, "%s: the CUDA driver has no %s (needed by --alloc vmm)\n",
		        trainer_prog, name);
		exit(2);
	}
	return fn;
}

static void drv_load(void)
{
	drv.granularity = entry_point("cuMemGetAllocationGranularity");
	drv.reserve = entry_point("cuMemAddressReserve");
	drv.address_free = entry_point("cuMemAddressFree");
	drv.create = entry_point("cuMemCreate");
	drv.release = entry_point("cuMemRelease");
	drv.map = entry_point("cuMemMap");
	drv.unmap = entry_point("cuMemUnmap");
	drv.set_access = entry_point("cuMemSetAccess");
	int dev = 0;
	RT(cudaGetDevice(&dev));
	drv.prop =
	    (CUmemAllocationProp){.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                          .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev}};
	DRV(drv.granularity(&drv.granule, &drv.prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	size_t free_bytes = 0, total = 0;
	RT(cudaMemGetInfo(&free_bytes, &total));
	drv.reserve_bytes = total + total / 8;
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

void vmm_reserve(struct vmm_range *r, int small)
{
	pthread_once(&drv_once, drv_load);
	/* Small-pool chunks are one granule (PyTorch's 2 MiB page on a GPU,
	 * finer on a simulated device set up with a smaller granularity). */
	r->chunk = small ? drv.granule : round_up(LARGE_CHUNK, drv.granule);
	r->reserved = round_up(drv.reserve_bytes, r->chunk);
	r->mapped = 0;
	r->nchunks = 0;
	r->chunks = NULL;
	DRV(drv.reserve(&r->base, r->reserved, 0, 0, 0));
}

/* All or nothing, as PyTorch's ExpandableSegment::map: chunks made for a
 * growth that cannot complete are unmapped and released again. */
static void unmap_from(struct vmm_range *r, size_t keep)
{
	while (r->nchunks > keep) {
		r->nchunks--;
		r->mapped -= r->chunk;
		DRV(drv.unmap(r->base + r->mapped, r->chunk));
		DRV(drv.release(r->chunks[r->nchunks]));
	}
}

size_t vmm_grow(struct vmm_range *r, size_t need, const char **oom)
{
	size_t n = round_up(need, r->chunk) / r->chunk, had = r->nchunks;
	if (n > (r->reserved - r->mapped) / r->chunk) {
		*oom = "CUDA_ERROR_OUT_OF_MEMORY";
		return 0;
	}
	CUmemGenericAllocationHandle *grown =
	    realloc(r->chunks, (r->nchunks + n) * sizeof *r->chunks);
	if (grown == NULL) {
		fprintf(stderr, "%s: out of host memory\n", trainer_prog);
		exit(2);
	}
	r->chunks = grown;
	CUdeviceptr start = r->base + r->mapped;
	for (size_t i = 0; i < n; i++) {
		CUmemGenericAllocationHandle h;
		CUresult e = drv.create(&h, r->chunk, &drv.prop, 0);
		if (e == CUDA_ERROR_OUT_OF_MEMORY) {
			unmap_from(r, had);
			*oom = "CUDA_ERROR_OUT_OF_MEMORY";
			return 0;
		}
		DRV(e);
		DRV(drv.map(start + i * r->chunk, r->chunk, 0, h, 0));
		r->chunks[r->nchunks++] = h;
		r->mapped += r->chunk;
	}
	CUmemAccessDesc access = {.location = drv.prop.location,
	                          .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	DRV(drv.set_access(start, n * r->chunk, &access, 1));
	return n * r->chunk;
}

void vmm_release(struct vmm_range *r)
{
	unmap_from(r, 0);
	DRV(drv.address_free(r->base, r->reserved));
	free(r->chunks);
	r->chunks = NULL;
}
