/*
 * cublas_splitk_test.c — the simulated cuBLAS's split-K GEMMs: with a
 * workspace, a single GEMM tall in k is a memset of the workspace's
 * counter and one cublas_sgemm_splitk_kernel launch whose splits meet
 * through that counter.  Results against a host loop (small integers:
 * every sum is exact whatever the order), the counter each run leaves,
 * fewer splits in a smaller workspace, the plain kernel without one, two
 * GEMMs in a row, and the kernel relaunched without the memset (what a
 * profiler's second run does): the simulator's spin fault.
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
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "child.h"

#define CHECK(call) assert_int_equal((call), CUBLAS_STATUS_SUCCESS)
#define RT(call)    assert_int_equal((call), cudaSuccess)

#define WS_BYTES  (1u << 20)
#define COUNTER_0 0x5eed5eedu /* what the counter holds before any GEMM */

/* A problem: op(A) m x k, op(B) k x n, padded leading dimensions. */
struct prob {
	int ta, tb, m, n, k, lda, ldb, ldc;
	float *a, *b, *c, *da, *db, *dc;
};

static float *to_device(const float *host, size_t n)
{
	float *d;
	RT(cudaMalloc((void **)&d, n * sizeof(float)));
	RT(cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice));
	return d;
}

static void fill(float *x, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((int)((i * 7 + (size_t)seed * 13) % 9) - 4);
}

static struct prob prob_make(int ta, int tb, int m, int n, int k)
{
	struct prob p = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k};
	p.lda = (ta ? k : m) + 2;
	p.ldb = (tb ? n : k) + 1;
	p.ldc = m + 3;
	size_t na = (size_t)p.lda * (ta ? m : k), nb = (size_t)p.ldb * (tb ? k : n);
	size_t nc = (size_t)p.ldc * n;
	p.a = malloc(na * sizeof(float));
	p.b = malloc(nb * sizeof(float));
	p.c = malloc(nc * sizeof(float));
	fill(p.a, na, 1);
	fill(p.b, nb, 2);
	fill(p.c, nc, 3);
	p.da = to_device(p.a, na);
	p.db = to_device(p.b, nb);
	p.dc = to_device(p.c, nc);
	return p;
}

static void prob_free(struct prob *p)
{
	RT(cudaFree(p->da));
	RT(cudaFree(p->db));
	RT(cudaFree(p->dc));
	free(p->a);
	free(p->b);
	free(p->c);
}

static float op_at(const float *x, int ld, int trans, int i, int j)
{
	return trans ? x[(size_t)i * ld + j] : x[(size_t)j * ld + i];
}

