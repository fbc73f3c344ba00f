// model.cu — the transformer's forward and backward passes over the arenas:
// token and position embedding; per layer a pre-norm causal self-attention
// (cuBLAS strided batched GEMMs for the scores and the weighted sum) and a
// GELU MLP, each added to the residual stream; a final layer norm, the wide
// classifier and a fused cross-entropy.  Matmuls are row-major on
// column-major cuBLAS: out (N x OC) = inp (N x C) W^T (W stored OC x C).
#include <math.h>
#include "arena.h"

static const float one = 1.0f, zero = 0.0f;

// Tensor `which` of layer l in an arena set whose per-layer tensors hold
// all layers one after another.
static float *layer(float *base, size_t per_layer, int l)
{
	return base + per_layer * (size_t)l;
}

static void matmul_forward(model &m, float *out, const float *inp, const float *w,
                           const float *bias, int N, int C, int OC)
{
	CUBLAS_CHECK(cublasSgemm(m.blas, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, C, &one, w, C, inp, C,
	                         &zero, out, OC));
	if (bias)
		add_bias(out, bias, N, OC);
}

// dinp = dout W; dW += dout^T inp; dbias += column sums of dout.
static void matmul_backward(model &m, float *dinp, float *dw, float *dbias, const float *dout,
                            const float *inp, const float *w, int N, int C, int OC)
{
	CUBLAS_CHECK(cublasSgemm(m.blas, CUBLAS_OP_N, CUBLAS_OP_N, C, N, OC, &one, w, C, dout, OC,
	                         &zero, dinp, C));
	CUBLAS_CHECK(cublasSgemm(m.blas, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, N, &one, inp, C, dout, OC,
	                         &one, dw, C));
	if (dbias)
		bias_backward(dbias, dout, N, OC);
}

struct attention {
	float *q, *k, *v, *preatt, *att, *y;
	int B, T, NH, HS;
};

// y = softmax(q k^T / sqrt(HS), causal) v for every (batch, head).
static void attention_forward(model &m, const attention &a, float *out, const float *qkv)
{
	int T = a.T, HS = a.HS, BH = a.B * a.NH;
	long long sq = (long long)T * HS, ss = (long long)T * T;
	qkv_split(a.q, a.k, a.v, qkv, a.B, T, a.NH, HS);
	CUBLAS_CHECK(cublasSgemmStridedBatched(m.blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, &one,
	                                       a.k, HS, sq, a.q, HS, sq, &zero, a.preatt, T, ss,
	                                       BH));
	softmax_causal_forward(a.att, a.preatt, 1.0f / sqrtf((float)HS), BH * T, T);
	CUBLAS_CHECK(cublasSgemmStridedBatched(m.blas, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, &one,
	                                       a.v, HS, sq, a.att, T, ss, &zero, a.y, HS, sq, BH));
	heads_join(out, a.y, a.B, T, a.NH, HS);
}

static void attention_backward(model &m, const attention &a, float *dqkv, const float *dout)
{
	int T = a.T, HS = a.HS, BH = a.B * a.NH;
	long long sq = (long long)T * HS, ss = (long long)T * T;
	float **g = m.grad_acts;
	heads_split(g[G_Y], dout, a.B, T, a.NH, HS);
	// datt = dy v^T, dv = att^T dy
	CUBLAS_CHECK(cublasSgemmStridedBatched(m.blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, &one,
	                                       a.v, HS, sq, g[G_Y], HS, sq, &zero, g[G_ATT], T, ss,
	                                       BH));
	CUBLAS_CHECK(cublasSgemmStridedBatched(m.blas, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, &one,
	                                       g[G_Y], HS, sq, a.att, T, ss, &zero, g[G_V], HS, sq,
	                                       BH));
	softmax_causal_backward(g[G_PREATT], g[G_ATT], a.att, 1.0f / sqrtf((float)HS), BH * T, T);
	// dq = dpreatt k, dk = dpreatt^T q
	CUBLAS_CHECK(cublasSgemmStridedBatched(m.blas, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, &one,
	                                       a.k, HS, sq, g[G_PREATT], T, ss, &zero, g[G_Q], HS,
	                                       sq, BH));
	CUBLAS_CHECK(cublasSgemmStridedBatched(m.blas, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, &one,
	                                       a.q, HS, sq, g[G_PREATT], T, ss, &zero, g[G_K], HS,
	                                       sq, BH));
	qkv_join(dqkv, g[G_Q], g[G_K], g[G_V], a.B, T, a.NH, HS);
}

