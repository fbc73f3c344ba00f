/*
 * grid.c — runs one launch of a simcc kernel on the calling thread: the
 * CUDA built-ins as thread-locals, blocks one after another, and the
 * threads of a block either as a plain loop or, when the kernel calls
 * __syncthreads, as fibers that meet at each barrier.
 */
#include "simcuda_abi.h"
#include "fiber.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT __thread simcuda_dim3 simcuda_threadIdx, simcuda_blockIdx, simcuda_blockDim, simcuda_gridDim;

/* Per-thread state of the launch running on this thread. */
struct grid_run {
	const struct simcuda_kernel *k;
	void *const *args;
	struct fiber *pool;
	simcuda_dim3 *tid;   /* threadIdx of each fiber */
	unsigned char *done; /* fiber finished */
	unsigned current;    /* fiber now running */
	int fibered;         /* threads run as fibers */
	unsigned block_threads;
};

static __thread struct grid_run *run;
static __thread void *dyn_smem;

EXPORT void *simcuda_dynamic_smem(void)
{
	return dyn_smem;
}

/* Fiber `from` reached a barrier or its end: run the next live fiber of
 * this round directly (half the switches of going through the scheduler),
 * or go back to the scheduler when the round is over. */
static void pass_on(struct grid_run *r, unsigned from)
{
	for (unsigned j = from + 1; j < r->block_threads; j++)
		if (!r->done[j]) {
			r->current = j;
			simcuda_threadIdx = r->tid[j];
			fiber_switch(r->pool, from, j);
			return;
		}
	fiber_yield(r->pool, from);
}

EXPORT void simcuda_syncthreads(void)
{
	struct grid_run *r = run;
	if (r == NULL) {
		fprintf(stderr, "simcuda: __syncthreads called outside a kernel\n");
		abort();
	}
	if (!r->fibered) {
		/* One thread per block needs no barrier; more would run the
		 * barrier wrong, which simcc prevents by setting the flag. */
		if (r->block_threads == 1)
			return;
		fprintf(stderr,
		        "simcuda: kernel '%s' calls __syncthreads but its uses_syncthreads is 0\n",
		        r->k->name);
		abort();
	}
	pass_on(r, r->current);
}

static void fiber_main(void *arg)
{
	struct grid_run *r = arg;
	unsigned me = r->current;
	r->k->thread_fn(r->args);
	r->done[me] = 1;
	pass_on(r, me); /* never resumed */
}

static int config_ok(simcuda_dim3 grid, simcuda_dim3 block)
{
	if (block.x == 0 || block.y == 0 || block.z == 0 || grid.x == 0 || grid.y == 0 ||
	    grid.z == 0)
		return 0;
	if (block.x > 1024 || block.y > 1024 || block.z > 64 ||
	    (uint64_t)block.x * block.y * block.z > 1024)
		return 0;
	return grid.x <= 0x7fffffffu && grid.y <= 65535 && grid.z <= 65535;
}

/* Shared memory is uninitialized on a GPU; a fixed junk pattern makes a
 * kernel that relies on zeroes fail the same way every run. */
#define SMEM_JUNK 0xa5

static void run_block_loop(struct grid_run *r, simcuda_dim3 block)
{
	for (unsigned z = 0; z < block.z; z++)
		for (unsigned y = 0; y < block.y; y++)
			for (unsigned x = 0; x < block.x; x++) {
				simcuda_threadIdx = (simcuda_dim3){x, y, z};
				r->k->thread_fn(r->args);
			}
}

static void run_block_fibers(struct grid_run *r, simcuda_dim3 block)
{
	unsigned n = r->block_threads, i = 0;
	for (unsigned z = 0; z < block.z; z++)
		for (unsigned y = 0; y < block.y; y++)
			for (unsigned x = 0; x < block.x; x++, i++) {
				r->tid[i] = (simcuda_dim3){x, y, z};
				r->done[i] = 0;
				fiber_init(r->pool, i, fiber_main, r);
			}
	/* Each round runs every live fiber, in order, up to its next barrier
	 * (or its end), so no thread passes a barrier before all have reached
	 * it; the fibers hand over to each other (pass_on). */
	for (;;) {
		for (i = 0; i < n && r->done[i]; i++)
			;
		if (i == n)
			break;
		r->current = i;
		simcuda_threadIdx = r->tid[i];
		fiber_enter(r->pool, i);
	}
}

EXPORT int simcuda_run_grid(const struct simcuda_kernel *k, void *const *args, simcuda_dim3 grid,
                            simcuda_dim3 block, unsigned dynamic_smem_bytes)
{
	if (k == NULL || k->thread_fn == NULL || !config_ok(grid, block)) {
		errno = EINVAL;
		return -1;
	}
	struct grid_run r = {.k = k, .args = args};
	r.block_threads = block.x * block.y * block.z;
	r.fibered = k->uses_syncthreads && r.block_threads > 1;
	void *smem = NULL;
	if (dynamic_smem_bytes) {
		smem = aligned_alloc(128, (dynamic_smem_bytes + 127u) & ~127u);
		if (smem == NULL) {
			errno = ENOMEM;
			return -1;
		}
	}
	if (r.fibered) {
		r.pool = fiber_pool(r.block_threads);
		r.tid = calloc(r.block_threads, sizeof(*r.tid));
		r.done = calloc(r.block_threads, 1);
		if (r.pool == NULL || r.tid == NULL || r.done == NULL) {
			if (r.pool)
				fiber_pool_release(r.pool);
			free(r.tid);
			free(r.done);
			free(smem);
			errno = ENOMEM;
			return -1;
		}
	}
	struct grid_run *saved_run = run;
	void *saved_smem = dyn_smem;
	run = &r;
	dyn_smem = smem;
	simcuda_gridDim = grid;
	simcuda_blockDim = block;
	for (unsigned bz = 0; bz < grid.z; bz++)
		for (unsigned by = 0; by < grid.y; by++)
			for (unsigned bx = 0; bx < grid.x; bx++) {
				simcuda_blockIdx = (simcuda_dim3){bx, by, bz};
				if (smem)
					memset(smem, SMEM_JUNK, dynamic_smem_bytes);
				if (r.fibered)
					run_block_fibers(&r, block);
				else
					run_block_loop(&r, block);
			}
	run = saved_run;
	dyn_smem = saved_smem;
	if (r.pool)
		fiber_pool_release(r.pool);
	free(r.tid);
	free(r.done);
	free(smem);
	return 0;
}
