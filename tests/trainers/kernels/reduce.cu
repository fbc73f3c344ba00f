// reduce.cu — kernels that sum over rows or columns.  The trainers load this
// module with cuModuleLoad and launch through cuLaunchKernel (and a few
// through cuLaunchKernelEx).  Every sum runs in a fixed order, so results
// are the same bits on every run, on the simulator and on a GPU.

#include <cooperative_groups.h>

// Block-wide tree sum or max over s[0 .. blockDim.x) (a power of two);
// every thread gets the result.
__device__ float block_reduce(float *s, float v, int is_max)
{
	s[threadIdx.x] = v;
	__syncthreads();
	for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
		if (threadIdx.x < stride) {
			float o = s[threadIdx.x + stride];
			s[threadIdx.x] = is_max ? fmaxf(s[threadIdx.x], o) : s[threadIdx.x] + o;
		}
		__syncthreads();
	}
	float r = s[0];
	__syncthreads(); // s is reused by the next reduction
	return r;
}

// db[c] += sum over rows of dy[r][c]; one thread per column.
extern "C" __global__ void bias_grad(const float *dy, float *db, int rows, int cols)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= cols)
		return;
	float acc = 0.0f;
	for (int r = 0; r < rows; r++)
		acc += dy[r * cols + c];
	db[c] += acc;
}

// Batch norm over the rows, one thread per feature column.  Besides y it
// writes the batch statistics for backward and updates the running
// statistics IN PLACE, as PyTorch's BatchNorm does in training mode.
extern "C" __global__ void batchnorm_fwd(const float *x, float *y, const float *gamma,
                                         const float *beta, float *running_mean, float *running_var,
                                         float *save_mean, float *save_invstd, int rows, int cols,
                                         float momentum, float eps)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= cols)
		return;
	float sum = 0.0f;
	for (int r = 0; r < rows; r++)
		sum += x[r * cols + c];
	float mean = sum / rows;
	float sq = 0.0f;
	for (int r = 0; r < rows; r++) {
		float d = x[r * cols + c] - mean;
		sq += d * d;
	}
	float var = sq / rows;
	float invstd = 1.0f / sqrtf(var + eps);
	for (int r = 0; r < rows; r++)
		y[r * cols + c] = (x[r * cols + c] - mean) * invstd * gamma[c] + beta[c];
	float unbiased = rows > 1 ? sq / (rows - 1) : var;
	running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * mean;
	running_var[c] = (1.0f - momentum) * running_var[c] + momentum * unbiased;
	save_mean[c] = mean;
	save_invstd[c] = invstd;
}

extern "C" __global__ void batchnorm_bwd(const float *x, const float *dy, const float *gamma,
                                         const float *save_mean, const float *save_invstd,
                                         float *dx, float *dgamma, float *dbeta, int rows, int cols)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= cols)
		return;
	float mean = save_mean[c], invstd = save_invstd[c];
	float sdy = 0.0f, sdyx = 0.0f;
	for (int r = 0; r < rows; r++) {
		float g = dy[r * cols + c];
		sdy += g;
		sdyx += g * (x[r * cols + c] - mean) * invstd;
	}
	float k = gamma[c] * invstd / rows;
	for (int r = 0; r < rows; r++) {
		float xhat = (x[r * cols + c] - mean) * invstd;
		dx[r * cols + c] = k * (rows * dy[r * cols + c] - sdy - xhat * sdyx);
	}
	dgamma[c] += sdyx;
	dbeta[c] += sdy;
}

// Layer norm of each row; one block per row, blockDim.x a power of two,
// dynamic shared memory of blockDim.x floats.
extern "C" __global__ void layernorm_fwd(const float *x, const float *gamma, const float *beta,
                                         float *y, float *mean_out, float *rstd_out, int cols,
                                         float eps)
{
	extern __shared__ float scratch[];
	const float *xr = x + (long long)blockIdx.x * cols;
	float part = 0.0f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		part += xr[c];
	float mean = block_reduce(scratch, part, 0) / cols;
	part = 0.0f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x) {
		float d = xr[c] - mean;
		part += d * d;
	}
	float rstd = 1.0f / sqrtf(block_reduce(scratch, part, 0) / cols + eps);
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		y[(long long)blockIdx.x * cols + c] = (xr[c] - mean) * rstd * gamma[c] + beta[c];
	if (threadIdx.x == 0) {
		mean_out[blockIdx.x] = mean;
		rstd_out[blockIdx.x] = rstd;
	}
}

