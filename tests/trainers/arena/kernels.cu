// kernels.cu — the arena trainer's kernels and their launchers.  Rows of
// layer norm and softmax belong to one warp each and reduce with warp
// shuffles (softmax, the bias and parameter gradients) or cooperative
// groups (layer norm, the mean loss); the classifier's cross-entropy uses a
// whole block per row.  Every sum runs in a fixed order (no atomics), so
// results are the same bits on every run.
#include <math.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "arena.h"

namespace cg = cooperative_groups;

#define FULL_MASK 0xffffffffu

static unsigned blocks_for(long long n, int block)
{
	return (unsigned)((n + block - 1) / block);
}

// Every launcher checks its launch, as llm.c's cudaCheck(cudaGetLastError()).
#define LAUNCHED() CUDA_CHECK(cudaGetLastError())

__device__ float warp_sum(float v)
{
	for (int offset = 16; offset > 0; offset >>= 1)
		v += __shfl_xor_sync(FULL_MASK, v, offset);
	return v;
}

__device__ float warp_max(float v)
{
	for (int offset = 16; offset > 0; offset >>= 1)
		v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
	return v;
}

// ---- embeddings -------------------------------------------------------------

__global__ void encoder_forward_kernel(float *out, const int *tokens, const float *wte,
                                       const float *wpe, int B, int T, int C)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)B * T * C)
		return;
	int c = (int)(i % C), bt = (int)(i / C), t = bt % T;
	out[i] = wte[(long long)tokens[bt] * C + c] + wpe[(long long)t * C + c];
}

void encoder_forward(float *out, const int *tokens, const float *wte, const float *wpe, int B,
                     int T, int C)
{
	encoder_forward_kernel<<<blocks_for((long long)B * T * C, 256), 256>>>(out, tokens, wte,
	                                                                       wpe, B, T, C);
	LAUNCHED();
}

// One thread per (token, channel): the rows of the batch holding that
// token, summed in order.
__global__ void wte_backward_kernel(float *dwte, const float *dout, const int *tokens, int BT,
                                    int C, int V)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)V * C)
		return;
	int c = (int)(i % C), v = (int)(i / C);
	float acc = 0.0f;
	for (int bt = 0; bt < BT; bt++)
		if (tokens[bt] == v)
			acc += dout[(long long)bt * C + c];
	dwte[i] += acc;
}

__global__ void wpe_backward_kernel(float *dwpe, const float *dout, int B, int T, int C)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= T * C)
		return;
	float acc = 0.0f;
	for (int b = 0; b < B; b++)
		acc += dout[(long long)b * T * C + i];
	dwpe[i] += acc;
}

void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *tokens, int B, int T,
                      int C, int V)
{
	wte_backward_kernel<<<blocks_for((long long)V * C, 256), 256>>>(dwte, dout, tokens, B * T,
	                                                                C, V);
	LAUNCHED();
	wpe_backward_kernel<<<blocks_for((long long)T * C, 256), 256>>>(dwpe, dout, B, T, C);
	LAUNCHED();
}

// ---- layer norm: one warp per row ---------------------------------------------

__global__ void layernorm_forward_kernel(float *out, float *mean, float *rstd, const float *inp,
                                         const float *w, const float *b, int N, int C)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
	if (row >= N)
		return;
	const float *x = inp + (long long)row * C;
	float sum = 0.0f;
	for (int c = warp.thread_rank(); c < C; c += warp.size())
		sum += x[c];
	float m = cg::reduce(warp, sum, cg::plus<float>()) / C;
	float sq = 0.0f;
	for (int c = warp.thread_rank(); c < C; c += warp.size())
		sq += (x[c] - m) * (x[c] - m);
	float s = rsqrtf(cg::reduce(warp, sq, cg::plus<float>()) / C + 1e-5f);
	float *o = out + (long long)row * C;
	for (int c = warp.thread_rank(); c < C; c += warp.size())
		o[c] = (x[c] - m) * s * w[c] + b[c];
	if (warp.thread_rank() == 0) {
		mean[row] = m;
		rstd[row] = s;
	}
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                       const float *b, int N, int C)
{
	layernorm_forward_kernel<<<blocks_for(N, 4), 128>>>(out, mean, rstd, inp, w, b, N, C);
	LAUNCHED();
}

