/* trainer_check.c — every failing CUDA call ends the run with one message
 * and exit status 2; out of memory names the size and what it was for. */
#include "trainer.h"

#include <stdio.h>
#include <stdlib.h>

void rt_check(cudaError_t e, const char *call)
{
	if (e == cudaSuccess)
		return;
	if (e == cudaErrorMemoryAllocation)
		fprintf(stderr, "%s: out of device memory in %s (%s)\n", trainer_prog, call,
		        cudaGetErrorName(e));
	else
		fprintf(stderr, "%s: %s failed: %s (%s)\n", trainer_prog, call, cudaGetErrorName(e),
		        cudaGetErrorString(e));
	exit(2);
}

void drv_check(CUresult r, const char *call)
{
	if (r == CUDA_SUCCESS)
		return;
	const char *name = NULL, *desc = NULL;
	if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
		name = "unknown CUresult";
	if (cuGetErrorString(r, &desc) != CUDA_SUCCESS)
		desc = "no description";
	if (r == CUDA_ERROR_OUT_OF_MEMORY)
		fprintf(stderr, "%s: out of device memory in %s (%s)\n", trainer_prog, call, name);
	else
		fprintf(stderr, "%s: %s failed: %s (%s)\n", trainer_prog, call, name, desc);
	exit(2);
}

void blas_check(cublasStatus_t s, const char *call)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return;
	fprintf(stderr, "%s: %s failed: %s (%s)\n", trainer_prog, call, cublasGetStatusName(s),
	        cublasGetStatusString(s));
	exit(2);
}

static _Noreturn void oom(size_t bytes, const char *what, cudaError_t e)
{
	fprintf(stderr, "%s: out of device memory allocating %zu bytes for %s (%s)\n", trainer_prog,
	        bytes, what, cudaGetErrorName(e));
	exit(2);
}

float *dev_alloc_async(size_t bytes, const char *what, cudaStream_t stream)
{
	void *p = NULL;
	cudaError_t e = cudaMallocAsync(&p, bytes, stream);
	if (e == cudaErrorMemoryAllocation)
		oom(bytes, what, e);
	rt_check(e, "cudaMallocAsync");
	return p;
}

void dev_free_async(void *p, cudaStream_t stream)
{
	RT(cudaFreeAsync(p, stream));
}

float *dev_alloc(size_t bytes, const char *what)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, bytes);
	if (e == cudaErrorMemoryAllocation)
		oom(bytes, what, e);
	rt_check(e, "cudaMalloc");
	return p;
}