static cublasOperation_t op(int t)
{
	return t ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* Runs p (through cublasSgemm or cublasGemmEx) on a handle with `ws` of
 * `ws_bytes`, checks C exactly (padding untouched) and returns the
 * counter the run left at the workspace's start. */
static unsigned run_checked(struct prob *p, void *ws, size_t ws_bytes, float alpha, float beta,
                            int ex)
{
	cublasHandle_t h;
	CHECK(cublasCreate(&h));
	CHECK(cublasSetWorkspace(h, ws, ws_bytes));
	unsigned counter = COUNTER_0;
	RT(cudaMemcpy(ws, &counter, sizeof counter, cudaMemcpyHostToDevice));
	size_t nc = (size_t)p->ldc * p->n;
	RT(cudaMemcpy(p->dc, p->c, nc * sizeof(float), cudaMemcpyHostToDevice));
	if (ex)
		CHECK(cublasGemmEx(h, op(p->ta), op(p->tb), p->m, p->n, p->k, &alpha, p->da,
		                   CUDA_R_32F, p->lda, p->db, CUDA_R_32F, p->ldb, &beta, p->dc,
		                   CUDA_R_32F, p->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	else
		CHECK(cublasSgemm(h, op(p->ta), op(p->tb), p->m, p->n, p->k, &alpha, p->da, p->lda,
		                  p->db, p->ldb, &beta, p->dc, p->ldc));
	float *got = malloc(nc * sizeof(float));
	RT(cudaMemcpy(got, p->dc, nc * sizeof(float), cudaMemcpyDeviceToHost));
	RT(cudaMemcpy(&counter, ws, sizeof counter, cudaMemcpyDeviceToHost));
	for (int j = 0; j < p->n; j++)
		for (int i = 0; i < p->ldc; i++) {
			float want = p->c[(size_t)j * p->ldc + i];
			if (i < p->m) {
				float acc = 0.0f;
				for (int l = 0; l < p->k; l++)
					acc += op_at(p->a, p->lda, p->ta, i, l) *
					       op_at(p->b, p->ldb, p->tb, l, j);
				want = beta == 0.0f ? alpha * acc : alpha * acc + beta * want;
			}
			if (got[(size_t)j * p->ldc + i] != want)
				fail_msg("C(%d, %d) is %g, not %g", i, j,
				         (double)got[(size_t)j * p->ldc + i], (double)want);
		}
	free(got);
	CHECK(cublasDestroy(h));
	return counter;
}

/* Every transpose, both entry points: 4 splits (k / max(m, n) >= 4), the
 * counter left at 3 * m * n, one count per element of each other split. */
static void splitk_matches_host(void **state)
{
	(void)state;
	void *ws;
	RT(cudaMalloc(&ws, WS_BYTES));
	for (int x = 0; x < 4; x++) {
		struct prob p = prob_make(x & 1, x >> 1 & 1, 20, 13, 101);
		assert_int_equal(run_checked(&p, ws, WS_BYTES, 2.0f, 1.0f, x & 1), 3 * 20 * 13);
		assert_int_equal(run_checked(&p, ws, WS_BYTES, -1.0f, 0.0f, !(x & 1)), 3 * 20 * 13);
		prob_free(&p);
	}
	/* k a little under 4 * max(m, n): the plain kernel, counter untouched. */
	struct prob p = prob_make(0, 0, 20, 13, 79);
	assert_int_equal(run_checked(&p, ws, WS_BYTES, 1.0f, 0.0f, 0), COUNTER_0);
	prob_free(&p);
	RT(cudaFree(ws));
}

/* The workspace decides how many splits fit: partials of 1 other split
 * (2 splits), too small for any, none at all; alpha = 0 reads neither A
 * nor B, so it needs no split-K either. */
static void workspace_sets_splits(void **state)
{
	(void)state;
	void *ws;
	RT(cudaMalloc(&ws, WS_BYTES));
	struct prob p = prob_make(1, 0, 16, 8, 128);
	size_t two = 256 + 16 * 8 * sizeof(float);
	assert_int_equal(run_checked(&p, ws, two, 1.0f, 0.5f, 0), 16 * 8);
	assert_int_equal(run_checked(&p, ws, two - 4, 1.0f, 0.5f, 0), COUNTER_0);
	assert_int_equal(run_checked(&p, ws, 0, 1.0f, 0.5f, 0), COUNTER_0);
	assert_int_equal(run_checked(&p, ws, WS_BYTES, 0.0f, 0.5f, 0), COUNTER_0);
	prob_free(&p);
	RT(cudaFree(ws));
}

/* Two split-K GEMMs back to back on a stream, nothing synchronized in
 * between: the second one's memset starts its counter over, and both give
 * the same bits (non-integer values: the partials' sum order is fixed). */
static void two_in_a_row_same_bits(void **state)
{
	(void)state;
	enum { M = 24, N = 9, K = 200 };
	float a[M * K], b[K * N], c1[M * N], c2[M * N], one = 1.0f, zero = 0.0f;
	for (int i = 0; i < M * K; i++)
		a[i] = sinf((float)i) / 3.0f;
	for (int i = 0; i < K * N; i++)
		b[i] = cosf((float)i) / 7.0f;
	float *da = to_device(a, M * K), *db = to_device(b, K * N), *dc1, *dc2;
	void *ws;
	RT(cudaMalloc((void **)&dc1, sizeof c1));
	RT(cudaMalloc((void **)&dc2, sizeof c2));
	RT(cudaMalloc(&ws, WS_BYTES));
	cudaStream_t s;
	RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cublasHandle_t h;
	CHECK(cublasCreate(&h));
	CHECK(cublasSetStream(h, s));
	CHECK(cublasSetWorkspace(h, ws, WS_BYTES));
	/* The uploads ran on the legacy stream, which s does not wait for. */
	RT(cudaDeviceSynchronize());
	CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, da, M, db, K, &zero, dc1, M));
	CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, da, M, db, K, &zero, dc2, M));
	RT(cudaStreamSynchronize(s));
	RT(cudaMemcpy(c1, dc1, sizeof c1, cudaMemcpyDeviceToHost));
	RT(cudaMemcpy(c2, dc2, sizeof c2, cudaMemcpyDeviceToHost));
	assert_memory_equal(c1, c2, sizeof c1);
	for (int j = 0; j < N; j++)
		for (int i = 0; i < M; i++) {
			double acc = 0.0;
			for (int l = 0; l < K; l++)
				acc += (double)a[l * M + i] * b[j * K + l];
			assert_true(fabs(c1[j * M + i] - acc) < 1e-4);
		}
	CHECK(cublasDestroy(h));
	RT(cudaStreamDestroy(s));
	RT(cudaFree(da));
	RT(cudaFree(db));
	RT(cudaFree(dc1));
	RT(cudaFree(dc2));
	RT(cudaFree(ws));
}

