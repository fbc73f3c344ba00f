/*
 * trainer_alloc.c — where the trainers' tensors live (--alloc), the three
 * ways frameworks keep them:
 *
 *   async    every tensor its own cudaMallocAsync allocation, freed with
 *            cudaFreeAsync (PyTorch with backend:cudaMallocAsync);
 *            parameters and other persistent tensors cudaMalloc.
 *   caching  blocks of cudaMalloc segments that the program keeps and
 *            reuses (PyTorch's native caching allocator; trainer_pool.c).
 *   vmm      blocks of ranges the program grows with cuMemCreate/cuMemMap
 *            (PyTorch's expandable segments; trainer_vmm.c).
 *
 * In the pool modes persistent tensors come from the pool too, on the home
 * stream, as PyTorch allocates parameters from the same allocator.  The
 * numerics never depend on the mode: every tensor is written before it is
 * read, so the output is the same bytes in all three.
 */
#include "trainer.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const mode_names[] = {"async", "caching", "vmm"};

static struct {
	enum alloc_mode mode;
	int stats;
	cudaStream_t home;
	/* async mode's counters (the pool keeps its own) */
	atomic_ullong tensors, device_allocs;
} alloc;

void alloc_setup(enum alloc_mode mode, int stats, cudaStream_t home)
{
	alloc.mode = mode;
	alloc.stats = stats;
	alloc.home = home;
	if (mode != ALLOC_ASYNC)
		pool_init(mode);
}

static _Noreturn void oom(size_t bytes, const char *what, const char *error)
{
	fprintf(stderr, "%s: out of device memory allocating %zu bytes for %s (%s)\n", trainer_prog,
	        bytes, what, error);
	exit(2);
}

static void *from_pool(size_t bytes, const char *what, cudaStream_t stream)
{
	const char *error = "unknown";
	void *p = pool_alloc(bytes, stream, &error);
	if (p == NULL)
		oom(bytes, what, error);
	return p;
}

float *dev_alloc_async(size_t bytes, const char *what, cudaStream_t stream)
{
	if (alloc.mode != ALLOC_ASYNC)
		return from_pool(bytes, what, stream);
	void *p = NULL;
	cudaError_t e = cudaMallocAsync(&p, bytes, stream);
	if (e == cudaErrorMemoryAllocation)
		oom(bytes, what, cudaGetErrorName(e));
	rt_check(e, "cudaMallocAsync");
	alloc.tensors++;
	alloc.device_allocs++;
	return p;
}

void dev_free_async(void *p, cudaStream_t stream)
{
	if (alloc.mode != ALLOC_ASYNC)
		pool_free(p, stream);
	else
		RT(cudaFreeAsync(p, stream));
}

float *dev_alloc(size_t bytes, const char *what)
{
	if (alloc.mode != ALLOC_ASYNC)
		return from_pool(bytes, what, alloc.home);
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, bytes);
	if (e == cudaErrorMemoryAllocation)
		oom(bytes, what, cudaGetErrorName(e));
	rt_check(e, "cudaMalloc");
	alloc.tensors++;
	alloc.device_allocs++;
	return p;
}

void dev_record_stream(void *p, cudaStream_t stream)
{
	/* A cudaMalloc allocation is never reused while the program runs. */
	if (alloc.mode != ALLOC_ASYNC)
		pool_record_stream(p, stream);
}

/* One key=value line, as the simulator's report line, for tests to parse. */
static void print_stats(void)
{
	struct pool_stats s = {.tensors = alloc.tensors, .device_allocs = alloc.device_allocs};
	if (alloc.mode != ALLOC_ASYNC)
		pool_stats(&s);
	fprintf(stderr,
	        "%s: alloc=%s tensors=%llu reused=%llu device_allocs=%llu segments=%llu "
	        "segments_released=%llu chunks=%llu splits=%llu merges=%llu deferred_frees=%llu "
	        "reserved_bytes=%llu peak_allocated=%llu\n",
	        trainer_prog, mode_names[alloc.mode], s.tensors, s.reused, s.device_allocs,
	        s.segments, s.segments_released, s.chunks, s.splits, s.merges, s.deferred_frees,
	        s.reserved_bytes, s.peak_allocated);
}

void alloc_finish(void)
{
	if (alloc.stats)
		print_stats();
	if (alloc.mode != ALLOC_ASYNC)
		pool_release();
}
