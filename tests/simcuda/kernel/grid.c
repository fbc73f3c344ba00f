/*
 * grid.c — runs one launch of a simcc kernel on the calling thread: the
 * CUDA built-ins as thread-locals, blocks one after another, and the
 * threads of a block either as a plain loop or, when the kernel
 * synchronizes, as fibers that meet at each barrier and, warp by warp, at
 * each warp operation (warp.c).
 */
#include "block.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT __thread simcuda_dim3 simcuda_threadIdx, simcuda_blockIdx, simcuda_blockDim, simcuda_gridDim;

__thread struct grid_run *simk_run;
static __thread void *dyn_smem;

EXPORT const int simcuda_warpSize = WARP_LANES;

EXPORT void *simcuda_dynamic_smem(void)
{
	return dyn_smem;
}

_Noreturn void simk_fatal(const struct grid_run *r, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (r)
		fprintf(stderr, "simcuda: kernel '%s' block (%u,%u,%u): %s\n", r->k->name,
		        simcuda_blockIdx.x, simcuda_blockIdx.y, simcuda_blockIdx.z, msg);
	else
		fprintf(stderr, "simcuda: %s\n", msg);
	abort();
}

/* Fiber `from` stopped being ready: run the next ready fiber of this
 * round directly (half the switches of going through the scheduler), or
 * go back to the scheduler when the round is over. */
static void pass_on(struct grid_run *r, unsigned from)
{
	for (unsigned j = from + 1; j < r->block_threads; j++)
		if (r->state[j] == T_READY) {
			r->current = j;
			simcuda_threadIdx = r->tid[j];
			fiber_switch(r->pool, from, j);
			return;
		}
	fiber_yield(r->pool, from);
}

void simk_block(struct grid_run *r)
{
	unsigned me = r->current;
	pass_on(r, me);
	/* Resumed: the scheduler or a fiber made this one current again. */
}

static void release_barrier(struct grid_run *r)
{
	for (unsigned i = 0; i < r->block_threads; i++)
		if (r->state[i] == T_BARRIER) {
			r->state[i] = T_READY;
			simk_warp_ready(r, i);
		}
	r->at_barrier = 0;
}

EXPORT void simcuda_syncthreads(void)
{
	struct grid_run *r = simk_run;
	if (r == NULL)
		simk_fatal(NULL, "__syncthreads called outside a kernel");
	if (!r->fibered) {
		/* One thread per block needs no barrier; more would run the
		 * barrier wrong, which simcc prevents by setting the flag. */
		if (r->block_threads == 1)
			return;
		simk_fatal(r, "calls __syncthreads but is not marked as synchronizing "
		              "(synchronizes is 0)");
	}
	unsigned me = r->current;
	r->state[me] = T_BARRIER;
	/* Threads that returned count as arrived, as on a GPU. */
	if (++r->at_barrier == r->live)
		release_barrier(r);
	else
		simk_warp_left(r, me, 0);
	/* Every thread passes the turn on, also the one that released the
	 * barrier: all threads of a round run up to the barrier before any
	 * goes past it. */
	simk_block(r);
}

static void fiber_main(void *arg)
{
	struct grid_run *r = arg;
	unsigned me = r->current;
	r->k->thread_fn(r->args);
	r->state[me] = T_DONE;
	r->live--;
	simk_warp_left(r, me, 1);
	if (r->at_barrier && r->at_barrier == r->live)
		release_barrier(r);
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

/* Nothing is ready but threads remain: say what each warp waits for. */
static _Noreturn void deadlock(const struct grid_run *r)
{
	char msg[900] = "", lanes[200];
	size_t at = 0;
	for (unsigned w = 0; w * WARP_LANES < r->block_threads; w++) {
		const unsigned char *state = r->state + w * WARP_LANES;
		const struct lane_op *op = r->lanes + w * WARP_LANES;
		unsigned n = r->block_threads - w * WARP_LANES, barrier = 0, told = 0;
		n = n < WARP_LANES ? n : WARP_LANES;
		for (unsigned l = 0; l < n; l++) {
			if (state[l] == T_BARRIER)
				barrier |= 1u << l;
			if (state[l] != T_WARP || (told >> l & 1))
				continue;
			unsigned same = 0;
			for (unsigned m = l; m < n; m++)
				if (state[m] == T_WARP && op[m].op == op[l].op &&
				    op[m].mask == op[l].mask)
					same |= 1u << m;
			told |= same;
			simk_lanes_str(lanes, sizeof lanes, same);
			if (at < sizeof msg)
				at += (size_t)snprintf(
				    msg + at, sizeof msg - at, "%swarp %u %s in %s(mask 0x%08x)",
				    at ? "; " : "", w, lanes, simk_op_name(op[l].op), op[l].mask);
		}
		if (barrier && at < sizeof msg) {
			simk_lanes_str(lanes, sizeof lanes, barrier);
			at += (size_t)snprintf(msg + at, sizeof msg - at,
			                       "%swarp %u %s at __syncthreads", at ? "; " : "", w,
			                       lanes);
		}
	}
	simk_fatal(r, "deadlock, no thread can go on: %s", msg);
}

static void run_block_fibers(struct grid_run *r, simcuda_dim3 block)
{
	unsigned n = r->block_threads, i = 0;
	for (unsigned z = 0; z < block.z; z++)
		for (unsigned y = 0; y < block.y; y++)
			for (unsigned x = 0; x < block.x; x++, i++) {
				r->tid[i] = (simcuda_dim3){x, y, z};
				r->state[i] = T_READY;
				fiber_init(r->pool, i, fiber_main, r);
			}
	r->live = n;
	r->at_barrier = 0;
	simk_warps_reset(r, n);
	/* Each round runs every ready fiber, in order, until it waits (at a
	 * barrier, in a warp operation) or returns; the fibers hand over to
	 * each other (pass_on). */
	for (;;) {
		for (i = 0; i < n && r->state[i] != T_READY; i++)
			;
		if (i == n) {
			if (r->live)
				deadlock(r);
			break;
		}
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
	r.fibered = k->synchronizes != 0;
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
		r.state = calloc(r.block_threads, 1);
		r.lanes = calloc(r.block_threads, sizeof(*r.lanes));
		r.warps = calloc((r.block_threads + WARP_LANES - 1) / WARP_LANES, sizeof(*r.warps));
		if (r.pool == NULL || r.tid == NULL || r.state == NULL || r.lanes == NULL ||
		    r.warps == NULL) {
			if (r.pool)
				fiber_pool_release(r.pool);
			free(r.tid);
			free(r.state);
			free(r.lanes);
			free(r.warps);
			free(smem);
			errno = ENOMEM;
			return -1;
		}
	}
	struct grid_run *saved_run = simk_run;
	void *saved_smem = dyn_smem;
	simk_run = &r;
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
	simk_run = saved_run;
	dyn_smem = saved_smem;
	if (r.pool)
		fiber_pool_release(r.pool);
	free(r.tid);
	free(r.state);
	free(r.lanes);
	free(r.warps);
	free(smem);
	return 0;
}
