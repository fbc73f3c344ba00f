/*
 * gpt — trains a small decoder-only transformer on the (simulated) GPU:
 * token + position embedding, pre-norm blocks (layer norm, causal
 * multi-head attention from batched gemms, GELU MLP, residual adds), a
 * final layer norm and a vocabulary head with log-softmax + NLL, AdamW.
 * Every saved activation is a tensor of its own (a cudaMallocAsync
 * allocation, or a block of the program's pool with --alloc caching|vmm),
 * freed once backward has used it; forward temporaries (attention
 * scores before softmax, gemm outputs joined into the residual) are freed
 * in forward, as a framework's allocator would.  The token stream follows
 * a fixed rule with some noise, so the loss really falls.
 *
 * --graphs runs the transformer blocks the way torch.compile's
 * reduce-overhead mode runs a compiled region: eagerly once (warm-up),
 * then their forward and their backward are each captured once as a CUDA
 * graph and replayed; what they allocate inside becomes graph memory, and
 * their inputs are copied into static buffers first.  The embedding, the
 * head and the optimizer stay eager.
 *
 * --launch-attrs launches the MLP's GELU with a cluster of two blocks
 * (cuLaunchKernelEx) and every layer norm as one cooperative grid
 * (cuLaunchCooperativeKernel, grid.sync() between statistics and
 * normalization).
 * See tests/trainers/README.md.
 */
#include "trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *trainer_prog = "gpt";

#ifndef TRAINER_KERNELS_DIR
#define TRAINER_KERNELS_DIR "build/kernels"
#endif

#define MAX_LAYERS 32
#define LN_EPS     1e-5f
#define LN_THREADS 32

static struct {
	struct kernel embed, qkv_split, qkv_merge, permute, residual, bias_gelu_fwd, bias_gelu_bwd,
	    ln_fwd, ln_bwd, ln_grad, bias_grad, lsm_nll, nll_bwd, loss_acc, smax_fwd, smax_bwd,
	    embed_bwd, adam;
	struct kernel gelu_cluster, ln_coop; /* --launch-attrs */
} K;
/* --launch-attrs: the cooperative layer norm's grid */
#define LN_COOP_BLOCKS  8
#define LN_COOP_THREADS 64

struct block {
	struct param *ln1_g, *ln1_b, *w_qkv, *b_qkv, *w_proj, *b_proj, *ln2_g, *ln2_b, *w_fc, *b_fc,
	    *w_fc2, *b_fc2;
	/* saved by forward for backward */
	float *x_in, *h1, *mean1, *rstd1, *q, *k, *v, *p, *ym, *x1, *h2, *mean2, *rstd2, *fc, *g,
	    *x_out;
};

static struct trainer_opts O;
static struct block Bk[MAX_LAYERS];
static struct param P[12 * MAX_LAYERS + 5];
static int nparams;
static struct param *wte, *wpe, *lnf_g, *lnf_b, *w_lm;
static cudaStream_t S;
static cublasHandle_t blas;
static float *loss_dev;
static int cur_batch;
static const int *tokens, *targets;
/* saved by the head */
static float *x0, *hf, *meanf, *rstdf, *logp, *row_loss;

static struct param *new_param(const char *name, int n, float scale, float fill, uint64_t *rng)
{
	struct param *p = &P[nparams++];
	param_init(p, name, n, scale, fill, rng);
	return p;
}

static float *alloc(long long nfloats, const char *what)
{
	return dev_alloc_async((size_t)nfloats * sizeof(float), what, S);
}

