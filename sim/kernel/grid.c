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
EXPORT __thread simcuda_dim3 simcuda_clusterDim = {1, 1, 1};
EXPORT __thread int simcuda_cooperative;

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
	/* A grid.sync(): the whole block is here; it goes on when every block
	 * of the grid is (each on its own thread). */
	if (r->grid_sync) {
		r->grid_sync = 0;
		pthread_barrier_wait(r->grid_barrier);
	}
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

EXPORT void simcuda_grid_sync(void)
{
	struct grid_run *r = simk_run;
	if (r == NULL)
		simk_fatal(NULL, "grid.sync() called outside a kernel");
	if (!r->cooperative)
		simk_fatal(r, "grid.sync() in a launch that is not cooperative (a GPU hangs or "
		              "traps): launch it with cuLaunchCooperativeKernel or the "
		              "COOPERATIVE attribute");
	if (!r->grid_barrier) { /* one block: a block barrier */
		simcuda_syncthreads();
		return;
	}
	if (!r->fibered) {
		/* simcc marks a kernel calling sync() as synchronizing; a block
		 * of one thread needs no fibers either way. */
		if (r->block_threads != 1)
			simk_fatal(r, "calls grid.sync() but is not marked as synchronizing");
		pthread_barrier_wait(r->grid_barrier);
		return;
	}
	r->grid_sync = 1;
	simcuda_syncthreads();
}

EXPORT void simcuda_cluster_sync_unsupported(void)
{
	simk_fatal(simk_run,
	           "cluster.sync() across %u blocks is not simulated (a cluster's "
	           "blocks run one after another)",
	           simcuda_clusterDim.x * simcuda_clusterDim.y * simcuda_clusterDim.z);
}

/* Blocks run one after another here, so what a spinning block waits for
 * either happened before it ran or never will: a GPU would spin forever. */
