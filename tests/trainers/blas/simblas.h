/*
 * simblas.h — a small cuBLAS-like library for the training programs.
 *
 * Like cuBLAS it has no link to libcuda: it dlopen()s "libcuda.so.1" and
 * takes every driver function from cuGetProcAddress, so it reaches the
 * driver the way real vendor libraries do.  Matrices are COLUMN-MAJOR, as
 * in cuBLAS; alpha and beta are host pointers.  Its kernel module
 * (gemm.so for the simulated device, sm_90/gemm.cubin for a GPU) is found
 * in $SIMBLAS_KERNELS, else in ../kernels next to libsimblas.so.
 */
#ifndef SIMBLAS_H
#define SIMBLAS_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct simblas_context *simblas_handle_t;

typedef enum {
	SIMBLAS_STATUS_SUCCESS = 0,
	SIMBLAS_STATUS_NOT_INITIALIZED = 1, /* no driver, no module, or no current context */
	SIMBLAS_STATUS_ALLOC_FAILED = 3,
	SIMBLAS_STATUS_INVALID_VALUE = 7,
	SIMBLAS_STATUS_EXECUTION_FAILED = 13, /* a driver call failed: see simblas_last_error */
} simblas_status_t;

typedef enum { SIMBLAS_OP_N = 0, SIMBLAS_OP_T = 1 } simblas_operation_t;

/* Needs a current CUDA context (e.g. after cudaSetDevice + cudaFree(0)). */
simblas_status_t simblas_create(simblas_handle_t *handle);
simblas_status_t simblas_destroy(simblas_handle_t handle);
simblas_status_t simblas_set_stream(simblas_handle_t handle, CUstream stream);

/* C[m x n] = alpha * op(A) * op(B) + beta * C; op(A) is m x k, op(B) k x n. */
simblas_status_t simblas_sgemm(simblas_handle_t handle, simblas_operation_t transa,
                               simblas_operation_t transb, int m, int n, int k, const float *alpha,
                               const float *A, int lda, const float *B, int ldb, const float *beta,
                               float *C, int ldc);

/* The same for batch_count independent problems at fixed element strides. */
simblas_status_t simblas_sgemm_strided_batched(simblas_handle_t handle, simblas_operation_t transa,
                                               simblas_operation_t transb, int m, int n, int k,
                                               const float *alpha, const float *A, int lda,
                                               long long stride_a, const float *B, int ldb,
                                               long long stride_b, const float *beta, float *C,
                                               int ldc, long long stride_c, int batch_count);

const char *simblas_status_string(simblas_status_t status);
/* The CUresult of the last driver call that failed in this handle (or in
 * simblas_create, for a NULL handle). */
CUresult simblas_last_error(simblas_handle_t handle);

#ifdef __cplusplus
}
#endif
#endif