static void layernorm(const float *x, const struct param *g, const struct param *b, float **y,
                      float **mean, float **rstd, int N, int C)
{
	*y = alloc((long long)N * C, "a layer-norm output");
	*mean = alloc(N, "layer-norm statistics");
	*rstd = alloc(N, "layer-norm statistics");
	float eps = LN_EPS;
	if (O.launch_attrs) {
		void *a[] = {&x, (void *)&g->w, (void *)&b->w, y, mean, rstd, &N, &C, &eps};
		launch(&K.ln_coop, (dim3){LN_COOP_BLOCKS, 1, 1}, (dim3){LN_COOP_THREADS, 1, 1}, 0,
		       S, a);
		return;
	}
	void *a[] = {&x, (void *)&g->w, (void *)&b->w, y, mean, rstd, &C, &eps};
	launch(&K.ln_fwd, (dim3){(unsigned)N, 1, 1}, (dim3){LN_THREADS, 1, 1},
	       LN_THREADS * sizeof(float), S, a);
}

/* dx += layer-norm backward; the scale and shift gradients accumulate. */
static void layernorm_back(const float *x, const float *dy, const struct param *g,
                           const struct param *b, const float *mean, const float *rstd, float *dx,
                           int N, int C)
{
	void *a[] = {&x, &dy, (void *)&g->w, &mean, &rstd, &dx, &N, &C};
	launch1d(&K.ln_bwd, N, 64, S, a);
	void *b2[] = {&x, &dy, &mean, &rstd, (void *)&g->g, (void *)&b->g, &N, &C};
	launch1d(&K.ln_grad, C, 64, S, b2);
}

static void bias_grad(const float *dy, struct param *b, int rows, int cols)
{
	void *a[] = {&dy, &b->g, &rows, &cols};
	launch1d(&K.bias_grad, cols, 64, S, a);
}

/* The blocks' forward from x; returns the last block's output. */
static float *blocks_forward(float *x, int B)
{
	int T = O.seq, C = O.hidden, H = O.heads, hd = C / H, N = B * T, BH = B * H;
	int C3 = 3 * C, C4 = 4 * C;
	float scale = 1.0f / sqrtf((float)hd);
	for (int l = 0; l < O.layers; l++) {
		struct block *b = &Bk[l];
		b->x_in = x;
		layernorm(x, b->ln1_g, b->ln1_b, &b->h1, &b->mean1, &b->rstd1, N, C);
		float *qkv = alloc((long long)N * C3, "the qkv projection");
		matmul(blas, 0, 1, N, C3, C, 1.0f, b->h1, b->w_qkv->w, 0.0f, qkv);
		b->q = alloc((long long)N * C, "attention queries");
		b->k = alloc((long long)N * C, "attention keys");
		b->v = alloc((long long)N * C, "attention values");
		void *a1[] = {&qkv, &b->b_qkv->w, &b->q, &b->k, &b->v, &B, &T, &H, &hd};
		launch1d(&K.qkv_split, (long long)N * C3, 256, S, a1);
		dev_free_async(qkv, S);

		float *att = alloc((long long)BH * T * T, "attention scores");
		matmul_batched(blas, 0, 1, T, T, hd, scale, b->q, (long long)T * hd, b->k,
		               (long long)T * hd, 0.0f, att, (long long)T * T, BH);
		b->p = alloc((long long)BH * T * T, "attention probabilities");
		int rows = BH * T;
		void *a2[] = {&att, &b->p, &rows, &T};
		launch1d(&K.smax_fwd, rows, 64, S, a2);
		dev_free_async(att, S);
		float *yh = alloc((long long)N * C, "the attention output");
		matmul_batched(blas, 0, 0, T, hd, T, 1.0f, b->p, (long long)T * T, b->v,
		               (long long)T * hd, 0.0f, yh, (long long)T * hd, BH);
		b->ym = alloc((long long)N * C, "the merged heads");
		int merge = 0;
		void *a3[] = {&yh, &b->ym, &B, &T, &H, &hd, &merge};
		launch1d(&K.permute, (long long)N * C, 256, S, a3);
		dev_free_async(yh, S);

		float *proj = alloc((long long)N * C, "the attention projection");
		matmul(blas, 0, 1, N, C, C, 1.0f, b->ym, b->w_proj->w, 0.0f, proj);
		b->x1 = alloc((long long)N * C, "the residual stream");
		void *a4[] = {&x, &proj, &b->b_proj->w, &b->x1, &N, &C};
		launch1d(&K.residual, (long long)N * C, 256, S, a4);
		dev_free_async(proj, S);

		layernorm(b->x1, b->ln2_g, b->ln2_b, &b->h2, &b->mean2, &b->rstd2, N, C);
		b->fc = alloc((long long)N * C4, "the MLP input projection");
		matmul(blas, 0, 1, N, C4, C, 1.0f, b->h2, b->w_fc->w, 0.0f, b->fc);
		b->g = alloc((long long)N * C4, "the MLP activation");
		void *a5[] = {&b->fc, &b->b_fc->w, &b->g, &N, &C4};
		launch1d(O.launch_attrs ? &K.gelu_cluster : &K.bias_gelu_fwd, (long long)N * C4,
		         256, S, a5);
		float *fc2 = alloc((long long)N * C, "the MLP output projection");
		matmul(blas, 0, 1, N, C, C4, 1.0f, b->g, b->w_fc2->w, 0.0f, fc2);
		b->x_out = alloc((long long)N * C, "the residual stream");
		void *a6[] = {&b->x1, &fc2, &b->b_fc2->w, &b->x_out, &N, &C};
		launch1d(&K.residual, (long long)N * C, 256, S, a6);
		dev_free_async(fc2, S);
		x = b->x_out;
	}
	return x;
}