// dinp += (dnorm - mean(dnorm) - norm * mean(dnorm * norm)) * rstd, with
// dnorm = dout * w; one warp per row.
__global__ void layernorm_dinp_kernel(float *dinp, const float *dout, const float *inp,
                                      const float *w, const float *mean, const float *rstd, int N,
                                      int C)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
	if (row >= N)
		return;
	const float *x = inp + (long long)row * C, *dy = dout + (long long)row * C;
	float m = mean[row], s = rstd[row], dsum = 0.0f, dnsum = 0.0f;
	for (int c = warp.thread_rank(); c < C; c += warp.size()) {
		float norm = (x[c] - m) * s, dnorm = dy[c] * w[c];
		dsum += dnorm;
		dnsum += dnorm * norm;
	}
	dsum = cg::reduce(warp, dsum, cg::plus<float>()) / C;
	dnsum = cg::reduce(warp, dnsum, cg::plus<float>()) / C;
	float *dx = dinp + (long long)row * C;
	for (int c = warp.thread_rank(); c < C; c += warp.size()) {
		float norm = (x[c] - m) * s, dnorm = dy[c] * w[c];
		dx[c] += (dnorm - dsum - norm * dnsum) * s;
	}
}

// dw[c] += sum over rows of dout * norm, db[c] += sum of dout: one warp per
// channel, the rows split among the lanes and summed down to lane 0.
__global__ void layernorm_params_kernel(float *dw, float *db, const float *dout, const float *inp,
                                        const float *mean, const float *rstd, int N, int C)
{
	int c = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (c >= C)
		return;
	float gw = 0.0f, gb = 0.0f;
	for (int row = lane; row < N; row += 32) {
		float dy = dout[(long long)row * C + c];
		gw += dy * (inp[(long long)row * C + c] - mean[row]) * rstd[row];
		gb += dy;
	}
	for (int offset = 16; offset > 0; offset >>= 1) {
		gw += __shfl_down_sync(FULL_MASK, gw, offset);
		gb += __shfl_down_sync(FULL_MASK, gb, offset);
	}
	if (lane == 0) {
		dw[c] += gw;
		db[c] += gb;
	}
}

void layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                        const float *w, const float *mean, const float *rstd, int N, int C)
{
	layernorm_dinp_kernel<<<blocks_for(N, 4), 128>>>(dinp, dout, inp, w, mean, rstd, N, C);
	LAUNCHED();
	layernorm_params_kernel<<<blocks_for(C, 4), 128>>>(dw, db, dout, inp, mean, rstd, N, C);
	LAUNCHED();
}

// ---- biases, residuals, GELU ----------------------------------------------------

__global__ void add_bias_kernel(float *out, const float *bias, int N, int OC)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < (long long)N * OC)
		out[i] += bias[i % OC];
}

void add_bias(float *out, const float *bias, int N, int OC)
{
	add_bias_kernel<<<blocks_for((long long)N * OC, 256), 256>>>(out, bias, N, OC);
	LAUNCHED();
}

// dbias[o] += sum over rows of dout[row][o]: one warp per column.
__global__ void bias_backward_kernel(float *dbias, const float *dout, int N, int OC)
{
	int o = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (o >= OC)
		return;
	float acc = 0.0f;
	for (int row = lane; row < N; row += 32)
		acc += dout[(long long)row * OC + o];
	acc = warp_sum(acc);
	if (lane == 0)
		dbias[o] += acc;
}

void bias_backward(float *dbias, const float *dout, int N, int OC)
{
	bias_backward_kernel<<<blocks_for(OC, 4), 128>>>(dbias, dout, N, OC);
	LAUNCHED();
}

__global__ void residual_kernel(float *out, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = a[i] + b[i];
}

void residual_forward(float *out, const float *a, const float *b, int n)
{
	residual_kernel<<<blocks_for(n, 256), 256>>>(out, a, b, n);
	LAUNCHED();
}

#define GELU_SCALE 0.7978845608f // sqrt(2 / pi)

__global__ void gelu_forward_kernel(float *out, const float *inp, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float x = inp[i];
	out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALE * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_backward_kernel(float *dinp, const float *inp, const float *dout, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float x = inp[i], u = GELU_SCALE * (x + 0.044715f * x * x * x), th = tanhf(u);
	float du = GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
	dinp[i] = dout[i] * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du);
}

void gelu_forward(float *out, const float *inp, int n)
{
	gelu_forward_kernel<<<blocks_for(n, 256), 256>>>(out, inp, n);
	LAUNCHED();
}

void gelu_backward(float *dinp, const float *inp, const float *dout, int n)
{
	gelu_backward_kernel<<<blocks_for(n, 256), 256>>>(dinp, inp, dout, n);
	LAUNCHED();
}

// ---- attention: heads apart and together ---------------------------------------

