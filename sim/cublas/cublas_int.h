/*
 * cublas_int.h — internals of the simulated cuBLAS
 * (build/simcuda/libcublas.so.13).
 *
 * Like the real library it has no link to libcuda: it dlopen()s
 * "libcuda.so.1" and takes every driver function from cuGetProcAddress, so
 * anything that interposes the driver (libremat) sees its launches.  Its
 * GEMM kernel (gemm.cu, built by sim/bin/simcc) is embedded in the library
 * and loaded from memory, as the real one loads the fat binaries it
 * carries.  Only fp32 GEMMs are implemented; every other name the real
 * library exports answers CUBLAS_STATUS_NOT_SUPPORTED.
 */
#ifndef SIMCUDA_CUBLAS_INT_H
#define SIMCUDA_CUBLAS_INT_H

#include <cublas_v2.h>
#include <cuda.h>

#define CUBLAS_EXPORT __attribute__((visibility("default")))

struct cublasContext {
	CUstream stream;
	cublasMath_t math_mode;
	void *workspace;
	size_t workspace_bytes;
};

/* The driver entry points and the loaded GEMM kernel, set up once per
 * process by cublas_setup (driver.c). */
struct cublas_driver {
	__typeof__(cuInit) *init;
	__typeof__(cuCtxGetCurrent) *ctx_get_current;
	__typeof__(cuCtxSetCurrent) *ctx_set_current;
	__typeof__(cuDeviceGet) *device_get;
	__typeof__(cuDevicePrimaryCtxRetain) *primary_ctx_retain;
	__typeof__(cuModuleLoadData) *module_load_data;
	__typeof__(cuModuleGetFunction) *module_get_function;
	__typeof__(cuLaunchKernel) *launch_kernel;
	__typeof__(cuMemsetD32Async) *memset_d32_async;
	CUfunction sgemm, sgemm_splitk;
};
extern struct cublas_driver cublas_drv __attribute__((visibility("hidden")));

/* Reaches the driver, retains device 0's primary context and loads the
 * kernel, once; returns the status cublasCreate reports. */
cublasStatus_t cublas_setup(void) __attribute__((visibility("hidden")));
/* Makes the primary context current on a thread that has none, as the
 * runtime inside the real library does. */
cublasStatus_t cublas_bind(void) __attribute__((visibility("hidden")));

/* The GEMM kernels' blocks: 16 x 16 threads, one element of C each. */
#define CUBLAS_GEMM_BLOCK 16

/* One fp32 GEMM (a batch of 1), its arguments checked by gemm.c. */
struct cublas_gemm1 {
	int ta, tb, m, n, k;
	float alpha;
	const float *A;
	int lda;
	const float *B;
	int ldb;
	float beta;
	float *C;
	int ldc;
};
/* Runs g as a split-K GEMM (splitk.c) when k is tall and the handle's
 * workspace holds the partial sums: returns 1 with *status set, or 0 when
 * the plain kernel should run it. */
int cublas_splitk(cublasHandle_t h, const struct cublas_gemm1 *g, unsigned gx, unsigned gy,
                  cublasStatus_t *status) __attribute__((visibility("hidden")));

#endif