/* --graphs: the blocks' forward and backward graphs and their static
 * inputs (the embeddings; the residual gradient, which the backward graph
 * turns into the embeddings' gradient in place). */
static struct {
	int forwards, backwards; /* calls that ran the blocks through graphs or their warm-up */
	int graphed;             /* this micro-batch's blocks run as graphs */
	float *in, *dout;
	cudaGraphExec_t fwd, bwd;
} G;

/* Runs `body` as a graph: eagerly the first time (warm-up), captured
 * into *exec the second, replayed from then on. */
static void graphed(cudaGraphExec_t *exec, int *calls, void (*body)(void))
{
	if ((*calls)++ == 0) {
		body();
		return;
	}
	if (!*exec) {
		cudaGraph_t g;
		RT(cudaStreamBeginCapture(S, cudaStreamCaptureModeGlobal));
		body();
		RT(cudaStreamEndCapture(S, &g));
		RT(cudaGraphInstantiate(exec, g, 0));
		RT(cudaGraphDestroy(g));
	}
	RT(cudaGraphLaunch(*exec, S));
}

static float *blocks_out;
static void blocks_forward_graph(void)
{
	blocks_out = blocks_forward(G.in, cur_batch);
}

static void forward(int B)
{
	int T = O.seq, C = O.hidden, V = O.vocab, N = B * T;
	x0 = alloc((long long)N * C, "the embeddings");
	void *ae[] = {&tokens, &wte->w, &wpe->w, &x0, &N, &T, &C};
	launch1d(&K.embed, (long long)N * C, 256, S, ae);
	/* A batch of another size would need graphs of its own: it runs eagerly. */
	G.graphed = O.graphs && B == O.batch;
	float *x;
	if (G.graphed) {
		size_t bytes = (size_t)N * C * sizeof(float);
		if (!G.in) {
			G.in = dev_alloc(bytes, "the blocks' graph input");
			G.dout = dev_alloc(bytes, "the blocks' graph gradient input");
		}
		RT(cudaMemcpyAsync(G.in, x0, bytes, cudaMemcpyDeviceToDevice, S));
		dev_free_async(x0, S);
		x0 = NULL;
		graphed(&G.fwd, &G.forwards, blocks_forward_graph);
		x = blocks_out;
	} else {
		x = blocks_forward(x0, B);
	}
	layernorm(x, lnf_g, lnf_b, &hf, &meanf, &rstdf, N, C);
	float *logits = alloc((long long)N * V, "the logits");
	matmul(blas, 0, 1, N, V, C, 1.0f, hf, w_lm->w, 0.0f, logits);
	logp = alloc((long long)N * V, "the log-probabilities");
	row_loss = alloc(N, "the per-token losses");
	void *a7[] = {&logits, &targets, &logp, &row_loss, &V};
	launch(&K.lsm_nll, (dim3){(unsigned)N, 1, 1}, (dim3){32, 1, 1}, 0, S, a7);
	dev_free_async(logits, S);
	float lscale = 1.0f / ((float)N * O.accum);
	void *a8[] = {&row_loss, &loss_dev, &N, &lscale};
	launch(&K.loss_acc, (dim3){1, 1, 1}, (dim3){1, 1, 1}, 0, S, a8);
}