// qkv (B, T, 3, NH, HS) <-> q, k, v (B, NH, T, HS); `back` goes the other way.
__global__ void qkv_kernel(float *q, float *k, float *v, float *qkv, int B, int T, int NH, int HS,
                           int back)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)B * NH * T * HS)
		return;
	int d = (int)(i % HS), t = (int)(i / HS % T), h = (int)(i / ((long long)HS * T) % NH);
	long long b = i / ((long long)HS * T * NH), C = (long long)NH * HS;
	float *row = qkv + (b * T + t) * 3 * C + (long long)h * HS + d;
	if (back) {
		row[0] = q[i];
		row[C] = k[i];
		row[2 * C] = v[i];
	} else {
		q[i] = row[0];
		k[i] = row[C];
		v[i] = row[2 * C];
	}
}

void qkv_split(float *q, float *k, float *v, const float *qkv, int B, int T, int NH, int HS)
{
	qkv_kernel<<<blocks_for((long long)B * T * NH * HS, 256), 256>>>(q, k, v, (float *)qkv, B,
	                                                                 T, NH, HS, 0);
	LAUNCHED();
}

void qkv_join(float *dqkv, const float *dq, const float *dk, const float *dv, int B, int T, int NH,
              int HS)
{
	qkv_kernel<<<blocks_for((long long)B * T * NH * HS, 256), 256>>>(
	    (float *)dq, (float *)dk, (float *)dv, dqkv, B, T, NH, HS, 1);
	LAUNCHED();
}

// y (B, NH, T, HS) <-> out (B, T, NH * HS).
__global__ void heads_kernel(float *out, float *y, int B, int T, int NH, int HS, int back)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (long long)B * NH * T * HS)
		return;
	int d = (int)(i % HS), t = (int)(i / HS % T), h = (int)(i / ((long long)HS * T) % NH);
	long long b = i / ((long long)HS * T * NH);
	long long o = (b * T + t) * NH * HS + (long long)h * HS + d;
	if (back)
		y[i] = out[o];
	else
		out[o] = y[i];
}

void heads_join(float *out, const float *y, int B, int T, int NH, int HS)
{
	heads_kernel<<<blocks_for((long long)B * T * NH * HS, 256), 256>>>(out, (float *)y, B, T,
	                                                                   NH, HS, 0);
	LAUNCHED();
}

void heads_split(float *dy, const float *dout, int B, int T, int NH, int HS)
{
	heads_kernel<<<blocks_for((long long)B * T * NH * HS, 256), 256>>>((float *)dout, dy, B, T,
	                                                                   NH, HS, 1);
	LAUNCHED();
}

// ---- causal softmax: one warp per row, warp shuffles --------------------------

// Row r is query position t = r % T: keys 0..t are seen, the rest get 0
// (written, so that the next matmul reads defined values).
__global__ void softmax_forward_kernel(float *att, const float *preatt, float scale, int rows,
                                       int T)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= rows)
		return;
	int t = row % T;
	const float *x = preatt + (long long)row * T;
	float mx = -INFINITY;
	for (int j = lane; j <= t; j += 32)
		mx = fmaxf(mx, scale * x[j]);
	mx = warp_max(mx);
	float sum = 0.0f;
	for (int j = lane; j <= t; j += 32)
		sum += expf(scale * x[j] - mx);
	sum = warp_sum(sum);
	float *y = att + (long long)row * T;
	for (int j = lane; j < T; j += 32)
		y[j] = j <= t ? expf(scale * x[j] - mx) / sum : 0.0f;
}

__global__ void softmax_backward_kernel(float *dpreatt, const float *datt, const float *att,
                                        float scale, int rows, int T)
{
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
	if (row >= rows)
		return;
	int t = row % T;
	const float *p = att + (long long)row * T, *dp = datt + (long long)row * T;
	float dot = 0.0f;
	for (int j = lane; j <= t; j += 32)
		dot += p[j] * dp[j];
	dot = warp_sum(dot);
	float *dx = dpreatt + (long long)row * T;
	for (int j = lane; j < T; j += 32)
		dx[j] = j <= t ? scale * p[j] * (dp[j] - dot) : 0.0f;
}

void softmax_causal_forward(float *att, const float *preatt, float scale, int rows, int T)
{
	softmax_forward_kernel<<<blocks_for(rows, 4), 128>>>(att, preatt, scale, rows, T);
	LAUNCHED();
}

void softmax_causal_backward(float *dpreatt, const float *datt, const float *att, float scale,
                             int rows, int T)
{
	softmax_backward_kernel<<<blocks_for(rows, 4), 128>>>(dpreatt, datt, att, scale, rows, T);
	LAUNCHED();
}

