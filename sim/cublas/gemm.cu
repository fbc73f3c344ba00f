// gemm.cu — the kernels of the simulated cuBLAS (built by sim/bin/simcc and
// embedded in build/simcuda/libcublas.so.13): C = alpha * op(A) * op(B) +
// beta * C in column-major storage.  cublas_sgemm_kernel is batched with
// fixed strides (grid.z = batch); cublas_sgemm_splitk_kernel splits k over
// grid.z and meets the splits through a counter in the handle's workspace.
// Each thread computes one element of C with serial sums in k order, so
// results are the same bits on every run and on a GPU.  As in cuBLAS,
// beta == 0 means C is not read (it may hold NaN) and alpha == 0 means A
// and B are not read (the library never picks split-K then).

// Element (i, j)'s sum of op(A)(i, l) * op(B)(l, j) over l in [from, to),
// in l order.
static __device__ float dot_slice(int transa, int transb, int i, int j, int from, int to,
                                  const float *a, int lda, const float *b, int ldb)
{
	// op(A)(i, l) and op(B)(l, j) as (start, step) walks along l.
	long long a_step = transa ? 1 : lda;
	long long b_step = transb ? ldb : 1;
	long long a_at = (transa ? (long long)i * lda : i) + a_step * from;
	long long b_at = (transb ? j : (long long)j * ldb) + b_step * from;
	float acc = 0.0f;
	for (int l = from; l < to; l++) {
		acc += a[a_at] * b[b_at];
		a_at += a_step;
		b_at += b_step;
	}
	return acc;
}

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
	float acc = alpha != 0.0f ? dot_slice(transa, transb, i, j, 0, k, a, lda, b, ldb) : 0.0f;
	float *out = c + (long long)j * ldc + i;
	*out = beta == 0.0f ? alpha * acc : alpha * acc + beta * *out;
}

// Split-K, one problem: split z = blockIdx.z sums its slice of k (chunks
// of ceil(k / splits)).  The workspace holds a 32-bit counter at byte 0,
// which the library zeroes (a memset on the same stream) before every
// launch, and from byte 256 the partial sums of splits 0 .. splits-2, an
// m x n column-major block each.  One counter for the whole grid, bumped
// once per element: each thread of those splits stores its partial,
// fences, and adds 1, so the counter reaches (splits - 1) * m * n when
// every partial is in.  The threads of the last split compute their own
// slice, wait for that count (a spin on a GPU), then add the partials in
// split order, then their own, and write C.  A launch whose counter does
// not start at 0 (no memset before it) never sees that count.
extern "C" __global__ void cublas_sgemm_splitk_kernel(int transa, int transb, int m, int n, int k,
                                                      float alpha, const float *A, int lda,
                                                      const float *B, int ldb, float beta, float *C,
                                                      int ldc, unsigned *workspace, int splits)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int j = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= m || j >= n)
		return;
	int z = blockIdx.z, chunk = (k + splits - 1) / splits;
	int from = z * chunk < k ? z * chunk : k, to = k - from > chunk ? from + chunk : k;
	float mine = dot_slice(transa, transb, i, j, from, to, A, lda, B, ldb);
	float *parts = reinterpret_cast<float *>(reinterpret_cast<char *>(workspace) + 256);
	long long mn = (long long)m * n, at = (long long)j * m + i;
	if (z < splits - 1) {
		parts[z * mn + at] = mine;
		__threadfence(); // the partial is visible before the count says so
		atomicAdd(workspace, 1u);
		return;
	}
	unsigned target = (unsigned)((splits - 1) * mn);
#ifdef __SIMCUDA__
	// Blocks run one after another: a count short now never comes.
	unsigned seen = atomicAdd(workspace, 0u);
	if (seen != target)
		simcuda_spin_forever("a counter in its workspace", seen, target);
#else
	while (atomicAdd(workspace, 0u) != target) {
	}
#endif
	__threadfence();
	// __ldcg: from L2, where the other splits' stores are, not a stale L1.
	float acc = __ldcg(&parts[at]);
	for (int s = 1; s < splits - 1; s++)
		acc += __ldcg(&parts[s * mn + at]);
	acc += mine;
	float *out = C + (long long)j * ldc + i;
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
// The same flops (grid.z is splits of one problem here) and 1 us less
// launch cost: with the counter's memset (1 us) before it, a split-K GEMM
// costs what the plain one would.
SIMCUDA_COST(cublas_sgemm_splitk_kernel)
{
	return 1000.0 + 2.0 * SIMCUDA_ARG(2) * SIMCUDA_ARG(3) * SIMCUDA_ARG(4) / 1000.0;
}
// The device profiles: 2mnk flops per problem at the fp32 (SIMT) rate --
// this cuBLAS computes in fp32 whatever the math mode permits, so it is
// priced as fp32 -- and A, B read, C read and written once.
SIMCUDA_WORK(cublas_sgemm_kernel)
{
	double m = SIMCUDA_ARG(2), n = SIMCUDA_ARG(3), k = SIMCUDA_ARG(4), z = grid.z;
	return {2.0 * m * n * k * z, 4.0 * (m * k + k * n + 2.0 * m * n) * z, SIMCUDA_MATH_FP32,
	        0.0};
}
// Each split's partial sums are written and read back once more.
SIMCUDA_WORK(cublas_sgemm_splitk_kernel)
{
	double m = SIMCUDA_ARG(2), n = SIMCUDA_ARG(3), k = SIMCUDA_ARG(4), s = SIMCUDA_ARG(14);
	return {2.0 * m * n * k, 4.0 * (m * k + k * n + 2.0 * m * n * s), SIMCUDA_MATH_FP32, 0.0};
}
#endif
