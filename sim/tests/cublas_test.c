/*
 * cublas_test.c — the simulated cuBLAS (build/simcuda/libcublas.so.13):
 * handle state and queries, every fp32 GEMM entry point against a host
 * loop in all transpose combinations, alpha/beta rules (beta = 0 never
 * reads C, alpha = 0 never reads A or B), batches, the Ex forms' type
 * checks, argument errors as the real library reports them, and a name
 * that is only a stub.  Values are small integers, so every sum is exact.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#define CHECK(call) assert_int_equal((call), CUBLAS_STATUS_SUCCESS)
#define RT(call)    assert_int_equal((call), cudaSuccess)

static cublasHandle_t handle;

static int setup(void **state)
{
	(void)state;
	return cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

static float *to_device(const float *host, size_t n)
{
	float *d;
	RT(cudaMalloc((void **)&d, n * sizeof(float)));
	RT(cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice));
	return d;
}

static void from_device(float *host, const float *d, size_t n)
{
	RT(cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost));
}

/* Column-major element (i, j) of op(X), X stored with leading dimension ld. */
static float op_at(const float *x, int ld, int trans, int i, int j)
{
	return trans ? x[(size_t)i * ld + j] : x[(size_t)j * ld + i];
}

static void fill(float *x, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((int)((i * 7 + (size_t)seed * 13) % 9) - 4);
}

/* One GEMM of m x n x k with padded leading dimensions, checked exactly. */
static void check_gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha,
                       float beta)
{
	int a_rows = ta == CUBLAS_OP_N ? m : k, a_cols = ta == CUBLAS_OP_N ? k : m;
	int b_rows = tb == CUBLAS_OP_N ? k : n, b_cols = tb == CUBLAS_OP_N ? n : k;
	int lda = a_rows + 2, ldb = b_rows + 1, ldc = m + 3;
	size_t na = (size_t)lda * a_cols, nb = (size_t)ldb * b_cols, nc = (size_t)ldc * n;
	float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float));
	float *c = malloc(nc * sizeof(float)), *got = malloc(nc * sizeof(float));
	fill(a, na, 1);
	fill(b, nb, 2);
	fill(c, nc, 3);
	float *da = to_device(a, na), *db = to_device(b, nb), *dc = to_device(c, nc);
	CHECK(cublasSgemm(handle, ta, tb, m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc));
	from_device(got, dc, nc);
	for (int j = 0; j < n; j++)
		for (int i = 0; i < ldc; i++) {
			float want = c[(size_t)j * ldc + i]; /* padding rows untouched */
			if (i < m) {
				float acc = 0.0f;
				for (int l = 0; l < k; l++)
					acc += op_at(a, lda, ta != CUBLAS_OP_N, i, l) *
					       op_at(b, ldb, tb != CUBLAS_OP_N, l, j);
				want = alpha * acc + beta * want;
			}
			assert_true(got[(size_t)j * ldc + i] == want);
		}
	RT(cudaFree(da));
	RT(cudaFree(db));
	RT(cudaFree(dc));
	free(a);
	free(b);
	free(c);
	free(got);
}

static void sgemm_all_transposes(void **state)
{
	(void)state;
	const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
	for (int x = 0; x < 3; x++)
		for (int y = 0; y < 3; y++) {
			check_gemm(ops[x], ops[y], 5, 7, 3, 1.0f, 0.0f);
			check_gemm(ops[x], ops[y], 33, 17, 20, 2.0f, 1.0f);
		}
	check_gemm(CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, -1.0f, 0.5f);
}

/* beta = 0: C is not read (NaN there does not matter); alpha = 0: A and
 * B are not read. */
static void alpha_beta_zero_do_not_read(void **state)
{
	(void)state;
	float nan = NAN, one = 1.0f, zero = 0.0f, two = 2.0f;
	float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {nan, nan, nan, nan}, got[4];
	float *da = to_device(a, 4), *db = to_device(b, 4), *dc = to_device(c, 4);
	CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, da, 2, db, 2, &zero, dc,
	                  2));
	from_device(got, dc, 4);
	for (int i = 0; i < 4; i++)
		assert_true(got[i] == a[i]);
	float poisoned[4] = {nan, nan, nan, nan};
	RT(cudaMemcpy(da, poisoned, sizeof poisoned, cudaMemcpyHostToDevice));
	CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &zero, da, 2, db, 2, &two, dc,
	                  2));
	from_device(got, dc, 4);
	for (int i = 0; i < 4; i++)
		assert_true(got[i] == 2.0f * a[i]);
	RT(cudaFree(da));
	RT(cudaFree(db));
	RT(cudaFree(dc));
}

