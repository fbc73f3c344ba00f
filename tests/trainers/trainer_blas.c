/* trainer_blas.c — row-major matmuls on the column-major libsimblas: the
 * row-major product C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
 * so the operands swap and each keeps its own transpose flag. */
#include "trainer.h"

void matmul_batched(simblas_handle_t h, int ta, int tb, int M, int N, int K, float alpha,
                    const float *A, long long sa, const float *B, long long sb, float beta,
                    float *C, long long sc, int batch)
{
	int lda = ta ? M : K, ldb = tb ? K : N;
	blas_check(h,
	           simblas_sgemm_strided_batched(h, tb ? SIMBLAS_OP_T : SIMBLAS_OP_N,
	                                         ta ? SIMBLAS_OP_T : SIMBLAS_OP_N, N, M, K, &alpha,
	                                         B, ldb, sb, A, lda, sa, &beta, C, N, sc, batch),
	           "simblas_sgemm_strided_batched");
}

void matmul(simblas_handle_t h, int ta, int tb, int M, int N, int K, float alpha, const float *A,
            const float *B, float beta, float *C)
{
	int lda = ta ? M : K, ldb = tb ? K : N;
	blas_check(h,
	           simblas_sgemm(h, tb ? SIMBLAS_OP_T : SIMBLAS_OP_N,
	                         ta ? SIMBLAS_OP_T : SIMBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
	                         &beta, C, N),
	           "simblas_sgemm");
}