/* The blocks' backward: dx (the gradient at the last block's output) is
 * turned, in place, into the gradient at the first block's input. */
static void blocks_backward(float *dx, int B)
{
	int T = O.seq, C = O.hidden, H = O.heads, hd = C / H, N = B * T, BH = B * H;
	int C3 = 3 * C, C4 = 4 * C;
	float scale = 1.0f / sqrtf((float)hd);
	for (int l = O.layers - 1; l >= 0; l--) {
		struct block *b = &Bk[l];
		/* MLP branch: x_out = x1 + fc2(gelu(fc(ln2(x1)))) */
		bias_grad(dx, b->b_fc2, N, C);
		matmul(blas, 1, 0, C, C4, N, 1.0f, dx, b->g, 1.0f, b->w_fc2->g);
		float *dg = alloc((long long)N * C4, "an MLP gradient");
		matmul(blas, 0, 0, N, C4, C, 1.0f, dx, b->w_fc2->w, 0.0f, dg);
		dev_free_async(b->g, S);
		dev_free_async(b->x_out, S);
		float *dfc = alloc((long long)N * C4, "an MLP gradient");
		void *a2[] = {&b->fc, &b->b_fc->w, &dg, &dfc, &N, &C4};
		launch1d(&K.bias_gelu_bwd, (long long)N * C4, 256, S, a2);
		dev_free_async(dg, S);
		dev_free_async(b->fc, S);
		bias_grad(dfc, b->b_fc, N, C4);
		matmul(blas, 1, 0, C4, C, N, 1.0f, dfc, b->h2, 1.0f, b->w_fc->g);
		float *dh2 = alloc((long long)N * C, "a layer-norm gradient");
		matmul(blas, 0, 0, N, C, C4, 1.0f, dfc, b->w_fc->w, 0.0f, dh2);
		dev_free_async(dfc, S);
		layernorm_back(b->x1, dh2, b->ln2_g, b->ln2_b, b->mean2, b->rstd2, dx, N, C);
		dev_free_async(dh2, S);
		dev_free_async(b->h2, S);
		dev_free_async(b->mean2, S);
		dev_free_async(b->rstd2, S);

		/* attention branch: x1 = x_in + proj(attention(ln1(x_in))) */
		bias_grad(dx, b->b_proj, N, C);
		matmul(blas, 1, 0, C, C, N, 1.0f, dx, b->ym, 1.0f, b->w_proj->g);
		float *dym = alloc((long long)N * C, "an attention gradient");
		matmul(blas, 0, 0, N, C, C, 1.0f, dx, b->w_proj->w, 0.0f, dym);
		dev_free_async(b->ym, S);
		dev_free_async(b->x1, S);
		float *dyh = alloc((long long)N * C, "an attention gradient");
		int split = 1;
		void *a3[] = {&dym, &dyh, &B, &T, &H, &hd, &split};
		launch1d(&K.permute, (long long)N * C, 256, S, a3);
		dev_free_async(dym, S);
		float *dp = alloc((long long)BH * T * T, "an attention-probability gradient");
		matmul_batched(blas, 0, 1, T, T, hd, 1.0f, dyh, (long long)T * hd, b->v,
		               (long long)T * hd, 0.0f, dp, (long long)T * T, BH);
		float *dv = alloc((long long)N * C, "a value gradient");
		matmul_batched(blas, 1, 0, T, hd, T, 1.0f, b->p, (long long)T * T, dyh,
		               (long long)T * hd, 0.0f, dv, (long long)T * hd, BH);
		dev_free_async(dyh, S);
		dev_free_async(b->v, S);
		float *datt = alloc((long long)BH * T * T, "an attention-score gradient");
		int rows = BH * T;
		void *a4[] = {&b->p, &dp, &datt, &rows, &T};
		launch1d(&K.smax_bwd, rows, 64, S, a4);
		dev_free_async(dp, S);
		dev_free_async(b->p, S);
		float *dq = alloc((long long)N * C, "a query gradient");
		matmul_batched(blas, 0, 0, T, hd, T, scale, datt, (long long)T * T, b->k,
		               (long long)T * hd, 0.0f, dq, (long long)T * hd, BH);
		float *dk = alloc((long long)N * C, "a key gradient");
		matmul_batched(blas, 1, 0, T, hd, T, scale, datt, (long long)T * T, b->q,
		               (long long)T * hd, 0.0f, dk, (long long)T * hd, BH);
		dev_free_async(datt, S);
		dev_free_async(b->q, S);
		dev_free_async(b->k, S);
		float *dqkv = alloc((long long)N * C3, "the qkv gradient");
		void *a5[] = {&dq, &dk, &dv, &dqkv, &B, &T, &H, &hd};
		launch1d(&K.qkv_merge, (long long)N * C3, 256, S, a5);
		dev_free_async(dq, S);
		dev_free_async(dk, S);
		dev_free_async(dv, S);
		bias_grad(dqkv, b->b_qkv, N, C3);
		matmul(blas, 1, 0, C3, C, N, 1.0f, dqkv, b->h1, 1.0f, b->w_qkv->g);
		float *dh1 = alloc((long long)N * C, "a layer-norm gradient");
		matmul(blas, 0, 0, N, C, C3, 1.0f, dqkv, b->w_qkv->w, 0.0f, dh1);
		dev_free_async(dqkv, S);
		layernorm_back(b->x_in, dh1, b->ln1_g, b->ln1_b, b->mean1, b->rstd1, dx, N, C);
		dev_free_async(dh1, S);
		dev_free_async(b->h1, S);
		dev_free_async(b->mean1, S);
		dev_free_async(b->rstd1, S);
	}
}

