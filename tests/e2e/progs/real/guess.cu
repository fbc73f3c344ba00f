// guess.cu — a step whose last op (the weights read back to the host) is
// also issued in its middle, twice, between the kernel that writes
// activation d and the one that reads it, as darknet issues its fills.  Every buffer is
// cudaMalloc'd once; d and e are written whole before they are read, so a
// plan may keep them unmapped across the iteration boundary.  Step 12 is
// an odd one (a temporary allocated and written first, as an evaluation
// would): run mode diverges, and while it looks for the iteration again
// the middle read-backs look like the iteration's end.  Until issue 31's
// fix each guessed boundary unmapped d (done by the next guess) before the
// next op showed the guess wrong, and use_d faulted.  Built with sim/bin/simnvcc.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.h"

#define N     (64 * 1024) /* floats in d and e */
#define M     256         /* floats in w and m */
#define STEPS 18
#define ODD   12

__global__ void fill(const float *w, float *d, int n, float k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		d[i] = w[i % M] * k + (float)(i % 13);
}

__global__ void clear(float *m)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < M)
		m[i] = 0.0f;
}

// w[j] += a tiny sum over d's j-th column
__global__ void use(const float *d, float *w, int n)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j < M) {
		float s = 0.0f;
		for (int i = j; i < n; i += M)
			s += d[i];
		w[j] = w[j] * 0.999f + s * 1e-6f;
	}
}

int main(void)
{
	float *w, *m, *d, *e, host[M];
	CK(cudaMalloc(&w, M * sizeof(float)));
	CK(cudaMalloc(&m, M * sizeof(float)));
	CK(cudaMalloc(&d, N * sizeof(float)));
	CK(cudaMalloc(&e, N * sizeof(float)));
	for (int i = 0; i < M; i++)
		host[i] = (float)(i % 17) / 17.0f;
	CK(cudaMemcpy(w, host, sizeof(host), cudaMemcpyHostToDevice));
	const int threads = 256, blocks = (N + threads - 1) / threads;
	for (int step = 0; step < STEPS; step++) {
		float *tmp = NULL;
		if (step == ODD) {
			CK(cudaMalloc(&tmp, N * sizeof(float)));
			fill<<<blocks, threads>>>(w, tmp, N, 3.0f);
		}
		clear<<<1, M>>>(m);
		fill<<<blocks, threads>>>(w, d, N, 0.5f);
		/* the weights before the update, read back in the middle, twice
		 * (a log line and a check, each its own copy) */
		double before = 0;
		for (int r = 0; r < 2; r++) {
			CK(cudaMemcpy(host, w, sizeof(host), cudaMemcpyDeviceToHost));
			for (int i = 0; i < M; i++)
				before += host[i];
		}
		use<<<1, M>>>(d, w, N);
		fill<<<blocks, threads>>>(w, e, N, 0.25f);
		use<<<1, M>>>(e, w, N);
		if (tmp)
			CK(cudaFree(tmp));
		CK(cudaMemcpy(host, w, sizeof(host), cudaMemcpyDeviceToHost));
		double sum = 0;
		for (int i = 0; i < M; i++)
			sum += host[i];
		printf("step %d sum %.9f (before %.9f)\n", step, sum, before);
	}
	return 0;
}
