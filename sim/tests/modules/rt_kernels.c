/*
 * rt_kernels.c — a kernel module for the runtime and CUPTI tests, written
 * directly against simcuda_abi.h (what sim/bin/simcc would generate from a
 * .cu file), so these tests do not depend on simcc.
 *
 *   rt_fill(float *p, float v, int n)               p[i] = v
 *   rt_axpy(float a, const float *x, float *y, int n) y[i] += a * x[i]
 *   rt_iota(int *p, int n)                           p[i] = i
 */
#include <stddef.h>
#include "simcuda_abi.h"

static unsigned global_index(void)
{
	return simcuda_blockIdx.x * simcuda_blockDim.x + simcuda_threadIdx.x;
}

static void fill(void *const *args)
{
	float *p = *(float *const *)args[0];
	float v = *(const float *)args[1];
	int n = *(const int *)args[2];
	unsigned i = global_index();
	if ((int)i < n)
		p[i] = v;
}

static void axpy(void *const *args)
{
	float a = *(const float *)args[0];
	const float *x = *(const float *const *)args[1];
	float *y = *(float *const *)args[2];
	int n = *(const int *)args[3];
	unsigned i = global_index();
	if ((int)i < n)
		y[i] += a * x[i];
}

static void iota(void *const *args)
{
	int *p = *(int *const *)args[0];
	int n = *(const int *)args[1];
	unsigned i = global_index();
	if ((int)i < n)
		p[i] = (int)i;
}

/* Packed parameter layouts, as the CUDA ABI lays them out. */
static const unsigned fill_off[] = {0, 8, 12}, fill_size[] = {8, 4, 4};
static const unsigned axpy_off[] = {0, 8, 16, 24}, axpy_size[] = {4, 8, 8, 4};
static const unsigned iota_off[] = {0, 8}, iota_size[] = {8, 4};

static const struct simcuda_kernel kernels[] = {
    {"rt_fill", fill, 3, fill_off, fill_size, 16, 0, NULL, NULL},
    {"rt_axpy", axpy, 4, axpy_off, axpy_size, 28, 0, NULL, NULL},
    {"rt_iota", iota, 2, iota_off, iota_size, 12, 0, NULL, NULL},
};

__attribute__((visibility("default"))) const struct simcuda_module simcuda_module = {
    SIMCUDA_ABI_VERSION, sizeof(kernels) / sizeof(kernels[0]), kernels};