/* A split-K GEMM, then what a write-proof profiler does: the bytes the
 * kernel wrote (the counter among them) complemented and the kernel alone
 * launched again with the same arguments, without the memset.  The other
 * splits bring the counter from ~target to 0xffffffff; the last one would
 * wait for target forever. */
static int child_relaunch_without_memset(void)
{
	enum { M = 20, N = 13, K = 101, SPLITS = 4 };
	struct prob p = prob_make(0, 0, M, N, K);
	void *ws;
	RT(cudaMalloc(&ws, WS_BYTES));
	unsigned counter = run_checked(&p, ws, WS_BYTES, 1.0f, 0.0f, 0);
	assert_int_equal(counter, (SPLITS - 1) * M * N);
	counter = ~counter;
	RT(cudaMemcpy(ws, &counter, sizeof counter, cudaMemcpyHostToDevice));
	CUmodule mod;
	CUfunction f;
	assert_int_equal(cuModuleLoad(&mod, CUBLAS_GEMM_MODULE), CUDA_SUCCESS);
	assert_int_equal(cuModuleGetFunction(&f, mod, "cublas_sgemm_splitk_kernel"), CUDA_SUCCESS);
	int ta = 0, tb = 0, m = M, n = N, k = K, splits = SPLITS;
	float alpha = 1.0f, beta = 0.0f;
	void *args[] = {&ta,   &tb,    &m,    &n,    &k,     &alpha, &p.da,  &p.lda,
	                &p.db, &p.ldb, &beta, &p.dc, &p.ldc, &ws,    &splits};
	assert_int_equal(cuLaunchKernel(f, 2, 1, SPLITS, 16, 16, 1, 0, NULL, args, NULL),
	                 CUDA_SUCCESS);
	cuCtxSynchronize();
	return 0; /* not reached: the launch aborts */
}

static void relaunch_without_memset_faults(void **state)
{
	(void)state;
	struct child_result r = run_child("relaunch-without-memset", NULL);
	assert_died_with(&r, "simcuda: kernel 'cublas_sgemm_splitk_kernel' block (0,0,3): would "
	                     "spin forever: a counter in its workspace is 4294967295, it waits "
	                     "for 780 (a GPU hangs here)");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return strcmp(argv[1], "relaunch-without-memset") == 0
		           ? child_relaunch_without_memset()
		           : 2;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(splitk_matches_host),
	    cmocka_unit_test(workspace_sets_splits),
	    cmocka_unit_test(two_in_a_row_same_bits),
	    cmocka_unit_test(relaunch_without_memset_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
