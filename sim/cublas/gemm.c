/*
 * gemm.c — the fp32 GEMMs: cublasSgemm, cublasSgemmStridedBatched,
 * cublasGemmEx and cublasGemmStridedBatchedEx (CUDA_R_32F operands with an
 * fp32 compute type; other types answer CUBLAS_STATUS_NOT_SUPPORTED), all
 * transpose combinations, alpha and beta in host memory (the default
 * pointer mode, the only one here).  Arguments are checked as the real
 * library checks them; the work is one kernel launch per 65535 problems
 * of a batch (the grid's z limit) on the handle's stream, or for one
 * problem tall in k with a workspace, a split-K GEMM (splitk.c).
 */
#include "cublas_int.h"

#define MAX_GRID  65535u
#define MAX_BATCH 65535

static int op_ok(cublasOperation_t op)
{
	return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int max1(int v)
{
	return v > 1 ? v : 1;
}

static cublasStatus_t sgemm(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const float *alpha,
                            const float *A, int lda, long long stride_a, const float *B, int ldb,
                            long long stride_b, const float *beta, float *C, int ldc,
                            long long stride_c, int batch)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/* op(A) is m x k, op(B) k x n; for real data C means T. */
	int ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
	if (!op_ok(transa) || !op_ok(transb) || m < 0 || n < 0 || k < 0 || batch < 0 ||
	    lda < max1(ta ? k : m) || ldb < max1(tb ? n : k) || ldc < max1(m) || alpha == NULL ||
	    beta == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (m == 0 || n == 0 || batch == 0)
		return CUBLAS_STATUS_SUCCESS;
	unsigned gx = ((unsigned)m + CUBLAS_GEMM_BLOCK - 1) / CUBLAS_GEMM_BLOCK,
	         gy = ((unsigned)n + CUBLAS_GEMM_BLOCK - 1) / CUBLAS_GEMM_BLOCK;
	if (gx > 0x7fffffffu || gy > MAX_GRID)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	if (cublas_bind() != CUBLAS_STATUS_SUCCESS)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	float al = *alpha, be = *beta;
	if (batch == 1) {
		const struct cublas_gemm1 g = {ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc};
		cublasStatus_t s;
		if (cublas_splitk(handle, &g, gx, gy, &s))
			return s;
	}
	for (int done = 0; done < batch; done += MAX_BATCH) {
		int count = batch - done < MAX_BATCH ? batch - done : MAX_BATCH;
		const float *a = A + stride_a * done, *b = B + stride_b * done;
		float *c = C + stride_c * done;
		void *args[] = {&ta,       &tb, &m,   &n,        &k,  &al, &a,   &lda,
		                &stride_a, &b,  &ldb, &stride_b, &be, &c,  &ldc, &stride_c};
		CUresult r = cublas_drv.launch_kernel(cublas_drv.sgemm, gx, gy, (unsigned)count,
		                                      CUBLAS_GEMM_BLOCK, CUBLAS_GEMM_BLOCK, 1, 0,
		                                      handle->stream, args, NULL);
		if (r != CUDA_SUCCESS)
			return CUBLAS_STATUS_EXECUTION_FAILED;
	}
	return CUBLAS_STATUS_SUCCESS;
}

CUBLAS_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int m, int n, int k,
                                            const float *alpha, const float *A, int lda,
                                            const float *B, int ldb, const float *beta, float *C,
                                            int ldc)
{
	return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0,
	             1);
}

CUBLAS_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float *alpha, const float *A, int lda, long long stride_a, const float *B, int ldb,
    long long stride_b, const float *beta, float *C, int ldc, long long stride_c, int batch)
{
	return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b,
	             beta, C, ldc, stride_c, batch);
}

/* The Ex forms: fp32 operands and an fp32 compute type (a "fast" one only
 * permits lower precision), any algorithm. */
static cublasStatus_t gemm_ex(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const void *alpha,
                              const void *A, cudaDataType Atype, int lda, long long stride_a,
                              const void *B, cudaDataType Btype, int ldb, long long stride_b,
                              const void *beta, void *C, cudaDataType Ctype, int ldc,
                              long long stride_c, int batch, cublasComputeType_t compute)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (Atype != CUDA_R_32F || Btype != CUDA_R_32F || Ctype != CUDA_R_32F)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	switch (compute) {
	case CUBLAS_COMPUTE_32F:
	case CUBLAS_COMPUTE_32F_PEDANTIC:
	case CUBLAS_COMPUTE_32F_FAST_16F:
	case CUBLAS_COMPUTE_32F_FAST_16BF:
	case CUBLAS_COMPUTE_32F_FAST_TF32:
		return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb,
		             stride_b, beta, C, ldc, stride_c, batch);
	default:
		return CUBLAS_STATUS_NOT_SUPPORTED;
	}
}

CUBLAS_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, const void *B, cudaDataType Btype, int ldb,
                                          const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
	(void)algo;
	return gemm_ex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0,
	               beta, C, Ctype, ldc, 0, 1, computeType);
}

CUBLAS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType Atype, int lda, long long stride_a,
    const void *B, cudaDataType Btype, int ldb, long long stride_b, const void *beta, void *C,
    cudaDataType Ctype, int ldc, long long stride_c, int batch, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo)
{
	(void)algo;
	return gemm_ex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, stride_a, B, Btype,
	               ldb, stride_b, beta, C, Ctype, ldc, stride_c, batch, computeType);
}