// The layer norm as one cooperative launch of any grid size (gpt
// --launch-attrs): every thread first computes the statistics of its rows,
// the whole grid waits for them (grid.sync(): a cooperative launch only),
// then every thread normalizes elements across the grid.
extern "C" __global__ void layernorm_fwd_coop(const float *x, const float *gamma, const float *beta,
                                              float *y, float *mean_out, float *rstd_out, int rows,
                                              int cols, float eps)
{
	cooperative_groups::grid_group grid = cooperative_groups::this_grid();
	for (long long r = grid.thread_rank(); r < rows; r += grid.size()) {
		const float *xr = x + r * cols;
		float s = 0.0f;
		for (int c = 0; c < cols; c++)
			s += xr[c];
		float mean = s / cols, v = 0.0f;
		for (int c = 0; c < cols; c++) {
			float d = xr[c] - mean;
			v += d * d;
		}
		mean_out[r] = mean;
		rstd_out[r] = 1.0f / sqrtf(v / cols + eps);
	}
	grid.sync();
	for (long long i = grid.thread_rank(); i < (long long)rows * cols; i += grid.size()) {
		long long r = i / cols;
		int c = (int)(i % cols);
		y[i] = (x[i] - mean_out[r]) * rstd_out[r] * gamma[c] + beta[c];
	}
}

// out = gelu(z + bias[col]) written for clusters of TRAINER_CLUSTER blocks
// (gpt --launch-attrs), as a Hopper kernel tiles its work: each cluster
// takes a tile of TRAINER_CLUSTER x blockDim elements, each block of it
// the slice of its rank.  The grid counts whole clusters.
#define TRAINER_CLUSTER 2
extern "C" __global__ void bias_gelu_fwd_cluster(const float *z, const float *bias, float *out,
                                                 int rows, int cols)
{
	cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
	long long tile = (long long)(blockIdx.x / TRAINER_CLUSTER) * TRAINER_CLUSTER * blockDim.x;
	long long i = tile + (long long)cluster.block_rank() * blockDim.x + threadIdx.x;
	if (i >= (long long)rows * cols)
		return;
	float v = z[i] + bias[i % cols];
	const float k = 0.7978845608f; // the GELU of elementwise.cu
	float u = k * (v + 0.044715f * v * v * v);
	out[i] = 0.5f * v * (1.0f + tanhf(u));
}

// dx += layer-norm backward of dy; one thread per row.
extern "C" __global__ void layernorm_bwd(const float *x, const float *dy, const float *gamma,
                                         const float *mean, const float *rstd, float *dx, int rows,
                                         int cols)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const float *xr = x + (long long)r * cols, *dyr = dy + (long long)r * cols;
	float mu = mean[r], rs = rstd[r];
	float s1 = 0.0f, s2 = 0.0f;
	for (int c = 0; c < cols; c++) {
		float g = dyr[c] * gamma[c];
		s1 += g;
		s2 += g * (xr[c] - mu) * rs;
	}
	s1 /= cols;
	s2 /= cols;
	for (int c = 0; c < cols; c++) {
		float xhat = (xr[c] - mu) * rs;
		dx[(long long)r * cols + c] += rs * (dyr[c] * gamma[c] - s1 - xhat * s2);
	}
}

// dgamma[c] += sum_r dy * xhat, dbeta[c] += sum_r dy; one thread per column.
extern "C" __global__ void layernorm_param_grad(const float *x, const float *dy, const float *mean,
                                                const float *rstd, float *dgamma, float *dbeta,
                                                int rows, int cols)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= cols)
		return;
	float sg = 0.0f, sb = 0.0f;
	for (int r = 0; r < rows; r++) {
		float g = dy[r * cols + c];
		sg += g * (x[r * cols + c] - mean[r]) * rstd[r];
		sb += g;
	}
	dgamma[c] += sg;
	dbeta[c] += sb;
}