/* Three problems at fixed strides, through both batched entry points and
 * on a stream of the handle's. */
static void strided_batched(void **state)
{
	(void)state;
	enum { M = 4, N = 3, K = 5, BATCH = 3, SA = M * K + 1, SB = K * N + 2, SC = M * N };
	float a[SA * BATCH], b[SB * BATCH], got[SC * BATCH], one = 1.0f, zero = 0.0f;
	fill(a, SA * BATCH, 4);
	fill(b, SB * BATCH, 5);
	float *da = to_device(a, SA * BATCH), *db = to_device(b, SB * BATCH), *dc;
	RT(cudaMalloc((void **)&dc, sizeof got));
	cudaStream_t s, back;
	RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cublasSetStream(handle, s));
	CHECK(cublasGetStream(handle, &back));
	assert_ptr_equal(back, s);
	for (int ex = 0; ex < 2; ex++) {
		RT(cudaMemset(dc, 0xff, sizeof got));
		RT(cudaDeviceSynchronize());
		if (ex)
			CHECK(cublasGemmStridedBatchedEx(
			    handle, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, da, CUDA_R_32F, M, SA,
			    db, CUDA_R_32F, K, SB, &zero, dc, CUDA_R_32F, M, SC, BATCH,
			    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		else
			CHECK(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K,
			                                &one, da, M, SA, db, K, SB, &zero, dc, M,
			                                SC, BATCH));
		RT(cudaMemcpyAsync(got, dc, sizeof got, cudaMemcpyDeviceToHost, s));
		RT(cudaStreamSynchronize(s));
		for (int p = 0; p < BATCH; p++)
			for (int j = 0; j < N; j++)
				for (int i = 0; i < M; i++) {
					float acc = 0.0f;
					for (int l = 0; l < K; l++)
						acc +=
						    a[p * SA + l * M + i] * b[p * SB + j * K + l];
					assert_true(got[p * SC + j * M + i] == acc);
				}
	}
	CHECK(cublasSetStream(handle, NULL));
	RT(cudaStreamDestroy(s));
	RT(cudaFree(da));
	RT(cudaFree(db));
	RT(cudaFree(dc));
}

static void gemm_ex_types(void **state)
{
	(void)state;
	float a[4] = {1, 2, 3, 4}, one = 1.0f, zero = 0.0f, got[4];
	float *da = to_device(a, 4), *dc;
	RT(cudaMalloc((void **)&dc, sizeof got));
	CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 2, &one, da, CUDA_R_32F, 2, da,
	                   CUDA_R_32F, 2, &zero, dc, CUDA_R_32F, 2, CUBLAS_COMPUTE_32F_FAST_TF32,
	                   CUBLAS_GEMM_DEFAULT_TENSOR_OP));
	from_device(got, dc, 4);
	/* A^T A for A = [1 3; 2 4] (column-major) */
	assert_true(got[0] == 5.0f && got[1] == 11.0f && got[2] == 11.0f && got[3] == 25.0f);
	assert_int_equal(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, da,
	                              CUDA_R_16F, 2, da, CUDA_R_16F, 2, &zero, dc, CUDA_R_32F, 2,
	                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
	                 CUBLAS_STATUS_NOT_SUPPORTED);
	assert_int_equal(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, da,
	                              CUDA_R_32F, 2, da, CUDA_R_32F, 2, &zero, dc, CUDA_R_32F, 2,
	                              CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
	                 CUBLAS_STATUS_NOT_SUPPORTED);
	RT(cudaFree(da));
	RT(cudaFree(dc));
}

