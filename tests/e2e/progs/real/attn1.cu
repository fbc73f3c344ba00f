// attn1.cu — a one-block attention-like model trained with plain CUDA C,
// written the way llm.c's train_gpt2_fp32.cu is (issue 31): every tensor a
// slice of a few arenas allocated once, one fused kernel writing q, k and v
// (three slices) at once, read through three pointers by a permute, the
// loss read back each step, and at the end a validation loop of forward
// passes only.  The fused output is dead after the permute, so a plan
// evicts it with no rebuild; the first validation pass diverges where
// backward would begin, and the next forward writes it again: before issue
// 31 that write faulted (the three-output writer could not be replayed
// alone; then its first slice, reused by a later op, had to be kept
// around the replay).  Built with sim/bin/simnvcc.  Usage: attn1 [steps [val_steps]].
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "check.h"

#define N  128 /* rows of a batch */
#define C  128 /* width */
#define NC (N * C)

// qkv[p][i][j] = sum_t x[i][t] w[p][t][j] + b[p][j], p = 0, 1, 2
__global__ void qkv_forward(float *qkv, const float *x, const float *w, const float *b)
{
	int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N || j >= C)
		return;
	for (int p = 0; p < 3; p++) {
		float s = b[p * C + j];
		for (int t = 0; t < C; t++)
			s += x[i * C + t] * w[(p * C + t) * C + j];
		qkv[p * NC + i * C + j] = s;
	}
}

__global__ void permute(float *q, float *k, float *v, const float *iq, const float *ik,
                        const float *iv)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < NC) {
		q[i] = tanhf(iq[i]);
		k[i] = ik[i];
		v[i] = iv[i];
	}
}

// y = q k + v
__global__ void mix(float *y, const float *q, const float *k, const float *v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < NC)
		y[i] = q[i] * k[i] + v[i];
}

// u = tanh(y), into the first slice of qkv: dead after the permute, so its
// room is reused (llm.c reuses its activations' room the same way)
__global__ void act(float *u, const float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < NC)
		u[i] = tanhf(y[i]);
}

// pred[i] = sum_j u[i][j] h[j]; loss[i] = (pred[i] - t[i])^2
__global__ void head_loss(float *pred, float *loss, const float *u, const float *h, const float *t)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= N)
		return;
	float s = 0.0f;
	for (int j = 0; j < C; j++)
		s += u[i * C + j] * h[j];
	pred[i] = s;
	loss[i] = (s - t[i]) * (s - t[i]);
}

// dqkv from the loss; dh[j] = sum_i 2 (pred[i] - t[i]) u[i][j] / N
__global__ void backward_mix(float *dqkv, float *dh, const float *u, const float *pred,
                             const float *q, const float *k, const float *h, const float *t)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= C)
		return;
	float acc = 0.0f;
	for (int i = 0; i < N; i++) {
		float g = 2.0f * (pred[i] - t[i]) / N, uu = u[i * C + j];
		acc += g * uu;
		float dy = g * h[j] * (1.0f - uu * uu), qq = q[i * C + j];
		dqkv[i * C + j] = dy * k[i * C + j] * (1.0f - qq * qq);
		dqkv[NC + i * C + j] = dy * qq;
		dqkv[2 * NC + i * C + j] = dy;
	}
	dh[j] = acc;
}

// dw[p][t][j] = sum_i x[i][t] dqkv[p][i][j]; db[p][j] = sum_i dqkv[p][i][j]
__global__ void backward_w(float *dw, float *db, const float *x, const float *dqkv)
{
	int t = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= C || j >= C)
		return;
	for (int p = 0; p < 3; p++) {
		float s = 0.0f, sb = 0.0f;
		for (int i = 0; i < N; i++) {
			s += x[i * C + t] * dqkv[p * NC + i * C + j];
			sb += dqkv[p * NC + i * C + j];
		}
		dw[(p * C + t) * C + j] = s;
		if (t == 0)
			db[p * C + j] = sb;
	}
}

__global__ void sgd(float *p, const float *g, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] -= 0.01f * g[i];
}

static unsigned seed = 4321;
static float rnd(float scale)
{
	seed = seed * 1103515245u + 12345u;
	return ((float)((seed >> 8) % 2048) / 1024.0f - 1.0f) * scale;
}

