/* trainer_blas.c — row-major matmuls on column-major cuBLAS: the
 * row-major product C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
 * so the operands swap and each keeps its own transpose flag. */
#include "trainer.h"

static cublasOperation_t op(int t)
{
	return t ? CUBLAS_OP_T : CUBLAS_OP_N;
}

void matmul_batched(cublasHandle_t h, int ta, int tb, int M, int N, int K, float alpha,
                    const float *A, long long sa, const float *B, long long sb, float beta,
                    float *C, long long sc, int batch)
{
	int lda = ta ? M : K, ldb = tb ? K : N;
	blas_check(cublasSgemmStridedBatched(h, op(tb), op(ta), N, M, K, &alpha, B, ldb, sb, A, lda,
	                                     sa, &beta, C, N, sc, batch),
	           "cublasSgemmStridedBatched");
}

void matmul(cublasHandle_t h, int ta, int tb, int M, int N, int K, float alpha, const float *A,
            const float *B, float beta, float *C)
{
	int lda = ta ? M : K, ldb = tb ? K : N;
	blas_check(cublasSgemm(h, op(tb), op(ta), N, M, K, &alpha, B, ldb, A, lda, &beta, C, N),
	           "cublasSgemm");
}
