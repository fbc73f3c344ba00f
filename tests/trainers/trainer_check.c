/* trainer_check.c — every failing CUDA call ends the run with one message
 * and exit status 2. */
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