// The arenas' slices, as llm.c lays its tensors out.
struct model {
	float *params, *w, *b, *h;   /* 3 C C, 3 C, C */
	float *grads, *dw, *db, *dh; /* the same layout */
	float *acts, *x, *qkv, *q, *k, *v, *y, *pred, *loss, *t;
	float *dqkv; /* the activation gradients' arena */
	size_t nparams;
};

static void forward(model &m, const float *hx, const float *ht, float *hloss)
{
	CK(cudaMemcpy(m.x, hx, NC * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(m.t, ht, N * sizeof(float), cudaMemcpyHostToDevice));
	qkv_forward<<<dim3(C / 16, N / 16), dim3(16, 16)>>>(m.qkv, m.x, m.w, m.b);
	permute<<<NC / 256, 256>>>(m.q, m.k, m.v, m.qkv, m.qkv + NC, m.qkv + 2 * NC);
	mix<<<NC / 256, 256>>>(m.y, m.q, m.k, m.v);
	act<<<NC / 256, 256>>>(m.qkv, m.y);
	head_loss<<<1, N>>>(m.pred, m.loss, m.qkv, m.h, m.t);
	CK(cudaMemcpy(hloss, m.loss, N * sizeof(float), cudaMemcpyDeviceToHost));
}

static void backward_update(model &m)
{
	backward_mix<<<1, C>>>(m.dqkv, m.dh, m.qkv, m.pred, m.q, m.k, m.h, m.t);
	backward_w<<<dim3(C / 16, C / 16), dim3(16, 16)>>>(m.dw, m.db, m.x, m.dqkv);
	sgd<<<((int)m.nparams + 255) / 256, 256>>>(m.params, m.grads, (int)m.nparams);
	CK(cudaGetLastError());
}

static double mean(const float *v)
{
	double s = 0.0;
	for (int i = 0; i < N; i++)
		s += v[i];
	return s / N;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 8, vsteps = argc > 2 ? atoi(argv[2]) : 3;
	model m;
	m.nparams = 3 * C * C + 3 * C + C;
	CK(cudaMalloc(&m.params, m.nparams * sizeof(float)));
	CK(cudaMalloc(&m.grads, m.nparams * sizeof(float)));
	CK(cudaMalloc(&m.acts, (9 * (size_t)NC + 3 * N) * sizeof(float)));
	CK(cudaMalloc(&m.dqkv, 3 * NC * sizeof(float)));
	m.w = m.params, m.b = m.w + 3 * C * C, m.h = m.b + 3 * C;
	m.dw = m.grads, m.db = m.dw + 3 * C * C, m.dh = m.db + 3 * C;
	m.x = m.acts, m.qkv = m.x + NC, m.q = m.qkv + 3 * NC, m.k = m.q + NC, m.v = m.k + NC;
	m.y = m.v + NC, m.pred = m.y + NC, m.loss = m.pred + N, m.t = m.loss + N;
	float *hp = (float *)malloc(m.nparams * sizeof(float));
	for (size_t i = 0; i < m.nparams; i++)
		hp[i] = rnd(0.1f);
	CK(cudaMemcpy(m.params, hp, m.nparams * sizeof(float), cudaMemcpyHostToDevice));
	static float hx[NC], ht[N], hl[N];
	for (int s = 0; s < steps + vsteps; s++) {
		for (int i = 0; i < NC; i++)
			hx[i] = rnd(1.0f);
		for (int i = 0; i < N; i++)
			ht[i] = rnd(1.0f);
		forward(m, hx, ht, hl);
		if (s < steps) {
			backward_update(m);
			printf("step %d loss %.6f\n", s, mean(hl));
		} else {
			printf("val %d loss %.6f\n", s - steps, mean(hl));
		}
	}
	CK(cudaMemcpy(hp, m.params, m.nparams * sizeof(float), cudaMemcpyDeviceToHost));
	unsigned long long sum = 1469598103934665603ull;
	for (size_t i = 0; i < m.nparams; i++) {
		unsigned u;
		memcpy(&u, &hp[i], 4);
		sum = (sum ^ u) * 1099511628211ull;
	}
	printf("params %016llx\n", sum);
	return 0;
}