// Layer l's view of the attention activations (the forward pass writes the
// per-head output to scratch: nothing after the join needs it).
static attention attention_of(model &m, int l)
{
	const config &c = m.cfg;
	size_t heads = (size_t)c.B * c.T * c.C, scores = (size_t)c.B * c.NH * c.T * c.T;
	attention a;
	a.q = layer(m.acts[A_Q], heads, l);
	a.k = layer(m.acts[A_K], heads, l);
	a.v = layer(m.acts[A_V], heads, l);
	a.preatt = layer(m.acts[A_PREATT], scores, l);
	a.att = layer(m.acts[A_ATT], scores, l);
	a.y = m.grad_acts[G_Y];
	a.B = c.B;
	a.T = c.T;
	a.NH = c.NH;
	a.HS = c.C / c.NH;
	return a;
}

void model_forward(model &m)
{
	const config &c = m.cfg;
	int N = c.B * c.T, C = c.C;
	size_t nc = (size_t)N * C;
	float **p = m.params, **a = m.acts;
	encoder_forward(a[A_ENCODED], m.tokens, p[P_WTE], p[P_WPE], c.B, c.T, C);
	for (int l = 0; l < c.L; l++) {
		const float *residual = l ? layer(a[A_RES3], nc, l - 1) : a[A_ENCODED];
		float *ln1 = layer(a[A_LN1], nc, l), *ln2 = layer(a[A_LN2], nc, l);
		float *res2 = layer(a[A_RES2], nc, l), *atty = layer(a[A_ATTY], nc, l);
		float *fch = layer(a[A_FCH], 4 * nc, l), *gelu = layer(a[A_FCH_GELU], 4 * nc, l);
		layernorm_forward(ln1, layer(a[A_LN1_MEAN], N, l), layer(a[A_LN1_RSTD], N, l),
		                  residual, layer(p[P_LN1W], C, l), layer(p[P_LN1B], C, l), N, C);
		float *qkv = layer(a[A_QKV], 3 * nc, l);
		matmul_forward(m, qkv, ln1, layer(p[P_QKVW], 3 * (size_t)C * C, l),
		               layer(p[P_QKVB], 3 * (size_t)C, l), N, C, 3 * C);
		attention_forward(m, attention_of(m, l), atty, qkv);
		float *proj = layer(a[A_ATTPROJ], nc, l);
		matmul_forward(m, proj, atty, layer(p[P_PROJW], (size_t)C * C, l),
		               layer(p[P_PROJB], C, l), N, C, C);
		residual_forward(res2, residual, proj, (int)nc);
		layernorm_forward(ln2, layer(a[A_LN2_MEAN], N, l), layer(a[A_LN2_RSTD], N, l), res2,
		                  layer(p[P_LN2W], C, l), layer(p[P_LN2B], C, l), N, C);
		matmul_forward(m, fch, ln2, layer(p[P_FCW], 4 * (size_t)C * C, l),
		               layer(p[P_FCB], 4 * (size_t)C, l), N, C, 4 * C);
		gelu_forward(gelu, fch, 4 * (int)nc);
		float *fcproj = layer(a[A_FCPROJ], nc, l);
		matmul_forward(m, fcproj, gelu, layer(p[P_FCPROJW], 4 * (size_t)C * C, l),
		               layer(p[P_FCPROJB], C, l), N, 4 * C, C);
		residual_forward(layer(a[A_RES3], nc, l), res2, fcproj, (int)nc);
	}
	layernorm_forward(a[A_LNF], a[A_LNF_MEAN], a[A_LNF_RSTD], layer(a[A_RES3], nc, c.L - 1),
	                  p[P_LNFW], p[P_LNFB], N, C);
	matmul_forward(m, a[A_LOGITS], a[A_LNF], p[P_HEAD], NULL, N, C, c.V);
	crossentropy_fused(a[A_LOGITS], a[A_LOSSES], m.targets, N, c.V);
	mean_loss(a[A_LOSS], a[A_LOSSES], N);
}