EXPORT void simcuda_spin_forever(const char *what, unsigned long long value,
                                 unsigned long long target)
{
	simk_fatal(simk_run, "would spin forever: %s is %llu, it waits for %llu (a GPU hangs here)",
	           what, value, target);
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

/* The per-block state of a launch: fibers, thread states, warps. */
static int run_init(struct grid_run *r, const struct simcuda_kernel *k, void *const *args,
                    simcuda_dim3 block)
{
	*r = (struct grid_run){.k = k, .args = args};
	r->block_threads = block.x * block.y * block.z;
	r->fibered = k->synchronizes != 0;
	if (!r->fibered)
		return 0;
	r->pool = fiber_pool(r->block_threads);
	r->tid = calloc(r->block_threads, sizeof(*r->tid));
	r->state = calloc(r->block_threads, 1);
	r->lanes = calloc(r->block_threads, sizeof(*r->lanes));
	r->warps = calloc((r->block_threads + WARP_LANES - 1) / WARP_LANES, sizeof(*r->warps));
	return r->pool && r->tid && r->state && r->lanes && r->warps ? 0 : -1;
}

static void run_fini(struct grid_run *r)
{
	if (r->pool)
		fiber_pool_release(r->pool);
	free(r->tid);
	free(r->state);
	free(r->lanes);
	free(r->warps);
}

/* What a block runs with: the built-ins are this thread's. */
struct launch {
	const struct simcuda_kernel *k;
	void *const *args;
	simcuda_dim3 grid, block, cluster;
	unsigned smem_bytes;
	int cooperative;
	pthread_barrier_t *grid_barrier;
};

/* Runs blocks [first, first + n) of the grid, in order, on this thread. */
static int run_blocks(const struct launch *l, uint64_t first, uint64_t n)
{
	struct grid_run r;
	void *smem = NULL;
	if (l->smem_bytes) {
		smem = aligned_alloc(128, (l->smem_bytes + 127u) & ~127u);
		if (smem == NULL)
			return -1;
	}
	if (run_init(&r, l->k, l->args, l->block)) {
		run_fini(&r);
		free(smem);
		return -1;
	}
	r.cooperative = l->cooperative;
	r.grid_barrier = l->grid_barrier;
	struct grid_run *saved_run = simk_run;
	void *saved_smem = dyn_smem;
	simcuda_dim3 saved_cluster = simcuda_clusterDim;
	int saved_coop = simcuda_cooperative;
	simk_run = &r;
	dyn_smem = smem;
	simcuda_gridDim = l->grid;
	simcuda_blockDim = l->block;
	simcuda_clusterDim = l->cluster;
	simcuda_cooperative = l->cooperative;
	for (uint64_t b = first; b < first + n; b++) {
		simcuda_blockIdx =
		    (simcuda_dim3){(unsigned)(b % l->grid.x), (unsigned)(b / l->grid.x % l->grid.y),
		                   (unsigned)(b / l->grid.x / l->grid.y)};
		if (smem)
			memset(smem, SMEM_JUNK, l->smem_bytes);
		if (r.fibered)
			run_block_fibers(&r, l->block);
		else
			run_block_loop(&r, l->block);
	}
	simk_run = saved_run;
	dyn_smem = saved_smem;
	simcuda_clusterDim = saved_cluster;
	simcuda_cooperative = saved_coop;
	run_fini(&r);
	free(smem);
	return 0;
}

struct block_thread {
	const struct launch *l;
	uint64_t block;
	int rc;
};

static void *block_main(void *arg)
{
	struct block_thread *t = arg;
	t->rc = run_blocks(t->l, t->block, 1);
	return NULL;
}

/* A cooperative grid whose blocks synchronize: all of them at once, each
 * on a thread, as they are all resident on a GPU.  Their static shared
 * memory (thread-locals) is then each block's own. */
static int run_resident(struct launch *l, uint64_t nblocks)
{
	pthread_barrier_t barrier;
	struct block_thread *t = calloc(nblocks, sizeof(*t));
	pthread_t *tid = calloc(nblocks, sizeof(*tid));
	if (!t || !tid || pthread_barrier_init(&barrier, NULL, (unsigned)nblocks)) {
		free(t);
		free(tid);
		return -1;
	}
	l->grid_barrier = &barrier;
	uint64_t started = 0;
	int rc = 0;
	for (; started < nblocks; started++) {
		t[started] = (struct block_thread){.l = l, .block = started};
		if (pthread_create(&tid[started], NULL, block_main, &t[started])) {
			/* The blocks started wait at the first grid.sync() for
			 * ones that will never come: nothing to do but say so. */
			simk_fatal(NULL,
			           "cannot start a thread for block %llu of a cooperative "
			           "grid",
			           (unsigned long long)started);
		}
	}
	for (uint64_t b = 0; b < started; b++) {
		pthread_join(tid[b], NULL);
		rc |= t[b].rc;
	}
	pthread_barrier_destroy(&barrier);
	free(t);
	free(tid);
	return rc;
}

EXPORT int simcuda_run_grid_attrs(const struct simcuda_kernel *k, void *const *args,
                                  simcuda_dim3 grid, simcuda_dim3 block,
                                  unsigned dynamic_smem_bytes,
                                  const struct simcuda_launch_attrs *attrs)
{
	simcuda_dim3 cluster = {1, 1, 1};
	if (attrs && attrs->cluster.x)
		cluster = attrs->cluster;
	if (k == NULL || k->thread_fn == NULL || !config_ok(grid, block) || !cluster.y ||
	    !cluster.z || grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z) {
		errno = EINVAL;
		return -1;
	}
	struct launch l = {.k = k,
	                   .args = args,
	                   .grid = grid,
	                   .block = block,
	                   .cluster = cluster,
	                   .smem_bytes = dynamic_smem_bytes,
	                   .cooperative = attrs && attrs->cooperative};
	uint64_t nblocks = (uint64_t)grid.x * grid.y * grid.z;
	int rc = l.cooperative && k->synchronizes && nblocks > 1 ? run_resident(&l, nblocks)
	                                                         : run_blocks(&l, 0, nblocks);
	if (rc)
		errno = ENOMEM;
	return rc;
}

EXPORT int simcuda_run_grid(const struct simcuda_kernel *k, void *const *args, simcuda_dim3 grid,
                            simcuda_dim3 block, unsigned dynamic_smem_bytes)
{
	return simcuda_run_grid_attrs(k, args, grid, block, dynamic_smem_bytes, NULL);
}
