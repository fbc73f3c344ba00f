// gemm.cu — the kernel of the simulated cuBLAS (built by tools/simcc and
// embedded in build/simcuda/libcublas.so.13): C = alpha * op(A) * op(B) +
// beta * C in column-major storage, batched with fixed strides (grid.z =
// batch).  Each thread computes one element of C with a serial sum in k
// order, so results are the same bits on every run and on a GPU.  As in
// cuBLAS, beta == 0 means C is not read (it may hold NaN) and alpha == 0
// means A and B are not read.

extern "C" __global__ void cublas_sgemm_kernel(int transa, int transb, int m, int n, int k,
                                               float alpha, const float *A, int lda,
                                               long long stride_a, const float *B, int ldb,
                                               long long stride_b, float beta, float *C, int ldc,
                                               long long stride_c)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int j = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= m || j >= n)
		return;
	const float *a = A + stride_a * blockIdx.z;
	const float *b = B + stride_b * blockIdx.z;
	float *c = C + stride_c * blockIdx.z;
	// op(A)(i, l) and op(B)(l, j) as (start, step) walks along l.
	long long a_at = transa ? (long long)i * lda : i;
	long long a_step = transa ? 1 : lda;
	long long b_at = transb ? j : (long long)j * ldb;
	long long b_step = transb ? ldb : 1;
	float acc = 0.0f;
	for (int l = 0; alpha != 0.0f && l < k; l++) {
		acc += a[a_at] * b[b_at];
		a_at += a_step;
		b_at += b_step;
	}
	float *out = c + (long long)j * ldc + i;
	*out = beta == 0.0f ? alpha * acc : alpha * acc + beta * *out;
}

#ifdef __SIMCUDA__
// A launch costs 2 us plus its flops at 1 TFLOP/s (what small fp32 gemms
// reach without tensor cores): gemms dominate the simulated iteration, as
// on a GPU.
SIMCUDA_COST(cublas_sgemm_kernel)
{
	return 2000.0 + 2.0 * SIMCUDA_ARG(2) * SIMCUDA_ARG(3) * SIMCUDA_ARG(4) * grid.z / 1000.0;
}
#endif
