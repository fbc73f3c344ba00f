// indirect.cu — a step whose middle kernel reads an activation through a
// pointer kept in device memory, which no profile sees (issue 31: "not
// proven read" is not "unread"): encode writes a from a small seed s,
// widen writes t from x, mix reads t and, through the table, a, and decode
// reads a and mix's output; every buffer is cudaMalloc'd once.  A plan
// that frees a between encode and decode (rebuilt by replaying encode from
// s) takes away what mix reads: on a GPU an illegal address, on the
// simulated device a fault.  REMAT_VERIFY=1 must find it in its
// verification iteration and plan again without a.  Built with
// sim/bin/simnvcc.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "check.h"

#define N     (64 * 1024) /* floats */
#define SEED  1024        /* floats */
#define STEPS 14

__global__ void encode(const float *s, float *a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = s[i % SEED] * 0.75f + 0.5f + (float)(i / SEED) * 0.001f;
}

__global__ void widen(const float *x, float *t, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		t[i] = x[i] * x[i];
		t[n + i] = x[i] - 1.0f;
		t[2 * n + i] = x[i] + 2.0f;
	}
}

// m = t's three parts plus a tenth of a, found through table[0]
__global__ void mix(const float *t, float *const *table, float *m, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		m[i] = t[i] + t[n + i] * t[2 * n + i] + 0.1f * table[0][i];
}

__global__ void decode(const float *a, const float *m, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a[i] * m[i];
}

int main(void)
{
	float *s, *x, *a, *t, *m, *y, **table;
	float *host = (float *)malloc(N * sizeof(float));
	CK(cudaMalloc(&s, SEED * sizeof(float)));
	CK(cudaMalloc(&x, N * sizeof(float)));
	CK(cudaMalloc(&t, 3 * N * sizeof(float)));
	CK(cudaMalloc(&a, N * sizeof(float)));
	CK(cudaMalloc(&m, N * sizeof(float)));
	CK(cudaMalloc(&y, N * sizeof(float)));
	CK(cudaMalloc(&table, sizeof(float *)));
	CK(cudaMemcpy(table, &a, sizeof(float *), cudaMemcpyHostToDevice));
	const int threads = 256, blocks = (N + threads - 1) / threads;
	for (int step = 0; step < STEPS; step++) {
		for (int i = 0; i < N; i++)
			host[i] = (float)((i * 13 + step * 7) % 97) / 97.0f;
		CK(cudaMemcpy(s, host + N - SEED, SEED * sizeof(float), cudaMemcpyHostToDevice));
		CK(cudaMemcpy(x, host, N * sizeof(float), cudaMemcpyHostToDevice));
		encode<<<blocks, threads>>>(s, a, N);
		widen<<<blocks, threads>>>(x, t, N);
		mix<<<blocks, threads>>>(t, table, m, N);
		decode<<<blocks, threads>>>(a, m, y, N);
		CK(cudaGetLastError());
		CK(cudaMemcpy(host, y, N * sizeof(float), cudaMemcpyDeviceToHost));
		double sum = 0;
		for (int i = 0; i < N; i++)
			sum += host[i];
		printf("step %d sum %.6f\n", step, sum);
	}
	free(host);
	return 0;
}
