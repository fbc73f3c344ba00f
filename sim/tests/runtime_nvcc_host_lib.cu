// runtime_nvcc_host_lib.cu — the second file of runtime_nvcc_host: its own
// fat binary and simcc module in the same program.
#include <cuda_runtime.h>

__global__ void negate_kernel(float *a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = -a[i];
}

void negate(float *a, int n, cudaStream_t s)
{
	negate_kernel<<<(n + 31) / 32, 32, 0, s>>>(a, n);
}