// logp = log_softmax(logits) per row, row_loss[r] = -logp[label]; one block
// of 32 threads per row.
extern "C" __global__ void log_softmax_nll(const float *logits, const int *labels, float *logp,
                                           float *row_loss, int cols)
{
	__shared__ float scratch[32];
	long long base = (long long)blockIdx.x * cols;
	float m = -INFINITY;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		m = fmaxf(m, logits[base + c]);
	m = block_reduce(scratch, m, 1);
	float s = 0.0f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		s += expf(logits[base + c] - m);
	float lse = m + logf(block_reduce(scratch, s, 0));
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		logp[base + c] = logits[base + c] - lse;
	__syncthreads();
	if (threadIdx.x == 0)
		row_loss[blockIdx.x] = -logp[base + labels[blockIdx.x]];
}

// dlogits = (softmax - onehot(label)) * scale, from the saved log-probs.
extern "C" __global__ void nll_bwd(const float *logp, const int *labels, float *dlogits, int rows,
                                   int cols, float scale)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= rows * cols)
		return;
	int r = i / cols, c = i % cols;
	float p = expf(logp[i]);
	dlogits[i] = (p - (c == labels[r] ? 1.0f : 0.0f)) * scale;
}

// *loss += scale * sum(row_loss); a single thread keeps the order fixed.
extern "C" __global__ void loss_accumulate(const float *row_loss, float *loss, int rows,
                                           float scale)
{
	if (blockIdx.x != 0 || threadIdx.x != 0)
		return;
	float s = 0.0f;
	for (int r = 0; r < rows; r++)
		s += row_loss[r];
	*loss += s * scale;
}

// Causal softmax of each row of att [batch*heads][seq][seq]: column j > row
// t is masked.  One thread per row.
extern "C" __global__ void causal_softmax_fwd(const float *att, float *p, int rows, int seq)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	int t = r % seq;
	const float *a = att + (long long)r * seq;
	float *o = p + (long long)r * seq;
	float m = -INFINITY;
	for (int j = 0; j <= t; j++)
		m = fmaxf(m, a[j]);
	float s = 0.0f;
	for (int j = 0; j <= t; j++)
		s += expf(a[j] - m);
	for (int j = 0; j < seq; j++)
		o[j] = j <= t ? expf(a[j] - m) / s : 0.0f;
}

// datt = p * (dp - sum_j dp*p), per row.
extern "C" __global__ void causal_softmax_bwd(const float *p, const float *dp, float *datt,
                                              int rows, int seq)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= rows)
		return;
	const float *pr = p + (long long)r * seq, *dr = dp + (long long)r * seq;
	float dot = 0.0f;
	for (int j = 0; j < seq; j++)
		dot += pr[j] * dr[j];
	for (int j = 0; j < seq; j++)
		datt[(long long)r * seq + j] = pr[j] * (dr[j] - dot);
}

// dwte[v][c] += sum of dx over the rows whose token is v; dwpe[t][c] += sum
// over the batch.  One thread per (v or t, c), scanning the rows in order.
extern "C" __global__ void embed_bwd(const int *tokens, const float *dx, float *dwte, float *dwpe,
                                     int rows, int seq, int vocab, int dim)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < vocab * dim) {
		int v = i / dim, c = i % dim;
		float acc = 0.0f;
		for (int n = 0; n < rows; n++)
			if (tokens[n] == v)
				acc += dx[(long long)n * dim + c];
		dwte[i] += acc;
	} else if (i < (vocab + seq) * dim) {
		int j = i - vocab * dim, t = j / dim, c = j % dim;
		float acc = 0.0f;
		for (int n = t; n < rows; n += seq)
			acc += dx[(long long)n * dim + c];
		dwpe[j] += acc;
	}
}

