/*
 * splitk.c — the split-K path of a single fp32 GEMM, as cuBLASLt runs a
 * problem whose k dwarfs m and n: k is cut into up to 4 slices, each
 * summed by its own blocks (grid.z), and the last slice's blocks add the
 * others' partial sums, which wait in the handle's workspace.  The blocks
 * meet through a counter there that the library zeroes with a memset on
 * the stream right before the kernel; the kernel (gemm.cu) spins until
 * the counter says every partial is in.  Relaunching the kernel alone,
 * without that memset, hangs a GPU (the simulator reports it and aborts).
 */
#include "cublas_int.h"

#define MAX_SPLITS 4
#define PARTS_AT   256 /* the partials' offset: 256-byte aligned, as the real library's */
#define TALL       4   /* k at least TALL * max(m, n) */

/* How many splits the workspace holds for g (0: none; at least 2 else):
 * k / max(m, n), at most MAX_SPLITS, fewer when the partials of that many
 * do not fit.  The counter's target ((splits - 1) * m * n) fits 32 bits. */
static int splits_for(const struct cublasContext *h, const struct cublas_gemm1 *g)
{
	long long big = g->m > g->n ? g->m : g->n;
	if (h->workspace == NULL || g->alpha == 0.0f || g->k < TALL * big)
		return 0;
	long long splits = g->k / big < MAX_SPLITS ? g->k / big : MAX_SPLITS;
	for (; splits >= 2; splits--) {
		unsigned long long parts = (unsigned long long)(splits - 1) * g->m * g->n;
		if (parts <= 0xffffffffu && PARTS_AT + parts * sizeof(float) <= h->workspace_bytes)
			return (int)splits;
	}
	return 0;
}

int cublas_splitk(cublasHandle_t h, const struct cublas_gemm1 *g, unsigned gx, unsigned gy,
                  cublasStatus_t *status)
{
	int splits = splits_for(h, g);
	if (splits == 0)
		return 0;
	CUdeviceptr counter = (CUdeviceptr)h->workspace;
	*status = CUBLAS_STATUS_EXECUTION_FAILED;
	if (cublas_drv.memset_d32_async(counter, 0, 1, h->stream) != CUDA_SUCCESS)
		return 1;
	struct cublas_gemm1 a = *g; /* kernel arguments point into it */
	void *ws = h->workspace;
	void *args[] = {&a.ta, &a.tb,  &a.m,    &a.n, &a.k,   &a.alpha, &a.A,   &a.lda,
	                &a.B,  &a.ldb, &a.beta, &a.C, &a.ldc, &ws,      &splits};
	if (cublas_drv.launch_kernel(cublas_drv.sgemm_splitk, gx, gy, (unsigned)splits,
	                             CUBLAS_GEMM_BLOCK, CUBLAS_GEMM_BLOCK, 1, 0, h->stream, args,
	                             NULL) != CUDA_SUCCESS)
		return 1;
	*status = CUBLAS_STATUS_SUCCESS;
	return 1;
}