static void blocks_backward_graph(void)
{
	blocks_backward(G.dout, cur_batch);
}

static void backward(void *unused)
{
	(void)unused;
	int B = cur_batch;
	int T = O.seq, C = O.hidden, V = O.vocab, N = B * T;
	float lscale = 1.0f / ((float)N * O.accum);

	float *dlogits = alloc((long long)N * V, "the logit gradient");
	void *a1[] = {&logp, &targets, &dlogits, &N, &V, &lscale};
	launch1d(&K.nll_bwd, (long long)N * V, 256, S, a1);
	matmul(blas, 1, 0, V, C, N, 1.0f, dlogits, hf, 1.0f, w_lm->g);
	float *dhf = alloc((long long)N * C, "a layer-norm gradient");
	matmul(blas, 0, 0, N, C, V, 1.0f, dlogits, w_lm->w, 0.0f, dhf);
	dev_free_async(dlogits, S);
	dev_free_async(logp, S);
	dev_free_async(row_loss, S);
	float *dx = alloc((long long)N * C, "the residual gradient");
	RT(cudaMemsetAsync(dx, 0, (size_t)N * C * sizeof(float), S));
	float *xf = O.layers ? Bk[O.layers - 1].x_out : x0;
	layernorm_back(xf, dhf, lnf_g, lnf_b, meanf, rstdf, dx, N, C);
	dev_free_async(dhf, S);
	dev_free_async(hf, S);
	dev_free_async(meanf, S);
	dev_free_async(rstdf, S);

	if (G.graphed) {
		RT(cudaMemcpyAsync(G.dout, dx, (size_t)N * C * sizeof(float),
		                   cudaMemcpyDeviceToDevice, S));
		dev_free_async(dx, S);
		dx = G.dout;
		graphed(&G.bwd, &G.backwards, blocks_backward_graph);
	} else {
		blocks_backward(dx, B);
	}
	void *a6[] = {&tokens, &dx, &wte->g, &wpe->g, &N, &T, &V, &C};
	launch1d(&K.embed_bwd, (long long)(V + T) * C, 64, S, a6);
	if (!G.graphed) {
		dev_free_async(dx, S);
		dev_free_async(x0, S);
	}
}

