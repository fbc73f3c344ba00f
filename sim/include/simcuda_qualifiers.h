/*
 * simcuda_qualifiers.h — CUDA's declaration qualifiers for code that g++
 * compiles for the simulated device (sim/bin/simcc).  Kept apart from
 * simcuda_kernel.h because simcc's first pass must leave them as words
 * for its scanner; the compile pass force-includes this file.
 *
 * `__shared__` becomes a function-static thread_local: a block's threads
 * all run on one worker thread and blocks run one after another, so a
 * thread_local is exactly one block's shared memory.
 */
#ifndef SIMCUDA_QUALIFIERS_H
#define SIMCUDA_QUALIFIERS_H
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static thread_local
#endif
