/*
 * driver_common.h — helpers shared by the simulated driver's unit tests
 * (driver_*.c, kernel_*.c): context setup, the hand-written test module,
 * and running a scenario in a child process (for faults, which kill the
 * process, and for SIMCUDA_* settings, which are read at load time).
 */
#ifndef SIMCUDA_DRIVER_COMMON_H
#define SIMCUDA_DRIVER_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "simcuda_stats.h"

#ifndef TEST_MODULE_DIR
#error "TEST_MODULE_DIR must name the directory of the built test modules"
#endif
#define TEST_MODULE TEST_MODULE_DIR "/testkernels.so"

#define CHECK(call) assert_int_equal((call), CUDA_SUCCESS)

/* A test of the legacy clock model's figures runs again under
 * SIMCUDA_DEVICE=legacy: the simulated driver reads the profile when it is
 * loaded, before main. */
static inline void rerun_as_legacy(char **argv)
{
	const char *d = getenv("SIMCUDA_DEVICE");
	if (d != NULL && strcmp(d, "legacy") == 0)
		return;
	setenv("SIMCUDA_DEVICE", "legacy", 1);
	execv("/proc/self/exe", argv);
	perror("execv /proc/self/exe");
	exit(1);
}

static inline CUcontext setup_context(void)
{
	CUcontext ctx;
	CHECK(cuInit(0));
	CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CHECK(cuCtxSetCurrent(ctx));
	return ctx;
}

static inline CUmodule load_test_module(void)
{
	CUmodule m;
	CHECK(cuModuleLoad(&m, TEST_MODULE));
	return m;
}

static inline CUfunction get_fn(CUmodule m, const char *name)
{
	CUfunction f;
	CHECK(cuModuleGetFunction(&f, m, name));
	return f;
}

#endif