#ifdef __SIMCUDA__
// Memory-bound: 2 us per launch plus a few hundredths of a ns per element
// read, from the arguments (one thread here may loop over a whole row or
// column, so the thread count says little).
SIMCUDA_COST(bias_grad)
{
	return 2000.0 + 0.02 * SIMCUDA_ARG(2) * SIMCUDA_ARG(3);
}
SIMCUDA_COST(batchnorm_fwd)
{
	return 2000.0 + 0.06 * SIMCUDA_ARG(8) * SIMCUDA_ARG(9);
}
SIMCUDA_COST(batchnorm_bwd)
{
	return 2000.0 + 0.06 * SIMCUDA_ARG(8) * SIMCUDA_ARG(9);
}
SIMCUDA_COST(layernorm_fwd)
{
	return 2000.0 + 0.04 * grid.x * SIMCUDA_ARG(6);
}
SIMCUDA_COST(layernorm_bwd)
{
	return 2000.0 + 0.05 * SIMCUDA_ARG(6) * SIMCUDA_ARG(7);
}
SIMCUDA_COST(layernorm_param_grad)
{
	return 2000.0 + 0.04 * SIMCUDA_ARG(6) * SIMCUDA_ARG(7);
}
SIMCUDA_COST(log_softmax_nll)
{
	return 2000.0 + 0.04 * grid.x * SIMCUDA_ARG(4);
}
SIMCUDA_COST(nll_bwd)
{
	return 2000.0 + 0.02 * SIMCUDA_ARG(3) * SIMCUDA_ARG(4);
}
SIMCUDA_COST(loss_accumulate)
{
	return 2000.0 + 0.02 * SIMCUDA_ARG(2);
}
SIMCUDA_COST(causal_softmax_fwd)
{
	return 2000.0 + 0.04 * SIMCUDA_ARG(2) * SIMCUDA_ARG(3);
}
SIMCUDA_COST(causal_softmax_bwd)
{
	return 2000.0 + 0.04 * SIMCUDA_ARG(3) * SIMCUDA_ARG(4);
}
// A scatter-add of every row into its embedding rows.
SIMCUDA_COST(embed_bwd)
{
	return 2000.0 + 0.04 * SIMCUDA_ARG(4) * SIMCUDA_ARG(7);
}
// The device profiles price the same kernels by the bytes they move (every
// one of them is memory-bound): each element read or written once, a
// normalization reading its input twice.
#define SIMCUDA_BYTES(k, n)                                                                        \
	SIMCUDA_WORK(k)                                                                            \
	{                                                                                          \
		return {0.0, (double)(n), SIMCUDA_MATH_FP32, 0.0};                                 \
	}
SIMCUDA_BYTES(bias_grad, 4.0 * SIMCUDA_ARG(2) * SIMCUDA_ARG(3))
SIMCUDA_BYTES(batchnorm_fwd, 12.0 * SIMCUDA_ARG(8) * SIMCUDA_ARG(9))
SIMCUDA_BYTES(batchnorm_bwd, 16.0 * SIMCUDA_ARG(8) * SIMCUDA_ARG(9))
SIMCUDA_BYTES(layernorm_fwd, 12.0 * grid.x * SIMCUDA_ARG(6))
SIMCUDA_BYTES(layernorm_bwd, 12.0 * SIMCUDA_ARG(6) * SIMCUDA_ARG(7))
SIMCUDA_BYTES(layernorm_param_grad, 8.0 * SIMCUDA_ARG(6) * SIMCUDA_ARG(7))
SIMCUDA_BYTES(log_softmax_nll, 8.0 * grid.x * SIMCUDA_ARG(4))
SIMCUDA_BYTES(nll_bwd, 8.0 * SIMCUDA_ARG(3) * SIMCUDA_ARG(4))
SIMCUDA_BYTES(loss_accumulate, 4.0 * SIMCUDA_ARG(2))
SIMCUDA_BYTES(causal_softmax_fwd, 8.0 * SIMCUDA_ARG(2) * SIMCUDA_ARG(3))
SIMCUDA_BYTES(causal_softmax_bwd, 12.0 * SIMCUDA_ARG(3) * SIMCUDA_ARG(4))
SIMCUDA_BYTES(embed_bwd, 8.0 * SIMCUDA_ARG(4) * SIMCUDA_ARG(7))
#endif