/* Each sequence follows next = (5 * tok + 3 + t % 2) mod vocab, with one
 * token in ten replaced by noise; targets are the inputs shifted by one. */
static void make_batch(void *host, int B, int iter, int micro)
{
	uint64_t rng = O.seed * 1000003ull + (uint64_t)iter * 131ull + (uint64_t)micro;
	int T = O.seq, V = O.vocab;
	int *tok = host, *tgt = tok + (size_t)B * T;
	for (int b = 0; b < B; b++) {
		int cur = (int)(rng_next(&rng) % (uint64_t)V);
		for (int t = 0; t <= T; t++) {
			if (t < T)
				tok[b * T + t] = cur;
			if (t > 0)
				tgt[b * T + t - 1] = cur;
			int next = (5 * cur + 3 + t % 2) % V;
			if (rng_next(&rng) % 10 == 0)
				next = (int)(rng_next(&rng) % (uint64_t)V);
			cur = next;
		}
	}
}

static void load_kernels(void)
{
	static struct kmodule ew, red, opt;
	kmodule_load(&ew, &O, "elementwise", 1);
	kmodule_load(&red, &O, "reduce", 0);
	kmodule_load(&opt, &O, "optim", 0);
	kernel_get(&K.embed, &ew, "embed_fwd", LAUNCH_RUNTIME);
	kernel_get(&K.qkv_split, &ew, "qkv_split", LAUNCH_RUNTIME);
	kernel_get(&K.qkv_merge, &ew, "qkv_merge", LAUNCH_RUNTIME);
	kernel_get(&K.permute, &ew, "heads_permute", LAUNCH_RUNTIME);
	kernel_get(&K.residual, &ew, "residual_bias_add", LAUNCH_RUNTIME);
	kernel_get(&K.bias_gelu_fwd, &ew, "bias_gelu_fwd", LAUNCH_RUNTIME);
	kernel_get(&K.bias_gelu_bwd, &ew, "bias_gelu_bwd", LAUNCH_RUNTIME);
	kernel_get(&K.ln_fwd, &red, "layernorm_fwd", LAUNCH_DRIVER);
	kernel_get(&K.ln_bwd, &red, "layernorm_bwd", LAUNCH_DRIVER);
	kernel_get(&K.ln_grad, &red, "layernorm_param_grad", LAUNCH_DRIVER_EX);
	kernel_get(&K.bias_grad, &red, "bias_grad", LAUNCH_DRIVER);
	kernel_get(&K.lsm_nll, &red, "log_softmax_nll", LAUNCH_DRIVER);
	kernel_get(&K.nll_bwd, &red, "nll_bwd", LAUNCH_DRIVER);
	kernel_get(&K.loss_acc, &red, "loss_accumulate", LAUNCH_DRIVER);
	kernel_get(&K.smax_fwd, &red, "causal_softmax_fwd", LAUNCH_DRIVER);
	kernel_get(&K.smax_bwd, &red, "causal_softmax_bwd", LAUNCH_DRIVER_EX);
	kernel_get(&K.embed_bwd, &red, "embed_bwd", LAUNCH_DRIVER_EX);
	kernel_get(&K.adam, &opt, "adam_step", LAUNCH_DRIVER_EX);
	if (O.launch_attrs) {
		kernel_get(&K.gelu_cluster, &red, "bias_gelu_fwd_cluster", LAUNCH_DRIVER_CLUSTER);
		kernel_get(&K.ln_coop, &red, "layernorm_fwd_coop", LAUNCH_DRIVER_COOP);
	}
}

