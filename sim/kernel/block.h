/*
 * block.h — the kernel support library's private state of the block that
 * runs on this thread: its threads as fibers, what each one waits for
 * (a barrier, a warp operation), and the hand-over between them.  grid.c
 * owns the launch and the scheduler, warp.c the warp operations.
 */
#ifndef SIMCUDA_KERNEL_BLOCK_H
#define SIMCUDA_KERNEL_BLOCK_H

#include "simcuda_abi.h"
#include <pthread.h>

#include "fiber.h"

#define WARP_LANES 32u

enum thread_state {
	T_READY,   /* runs when its turn comes */
	T_BARRIER, /* waits at __syncthreads */
	T_WARP,    /* waits in a warp operation */
	T_DONE,    /* returned from the kernel */
};

/* A thread's part in the warp operation it waits in. */
struct lane_op {
	unsigned op; /* enum simcuda_warp_op, or LANE_ACTIVEMASK */
	unsigned mask;
	int arg, width; /* for LANE_ACTIVEMASK, arg is the call site */
	unsigned long long value, result;
};
#define LANE_ACTIVEMASK 0x100u

/* Lanes of one warp meeting in one operation with one mask. */
struct warp_group {
	unsigned op, mask, members;
};

/* What warp.c keeps per warp, as lane bit masks, so that an arrival costs
 * a few bit operations rather than a look at every lane. */
struct warp_state {
	unsigned present;            /* lanes the block has */
	unsigned done;               /* lanes that returned */
	unsigned blocked;            /* lanes not ready: waiting anywhere, or done */
	unsigned leaders;            /* pending groups, each by its first lane */
	unsigned activemask;         /* lanes waiting in __activemask */
	struct warp_group group[32]; /* indexed by leader lane */
};

struct grid_run {
	const struct simcuda_kernel *k;
	void *const *args;
	struct fiber *pool;
	simcuda_dim3 *tid;        /* threadIdx of each fiber */
	unsigned char *state;     /* enum thread_state of each fiber */
	struct lane_op *lanes;    /* each fiber's pending warp operation */
	struct warp_state *warps; /* one per warp of the block */
	unsigned current;         /* fiber now running (linear thread index) */
	unsigned block_threads;   /* threads per block */
	unsigned live;            /* fibers of this block not yet returned */
	unsigned at_barrier;      /* fibers waiting at __syncthreads */
	int fibered;              /* threads run as fibers */
	int cooperative;          /* a cooperative launch: grid.sync() is allowed */
	/* A cooperative launch of several blocks that synchronize: each block
	 * runs on a thread of its own, and grid.sync() meets them all here. */
	pthread_barrier_t *grid_barrier;
	int grid_sync; /* the pending block barrier is a grid.sync() */
};

/* The launch running on this thread, or NULL outside kernels. */
extern __thread struct grid_run *simk_run __attribute__((visibility("hidden")));

/* The running fiber has stopped being ready: hand over to the next ready
 * one; returns when this fiber is ready again and its turn has come. */
void simk_block(struct grid_run *r) __attribute__((visibility("hidden")));

/* Thread t stopped being ready (it waits at a barrier, or `returned`):
 * completes what that may complete (warp operations waiting for it,
 * __activemask). */
void simk_warp_left(struct grid_run *r, unsigned t, int returned)
    __attribute__((visibility("hidden")));
/* Thread t is ready again (its barrier was released). */
void simk_warp_ready(struct grid_run *r, unsigned t) __attribute__((visibility("hidden")));
/* Sets the warps of a block of n threads up before it runs. */
void simk_warps_reset(struct grid_run *r, unsigned n) __attribute__((visibility("hidden")));

/* One message naming the kernel, then abort(): the kernel did something a
 * GPU leaves undefined or would hang on. */
_Noreturn void simk_fatal(const struct grid_run *r, const char *fmt, ...)
    __attribute__((visibility("hidden"), format(printf, 2, 3)));

/* Appends "lanes 0-15, 20" (the set bits of mask) to buf. */
void simk_lanes_str(char *buf, size_t len, unsigned mask) __attribute__((visibility("hidden")));
const char *simk_op_name(unsigned op) __attribute__((visibility("hidden")));

#endif
