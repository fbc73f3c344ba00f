// mlp1.cu — a one-hidden-layer MLP trained with plain CUDA C, written the
// way small third-party trainers are (issue 31: mnist-cuda's
// naive-gpu/1layer.cu): every buffer cudaMalloc'd once, one kernel per
// step, the loss read back with cudaMemcpy each step, SGD in place, the
// second layer's gradient accumulated across steps and zeroed once per
// epoch.  The inputs use only their first 160 features, so the rows of the
// first layer's gradient past them are written every step with the zeros
// they hold: a region no kernel changes that the update kernel reads every
// step.  Built with sim/bin/simnvcc.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "check.h"

#define IN    512
#define HID   256
#define OUT   10
#define BATCH 32
#define USED  160 /* features that are ever nonzero */

// c[m][n] = a[m][k] b[k][n]
__global__ void matmul(const float *a, const float *b, float *c, int m, int k, int n)
{
	int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < m && j < n) {
		float s = 0.0f;
		for (int t = 0; t < k; t++)
			s += a[i * k + t] * b[t * n + j];
		c[i * n + j] = s;
	}
}

// c[k][n] (+)= a[m][k]^T b[m][n]
__global__ void matmul_at_b(const float *a, const float *b, float *c, int m, int k, int n, int acc)
{
	int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < k && j < n) {
		float s = 0.0f;
		for (int t = 0; t < m; t++)
			s += a[t * k + i] * b[t * n + j];
		c[i * n + j] = acc ? c[i * n + j] + s : s;
	}
}

// c[m][k] = a[m][n] b[k][n]^T
__global__ void matmul_a_bt(const float *a, const float *b, float *c, int m, int n, int k)
{
	int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < m && j < k) {
		float s = 0.0f;
		for (int t = 0; t < n; t++)
			s += a[i * n + t] * b[j * n + t];
		c[i * k + j] = s;
	}
}

__global__ void relu(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && x[i] < 0.0f)
		x[i] = 0.0f;
}

__global__ void drelu(const float *h, float *d, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && h[i] <= 0.0f)
		d[i] = 0.0f;
}

// Softmax of each row of logits and its gradient for the labels.
__global__ void softmax_grad(const float *logits, const int *labels, float *prob, float *d,
                             int rows)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	float mx = logits[r * OUT], sum = 0.0f;
	for (int j = 1; j < OUT; j++)
		mx = fmaxf(mx, logits[r * OUT + j]);
	for (int j = 0; j < OUT; j++)
		sum += expf(logits[r * OUT + j] - mx);
	for (int j = 0; j < OUT; j++) {
		float p = expf(logits[r * OUT + j] - mx) / sum;
		prob[r * OUT + j] = p;
		d[r * OUT + j] = (p - (j == labels[r] ? 1.0f : 0.0f)) / rows;
	}
}

__global__ void sgd(float *w, const float *g, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		w[i] -= 0.05f * g[i];
}

__global__ void zero(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = 0.0f;
}

dim3 grid2(int rows, int cols)
{
	return dim3((cols + 15) / 16, (rows + 15) / 16);
}