static void adamw(int step)
{
	for (int i = 0; i < nparams; i++) {
		struct param *p = &P[i];
		/* Decay the matrices only, as GPT training usually does. */
		float wd = strcmp(p->name, "a weight matrix") == 0 ? 0.01f : 0.0f;
		adam_launch(&K.adam, p, O.lr, 0.9f, 0.95f, 1e-8f, wd, 1, step, S);
	}
}

static int init_params(void)
{
	int C = O.hidden, T = O.seq, V = O.vocab;
	uint64_t rng = O.seed;
	float wscale = 1.0f / sqrtf((float)C), w4scale = 1.0f / sqrtf(4.0f * C);
	wte = new_param("an embedding", V * C, 0.5f, 0, &rng);
	wpe = new_param("an embedding", T * C, 0.1f, 0, &rng);
	for (int l = 0; l < O.layers; l++) {
		struct block *b = &Bk[l];
		b->ln1_g = new_param("a layer-norm scale", C, 0, 1.0f, &rng);
		b->ln1_b = new_param("a layer-norm shift", C, 0, 0.0f, &rng);
		b->w_qkv = new_param("a weight matrix", 3 * C * C, wscale, 0, &rng);
		b->b_qkv = new_param("a bias", 3 * C, 0, 0.0f, &rng);
		b->w_proj = new_param("a weight matrix", C * C, wscale, 0, &rng);
		b->b_proj = new_param("a bias", C, 0, 0.0f, &rng);
		b->ln2_g = new_param("a layer-norm scale", C, 0, 1.0f, &rng);
		b->ln2_b = new_param("a layer-norm shift", C, 0, 0.0f, &rng);
		b->w_fc = new_param("a weight matrix", 4 * C * C, wscale, 0, &rng);
		b->b_fc = new_param("a bias", 4 * C, 0, 0.0f, &rng);
		b->w_fc2 = new_param("a weight matrix", 4 * C * C, w4scale, 0, &rng);
		b->b_fc2 = new_param("a bias", C, 0, 0.0f, &rng);
	}
	lnf_g = new_param("a layer-norm scale", C, 0, 1.0f, &rng);
	lnf_b = new_param("a layer-norm shift", C, 0, 0.0f, &rng);
	w_lm = new_param("a weight matrix", V * C, wscale, 0, &rng);
	return 0;
}

/* The staged batch is B rows of input tokens, then B rows of targets. */
static void forward_batch(void *input, int B)
{
	tokens = input;
	targets = tokens + (size_t)B * O.seq;
	forward(B);
}

int main(int argc, char **argv)
{
	O = (struct trainer_opts){.batch = 8,
	                          .hidden = 64,
	                          .layers = 2,
	                          .iters = 5,
	                          .seq = 32,
	                          .heads = 4,
	                          .vocab = 64,
	                          .accum = 1,
	                          .lr = 3e-3f,
	                          .seed = 1,
	                          .ranks = 1,
	                          .kernels_dir = TRAINER_KERNELS_DIR};
	trainer_parse(argc, argv, &O, "--in,--classes,--dropout");
	if (O.layers > MAX_LAYERS) {
		fprintf(stderr, "gpt: --layers must be at most %d\n", MAX_LAYERS);
		return 1;
	}
	const struct trainer_model m = {.stream = &S,
	                                .blas = &blas,
	                                .loss = &loss_dev,
	                                .batch = &cur_batch,
	                                .params = P,
	                                .nparams = &nparams,
	                                .sample_bytes = (size_t)O.seq * 2 * sizeof(int),
	                                .load_kernels = load_kernels,
	                                .init = init_params,
	                                .make_batch = make_batch,
	                                .forward = forward_batch,
	                                .backward = backward,
	                                .step = adamw};
	return trainer_run(&O, &m);
}
