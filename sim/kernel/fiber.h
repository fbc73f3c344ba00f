/*
 * fiber.h — the kernel support library's private face: cooperative fibers
 * that run the threads of one block on the calling (worker) thread.
 */
#ifndef SIMCUDA_KERNEL_FIBER_H
#define SIMCUDA_KERNEL_FIBER_H

#include <stddef.h>

struct fiber;

/* Stacks for up to `count` fibers, for one launch; NULL when the memory
 * cannot be mapped.  Give them back with fiber_pool_release. */
struct fiber *fiber_pool(unsigned count);
void fiber_pool_release(struct fiber *pool);

/* Prepares fiber i of the pool to run fn(arg) from its stack top. */
void fiber_init(struct fiber *pool, unsigned i, void (*fn)(void *), void *arg);

/* Switches from the scheduler into fiber i, until it yields or finishes. */
void fiber_enter(struct fiber *pool, unsigned i);

/* Switches from the running fiber i back to the scheduler. */
void fiber_yield(struct fiber *pool, unsigned i);

/* Switches from the running fiber i straight to fiber j. */
void fiber_switch(struct fiber *pool, unsigned i, unsigned j);

#endif