int main(int argc, char **argv)
{
	int epochs = argc > 1 ? atoi(argv[1]) : 2, steps = argc > 2 ? atoi(argv[2]) : 12;
	int nsamples = BATCH * steps;
	float *hx = (float *)calloc((size_t)nsamples * IN, sizeof(float));
	int *hy = (int *)malloc(nsamples * sizeof(int));
	float *hw1 = (float *)malloc(IN * HID * sizeof(float)),
	      *hw2 = (float *)malloc(HID * OUT * sizeof(float));
	unsigned seed = 12345;
	for (int i = 0; i < nsamples; i++) {
		for (int f = 0; f < USED; f++) {
			seed = seed * 1103515245u + 12345u;
			hx[(size_t)i * IN + f] =
			    (seed >> 16) % 3 ? (float)((seed >> 8) % 256) / 256.0f : 0.0f;
		}
		hy[i] = (int)(seed % OUT);
	}
	for (int i = 0; i < IN * HID; i++) {
		seed = seed * 1103515245u + 12345u;
		hw1[i] = ((float)((seed >> 8) % 2048) / 1024.0f - 1.0f) * 0.06f;
	}
	for (int i = 0; i < HID * OUT; i++) {
		seed = seed * 1103515245u + 12345u;
		hw2[i] = ((float)((seed >> 8) % 2048) / 1024.0f - 1.0f) * 0.1f;
	}
	float *x, *w1, *w2, *gw1, *gw2, *h, *logits, *prob, *dlog, *dh;
	int *y;
	CK(cudaMalloc(&x, (size_t)nsamples * IN * sizeof(float)));
	CK(cudaMalloc(&y, nsamples * sizeof(int)));
	CK(cudaMalloc(&w1, IN * HID * sizeof(float)));
	CK(cudaMalloc(&w2, HID * OUT * sizeof(float)));
	CK(cudaMalloc(&gw1, IN * HID * sizeof(float)));
	CK(cudaMalloc(&gw2, HID * OUT * sizeof(float)));
	CK(cudaMalloc(&h, BATCH * HID * sizeof(float)));
	CK(cudaMalloc(&logits, BATCH * OUT * sizeof(float)));
	CK(cudaMalloc(&prob, BATCH * OUT * sizeof(float)));
	CK(cudaMalloc(&dlog, BATCH * OUT * sizeof(float)));
	CK(cudaMalloc(&dh, BATCH * HID * sizeof(float)));
	CK(cudaMemcpy(x, hx, (size_t)nsamples * IN * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(y, hy, nsamples * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(w1, hw1, IN * HID * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(w2, hw2, HID * OUT * sizeof(float), cudaMemcpyHostToDevice));
	float hp[BATCH * OUT];
	for (int e = 0; e < epochs; e++) {
		zero<<<(IN * HID + 255) / 256, 256>>>(gw1, IN * HID);
		zero<<<(HID * OUT + 255) / 256, 256>>>(gw2, HID * OUT);
		double loss = 0.0;
		for (int s = 0; s < steps; s++) {
			const float *xb = x + (size_t)s * BATCH * IN;
			const int *yb = y + s * BATCH;
			matmul<<<grid2(BATCH, HID), dim3(16, 16)>>>(xb, w1, h, BATCH, IN, HID);
			relu<<<(BATCH * HID + 255) / 256, 256>>>(h, BATCH * HID);
			matmul<<<grid2(BATCH, OUT), dim3(16, 16)>>>(h, w2, logits, BATCH, HID, OUT);
			softmax_grad<<<1, BATCH>>>(logits, yb, prob, dlog, BATCH);
			CK(cudaMemcpy(hp, prob, sizeof(hp), cudaMemcpyDeviceToHost));
			for (int r = 0; r < BATCH; r++)
				loss -= logf(hp[r * OUT + hy[s * BATCH + r]] + 1e-9f);
			matmul_at_b<<<grid2(HID, OUT), dim3(16, 16)>>>(h, dlog, gw2, BATCH, HID,
			                                               OUT, 1);
			matmul_a_bt<<<grid2(BATCH, HID), dim3(16, 16)>>>(dlog, w2, dh, BATCH, OUT,
			                                                 HID);
			drelu<<<(BATCH * HID + 255) / 256, 256>>>(h, dh, BATCH * HID);
			matmul_at_b<<<grid2(IN, HID), dim3(16, 16)>>>(xb, dh, gw1, BATCH, IN, HID,
			                                              0);
			sgd<<<(IN * HID + 255) / 256, 256>>>(w1, gw1, IN * HID);
			sgd<<<(HID * OUT + 255) / 256, 256>>>(w2, gw2, HID * OUT);
			CK(cudaGetLastError());
		}
		printf("epoch %d loss %.6f\n", e, loss / nsamples);
	}
	CK(cudaMemcpy(hw1, w1, IN * HID * sizeof(float), cudaMemcpyDeviceToHost));
	unsigned long long sum = 1469598103934665603ull;
	for (int i = 0; i < IN * HID; i++) {
		unsigned u;
		memcpy(&u, &hw1[i], 4);
		sum = (sum ^ u) * 1099511628211ull;
	}
	printf("w1 %016llx\n", sum);
	return 0;
}
