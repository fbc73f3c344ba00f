// runtime_nvcc_stub.cu — host code as nvcc generates it for <<<>>>
// (fat binary registration, __cudaPushCallConfiguration, __cudaGetKernel,
// __cudaLaunchKernel) running on the simulated runtime, built by plain nvcc.
// The fat binary holds real GPU code the simulated device cannot run and no
// simcc module sits beside it (sim/bin/simnvcc would add one), so the launch
// must fail the way a GPU without a matching image fails, and everything
// else must keep working.
#include <cstdio>
#include <cuda_runtime.h>
#include "expect.h"

__global__ void iota(int *p)
{
	p[threadIdx.x] = threadIdx.x;
}

int main()
{
	int *p = nullptr;
	EXPECT(cudaMalloc(&p, 32 * sizeof(int)) == cudaSuccess);
	EXPECT(cudaMemset(p, 0, 32 * sizeof(int)) == cudaSuccess);
	iota<<<1, 32>>>(p);
	EXPECT(cudaGetLastError() == cudaErrorNoKernelImageForDevice);
	EXPECT(cudaGetLastError() == cudaSuccess); // not sticky
	int h[32] = {1};
	EXPECT(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDeviceToHost) == cudaSuccess);
	EXPECT(h[0] == 0 && h[31] == 0);
	EXPECT(cudaFree(p) == cudaSuccess);
	std::printf("runtime_nvcc_stub: ok\n");
	return 0;
}
