/* second.c — a module with one kernel, so that a test can hold two
 * different in-memory images at once (each must keep its own kernels). */
#include <stddef.h>
#include "simcuda_abi.h"

/* __global__ void second_kernel(void): does nothing. */
static void second_kernel(void *const *args)
{
	(void)args;
}

static const unsigned none[1];
static const struct simcuda_kernel kernels[] = {
    {"second_kernel", second_kernel, 0, none, none, 0, 0, NULL, NULL},
};

__attribute__((visibility("default")))
const struct simcuda_module simcuda_module = {SIMCUDA_ABI_VERSION, 1, kernels};
