// refill.cu — an llm.c-style step over one activation arena (a | b | c | d,
// cudaMalloc'd once) where a slice is refilled between two kernels that
// both point into the arena: the batch is copied into a, mix writes b from
// a, d is zeroed with cudaMemset, scale writes c from b (through pointers
// to b and c: d is in its reach, untouched), spread writes d from c, and
// the loss is read back from d.  The profiler may take a kernel's content
// before it from the copy after the kernel before (issue 31's cheaper
// profile), but not across the memset: scale must not be charged with
// zeroing d.  Built with sim/bin/simnvcc.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.h"

#define N     4096 /* floats per slice */
#define STEPS 12

__global__ void mix(const float *a, float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] = a[i] * 0.5f + a[(i + 1) % n] * 0.25f;
}

__global__ void scale(const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = b[i] * 1.5f + 1.0f;
}

__global__ void spread(const float *c, float *d, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		d[i] += c[i] - c[(i + 7) % n];
}

int main(void)
{
	float *arena, *host = (float *)malloc(N * sizeof(float));
	CK(cudaMalloc(&arena, 4 * N * sizeof(float)));
	float *a = arena, *b = a + N, *c = b + N, *d = c + N;
	const int threads = 256, blocks = (N + threads - 1) / threads;
	for (int step = 0; step < STEPS; step++) {
		for (int i = 0; i < N; i++)
			host[i] = (float)((i * 37 + step * 11) % 101) / 101.0f;
		CK(cudaMemcpy(a, host, N * sizeof(float), cudaMemcpyHostToDevice));
		mix<<<blocks, threads>>>(a, b, N);
		CK(cudaMemset(d, 0, N * sizeof(float)));
		scale<<<blocks, threads>>>(b, c, N);
		spread<<<blocks, threads>>>(c, d, N);
		CK(cudaGetLastError());
		CK(cudaMemcpy(host, d, N * sizeof(float), cudaMemcpyDeviceToHost));
		double loss = 0;
		for (int i = 0; i < N; i++)
			loss += host[i] * host[i];
		printf("step %d loss %.9f\n", step, loss);
	}
	CK(cudaFree(arena));
	free(host);
	return 0;
}