// ---- the classifier's cross-entropy: one block per row ---------------------------

// Max or sum over the block: each warp by shuffles, then the warps' results
// through shared memory by warp 0.
__device__ float block_reduce(float v, int want_max)
{
	__shared__ float partial[32];
	int lane = threadIdx.x % 32, w = threadIdx.x / 32, nwarps = blockDim.x / 32;
	v = want_max ? warp_max(v) : warp_sum(v);
	if (lane == 0)
		partial[w] = v;
	__syncthreads();
	float identity = want_max ? -INFINITY : 0.0f;
	v = lane < nwarps ? partial[lane] : identity;
	v = want_max ? warp_max(v) : warp_sum(v);
	__syncthreads(); // partial is reused by the next reduction
	return v;
}

// losses[n] = -log softmax(logits[n])[target]; logits[n] becomes the
// gradient of the mean loss, (softmax - onehot) / N.
__global__ void crossentropy_kernel(float *logits, float *losses, const int *targets, int N, int V)
{
	int n = blockIdx.x;
	float *x = logits + (long long)n * V;
	float mx = -INFINITY;
	for (int v = threadIdx.x; v < V; v += blockDim.x)
		mx = fmaxf(mx, x[v]);
	mx = block_reduce(mx, 1);
	float sum = 0.0f;
	for (int v = threadIdx.x; v < V; v += blockDim.x)
		sum += expf(x[v] - mx);
	sum = block_reduce(sum, 0);
	int target = targets[n];
	float target_logit = x[target]; // read before any thread overwrites it
	__syncthreads();
	if (threadIdx.x == 0)
		losses[n] = logf(sum) + mx - target_logit;
	for (int v = threadIdx.x; v < V; v += blockDim.x)
		x[v] = (expf(x[v] - mx) / sum - (v == target ? 1.0f : 0.0f)) / N;
}

void crossentropy_fused(float *logits, float *losses, const int *targets, int N, int V)
{
	crossentropy_kernel<<<N, 128>>>(logits, losses, targets, N, V);
	LAUNCHED();
}

// The mean of the losses by one block: warp tiles reduce, warp 0 joins them.
__global__ void mean_loss_kernel(float *loss, const float *losses, int N)
{
	__shared__ float partial[32];
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	float acc = 0.0f;
	for (int n = block.thread_rank(); n < N; n += block.size())
		acc += losses[n];
	acc = cg::reduce(warp, acc, cg::plus<float>());
	if (warp.thread_rank() == 0)
		partial[warp.meta_group_rank()] = acc;
	block.sync();
	if (warp.meta_group_rank() == 0) {
		acc = warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()]
		                                                  : 0.0f;
		acc = cg::reduce(warp, acc, cg::plus<float>());
		if (warp.thread_rank() == 0)
			*loss = acc / N;
	}
}

void mean_loss(float *loss, const float *losses, int N)
{
	mean_loss_kernel<<<1, 256>>>(loss, losses, N);
	LAUNCHED();
}

// ---- AdamW over the whole parameter arena ---------------------------------------

__global__ void adamw_kernel(float *params, const float *grads, float *m, float *v, size_t n,
                             float lr, float beta1, float beta2, float eps, float weight_decay,
                             float correction1, float correction2)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float g = grads[i];
	float mi = beta1 * m[i] + (1.0f - beta1) * g;
	float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
	m[i] = mi;
	v[i] = vi;
	float mhat = mi / correction1, vhat = vi / correction2;
	params[i] -= lr * (mhat / (sqrtf(vhat) + eps) + weight_decay * params[i]);
}

void adamw(float *params, const float *grads, float *m, float *v, size_t n, float lr, float beta1,
           float beta2, float eps, float weight_decay, int step)
{
	float c1 = 1.0f - powf(beta1, (float)step), c2 = 1.0f - powf(beta2, (float)step);
	adamw_kernel<<<blocks_for((long long)n, 256), 256>>>(params, grads, m, v, n, lr, beta1,
	                                                     beta2, eps, weight_decay, c1, c2);
	LAUNCHED();
}

#ifdef __SIMCUDA__
// Memory-bound kernels: 2 us plus a few hundredths of a ns per thread, as
// the other trainers' (docs/kernels.md); cuBLAS's GEMMs dominate.
SIMCUDA_DEFAULT_COST
{
	return 2000.0 + 0.02 * grid.x * grid.y * grid.z * block.x * block.y * block.z;
}
#endif
