/*
 * block.h — the kernel support library's private state of the block that
 * runs on this thread: its threads as fibers, what each one waits for
 * (a barrier, a warp operation), and the hand-over between them.  grid.c
 * owns the launch and the scheduler, warp.c the warp operations.
 */
#ifndef SIMCUDA_KERNEL_BLOCK_H
#define SIMCUDA_KERNEL_BLOCK_H

#include "simcuda_abi.h"
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
	int arg, width;
	unsigned long long value, result;
};
#define LANE_ACTIVEMASK 0x100u

struct grid_run {
	const struct simcuda_kernel *k;
	void *const *args;
	struct fiber *pool;
	simcuda_dim3 *tid;      /* threadIdx of each fiber */
	unsigned char *state;   /* enum thread_state of each fiber */
	struct lane_op *lanes;  /* each fiber's pending warp operation */
	unsigned current;       /* fiber now running (linear thread index) */
	unsigned block_threads; /* threads per block */
	unsigned live;          /* fibers of this block not yet returned */
	unsigned at_barrier;    /* fibers waiting at __syncthreads */
	int fibered;            /* threads run as fibers */
};

/* The launch running on this thread, or NULL outside kernels. */
extern __thread struct grid_run *simk_run __attribute__((visibility("hidden")));

/* The running fiber has stopped being ready: hand over to the next ready
 * one; returns when this fiber is ready again and its turn has come. */
void simk_block(struct grid_run *r) __attribute__((visibility("hidden")));

/* Called whenever a thread of warp w stops being ready (it blocks or
 * returns): completes what that thread's leaving may complete (warp
 * operations waiting for it, __activemask). */
void simk_warp_settle(struct grid_run *r, unsigned w) __attribute__((visibility("hidden")));

/* One message naming the kernel, then abort(): the kernel did something a
 * GPU leaves undefined or would hang on. */
_Noreturn void simk_fatal(const struct grid_run *r, const char *fmt, ...)
    __attribute__((visibility("hidden"), format(printf, 2, 3)));

/* Appends "lanes 0-15, 20" (the set bits of mask) to buf. */
void simk_lanes_str(char *buf, size_t len, unsigned mask) __attribute__((visibility("hidden")));
const char *simk_op_name(unsigned op) __attribute__((visibility("hidden")));

#endif
