// runtime_nvcc_host.cu — a CUDA program written the usual way (host code
// and kernels in one file, <<<>>> launches, C++ kernel names), built by
// sim/bin/simnvcc together with runtime_nvcc_host_lib.cu: every launch must
// run its kernel on the simulated device.  See runtime_nvcc_host.sh.
#include <cstdio>
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "expect.h"

namespace cg = cooperative_groups;

__global__ void fill(float *a, float v)
{
	a[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

static __global__ void twice(float *a)
{
	a[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f;
}

namespace
{
__global__ void add_one(float *a)
{
	a[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f;
}
} // namespace

namespace ops
{
__global__ void reverse(const float *in, float *out)
{
	extern __shared__ float tile[];
	tile[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
} // namespace ops

extern "C" __global__ void warp_sums(const float *a, float *out)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	float s = cg::reduce(warp, a[block.thread_rank()], cg::plus<float>{});
	if (warp.thread_rank() == 0)
		out[warp.meta_group_rank()] = s;
}

void negate(float *a, int n, cudaStream_t s); // runtime_nvcc_host_lib.cu

int main()
{
	enum { N = 64 };
	float *a = nullptr, *b = nullptr, host[N];
	cudaStream_t s;
	EXPECT(cudaMalloc(&a, N * sizeof(float)) == cudaSuccess);
	EXPECT(cudaMalloc(&b, N * sizeof(float)) == cudaSuccess);
	EXPECT(cudaStreamCreate(&s) == cudaSuccess);

	fill<<<2, N / 2, 0, s>>>(a, 3.0f);
	twice<<<N / 32, 32, 0, s>>>(a);
	add_one<<<1, N, 0, s>>>(a);
	EXPECT(cudaGetLastError() == cudaSuccess);
	EXPECT(cudaMemcpyAsync(host, a, sizeof host, cudaMemcpyDeviceToHost, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	for (int i = 0; i < N; i++)
		EXPECT(host[i] == 7.0f);

	// Dynamic shared memory; a kernel in a namespace.
	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	EXPECT(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
	ops::reverse<<<2, N / 2, N / 2 * sizeof(float)>>>(a, b);
	EXPECT(cudaMemcpy(host, b, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess);
	for (int i = 0; i < N; i++)
		EXPECT(host[i] == (float)(i / 32 * 32 + 31 - i % 32));

	// cudaLaunchKernel with the host stub, as programs do without <<<>>>.
	void *args[] = {&a, &b};
	EXPECT(cudaLaunchKernel((const void *)warp_sums, dim3(1), dim3(N), args, 0, 0) ==
	       cudaSuccess);
	EXPECT(cudaMemcpy(host, b, 2 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
	EXPECT(host[0] == 496.0f && host[1] == 1520.0f); // 0+...+31, 32+...+63

	// A kernel of the other file, launched from there.
	negate(a, N, s);
	EXPECT(cudaMemcpyAsync(host, a, sizeof host, cudaMemcpyDeviceToHost, s) == cudaSuccess);
	EXPECT(cudaStreamSynchronize(s) == cudaSuccess);
	EXPECT(host[5] == -5.0f && host[63] == -63.0f);

	// An invalid configuration is the launch's error, the program goes on.
	fill<<<1, 2048>>>(a, 1.0f);
	EXPECT(cudaGetLastError() == cudaErrorInvalidConfiguration);
	EXPECT(cudaGetLastError() == cudaSuccess);

	EXPECT(cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess);
	std::printf("runtime_nvcc_host: ok\n");
	return 0;
}