static void argument_errors(void **state)
{
	(void)state;
	float one = 1.0f, x[64] = {0};
	float *d = to_device(x, 64);
	const cublasStatus_t bad = CUBLAS_STATUS_INVALID_VALUE;
	assert_int_equal(
	    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, 3, d, 4, &one, d, 4),
	    bad); /* lda < m */
	assert_int_equal(
	    cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, 6, &one, d, 4, d, 6, &one, d, 4),
	    bad); /* lda < k for op(A) = A^T */
	assert_int_equal(
	    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, 4, 5, 4, &one, d, 4, d, 4, &one, d, 4),
	    bad); /* ldb < n for op(B) = B^T */
	assert_int_equal(
	    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, 4, d, 4, &one, d, 3),
	    bad); /* ldc < m */
	assert_int_equal(
	    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, -1, 4, 4, &one, d, 4, d, 4, &one, d, 4),
	    bad);
	assert_int_equal(cublasSgemm(handle, (cublasOperation_t)7, CUBLAS_OP_N, 4, 4, 4, &one, d, 4,
	                             d, 4, &one, d, 4),
	                 bad);
	assert_int_equal(
	    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, NULL, d, 4, d, 4, &one, d, 4),
	    bad);
	assert_int_equal(cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one,
	                                           d, 4, 0, d, 4, 0, &one, d, 4, 0, -1),
	                 bad);
	assert_int_equal(
	    cublasSgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, 4, d, 4, &one, d, 4),
	    CUBLAS_STATUS_NOT_INITIALIZED);
	/* Nothing to do is no error, and touches nothing. */
	CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 0, 4, 4, &one, NULL, 1, NULL, 4, &one,
	                  NULL, 1));
	RT(cudaFree(d));
}

static void handle_state_and_queries(void **state)
{
	(void)state;
	cublasMath_t mode;
	CHECK(cublasGetMathMode(handle, &mode));
	assert_int_equal(mode, CUBLAS_DEFAULT_MATH);
	CHECK(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH));
	CHECK(cublasGetMathMode(handle, &mode));
	assert_int_equal(mode, CUBLAS_TF32_TENSOR_OP_MATH);
	assert_int_equal(cublasSetMathMode(handle, (cublasMath_t)5), CUBLAS_STATUS_INVALID_VALUE);
	CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));

	void *ws;
	RT(cudaMalloc(&ws, 1 << 16));
	CHECK(cublasSetWorkspace(handle, ws, 1 << 16));
	assert_int_equal(cublasSetWorkspace(handle, (char *)ws + 8, 64),
	                 CUBLAS_STATUS_INVALID_VALUE);
	CHECK(cublasSetWorkspace(handle, NULL, 0));
	RT(cudaFree(ws));

	int version = 0, major = 0;
	CHECK(cublasGetVersion(handle, &version));
	assert_int_equal(version, CUBLAS_VERSION);
	CHECK(cublasGetProperty(MAJOR_VERSION, &major));
	assert_int_equal(major, CUBLAS_VER_MAJOR);
	assert_int_equal(cublasGetCudartVersion(), CUDART_VERSION);

	assert_string_equal(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE),
	                    "CUBLAS_STATUS_INVALID_VALUE");
	assert_string_equal(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED),
	                    "the functionality requested is not supported");
	assert_int_equal(cublasSetStream(NULL, 0), CUBLAS_STATUS_NOT_INITIALIZED);
	assert_int_equal(cublasCreate(NULL), CUBLAS_STATUS_INVALID_VALUE);
}

/* A real name the simulator does not implement answers "not supported". */
static void unimplemented_names(void **state)
{
	(void)state;
	double one = 1.0;
	assert_int_equal(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, NULL, 1, NULL,
	                             1, &one, NULL, 1),
	                 CUBLAS_STATUS_NOT_SUPPORTED);
	assert_int_equal(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE),
	                 CUBLAS_STATUS_NOT_SUPPORTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sgemm_all_transposes), cmocka_unit_test(alpha_beta_zero_do_not_read),
	    cmocka_unit_test(strided_batched),      cmocka_unit_test(gemm_ex_types),
	    cmocka_unit_test(argument_errors),      cmocka_unit_test(handle_state_and_queries),
	    cmocka_unit_test(unimplemented_names),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
