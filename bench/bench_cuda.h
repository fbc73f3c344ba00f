/*
 * bench_cuda.h — what the host-cost benchmarks share: a fatal CHECK, a
 * monotonic clock, and the device set-up (primary context, the empty
 * kernel of a module, a non-blocking stream).  Header-only: each
 * benchmark is one small program.
 */
#ifndef BENCH_CUDA_H
#define BENCH_CUDA_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda.h>

#define CHECK(call)                                                                                \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		if (r_ != CUDA_SUCCESS) {                                                          \
			fprintf(stderr, "%s: %s failed: %d\n", __FILE__, #call, (int)r_);          \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

static inline double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Device 0's primary context made current, kernel "empty" of module, and a
 * non-blocking stream. */
static inline void bench_setup(const char *module, CUfunction *fn, CUstream *s)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CHECK(cuCtxSetCurrent(ctx));
	CHECK(cuModuleLoad(&mod, module));
	CHECK(cuModuleGetFunction(fn, mod, "empty"));
	CHECK(cuStreamCreate(s, CU_STREAM_NON_BLOCKING));
}

#endif