// The scratch arena must be zero: the residual stream's gradient (G_RES)
// is accumulated into.
void model_backward(model &m)
{
	const config &c = m.cfg;
	int N = c.B * c.T, C = c.C;
	size_t nc = (size_t)N * C;
	float **p = m.params, **d = m.grads, **a = m.acts, **g = m.grad_acts;
	matmul_backward(m, g[G_LN], d[P_HEAD], NULL, a[A_LOGITS], a[A_LNF], p[P_HEAD], N, C, c.V);
	layernorm_backward(g[G_RES], d[P_LNFW], d[P_LNFB], g[G_LN], layer(a[A_RES3], nc, c.L - 1),
	                   p[P_LNFW], a[A_LNF_MEAN], a[A_LNF_RSTD], N, C);
	for (int l = c.L - 1; l >= 0; l--) {
		const float *residual = l ? layer(a[A_RES3], nc, l - 1) : a[A_ENCODED];
		// G_RES is the gradient of res3 = res2 + fcproj(gelu(fc(ln2(res2)))).
		matmul_backward(m, g[G_FCH2], layer(d[P_FCPROJW], 4 * (size_t)C * C, l),
		                layer(d[P_FCPROJB], C, l), g[G_RES],
		                layer(a[A_FCH_GELU], 4 * nc, l),
		                layer(p[P_FCPROJW], 4 * (size_t)C * C, l), N, 4 * C, C);
		gelu_backward(g[G_FCH], layer(a[A_FCH], 4 * nc, l), g[G_FCH2], 4 * (int)nc);
		matmul_backward(m, g[G_LN], layer(d[P_FCW], 4 * (size_t)C * C, l),
		                layer(d[P_FCB], 4 * (size_t)C, l), g[G_FCH], layer(a[A_LN2], nc, l),
		                layer(p[P_FCW], 4 * (size_t)C * C, l), N, C, 4 * C);
		layernorm_backward(g[G_RES], layer(d[P_LN2W], C, l), layer(d[P_LN2B], C, l),
		                   g[G_LN], layer(a[A_RES2], nc, l), layer(p[P_LN2W], C, l),
		                   layer(a[A_LN2_MEAN], N, l), layer(a[A_LN2_RSTD], N, l), N, C);
		// Now the gradient of res2 = residual + proj(attention(ln1(residual))).
		matmul_backward(m, g[G_ATTY], layer(d[P_PROJW], (size_t)C * C, l),
		                layer(d[P_PROJB], C, l), g[G_RES], layer(a[A_ATTY], nc, l),
		                layer(p[P_PROJW], (size_t)C * C, l), N, C, C);
		attention_backward(m, attention_of(m, l), g[G_QKV], g[G_ATTY]);
		matmul_backward(m, g[G_LN], layer(d[P_QKVW], 3 * (size_t)C * C, l),
		                layer(d[P_QKVB], 3 * (size_t)C, l), g[G_QKV],
		                layer(a[A_LN1], nc, l), layer(p[P_QKVW], 3 * (size_t)C * C, l), N,
		                C, 3 * C);
		layernorm_backward(g[G_RES], layer(d[P_LN1W], C, l), layer(d[P_LN1B], C, l),
		                   g[G_LN], residual, layer(p[P_LN1W], C, l),
		                   layer(a[A_LN1_MEAN], N, l), layer(a[A_LN1_RSTD], N, l), N, C);
	}
	encoder_backward(d[P_WTE], d[P_WPE], g[G_RES], m.tokens, c.B, c.T, C, c.V);
}
