/*
 * mlp — trains a multi-layer perceptron on the (simulated) GPU, the way a
 * framework would: every activation saved by the forward pass is a tensor of
 * its own (a cudaMallocAsync allocation, or with --alloc caching|vmm a block
 * of the program's own pool) freed once the backward pass has used it.
 *
 * Each hidden layer: Linear (cuBLAS gemm) -> bias + GELU -> batch norm
 * (updates its running statistics in place) -> ReLU in place -> dropout
 * (seed and offset passed by value, the offset advancing every launch).
 * Then a Linear head, log-softmax + NLL loss, Adam.  The task is
 * synthetic: labels are the argmax of a fixed random linear teacher, so the
 * loss really falls.  See tests/trainers/README.md.
 */
#include "trainer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *trainer_prog = "mlp";

#ifndef TRAINER_KERNELS_DIR
#define TRAINER_KERNELS_DIR "build/kernels"
#endif

#define MAX_LAYERS  64
#define BN_MOMENTUM 0.1f
#define BN_EPS      1e-5f

static struct {
	struct kernel bias_gelu_fwd, bias_gelu_bwd, relu, relu_bwd, dropout_fwd, dropout_bwd,
	    add_bias, bias_grad, bn_fwd, bn_bwd, lsm_nll, nll_bwd, loss_acc, adam;
} K;

struct layer {
	int in;
	struct param *w, *b, *gamma, *beta;
	float *run_mean, *run_var;
	/* saved by forward for backward */
	float *x, *z, *g, *n, *out, *mean, *invstd;
	unsigned long long drop_offset;
};

static struct trainer_opts O;
static struct layer L[MAX_LAYERS];
static struct param P[4 * MAX_LAYERS + 2];
static int nparams;
static struct param *head_w, *head_b;
static cudaStream_t S;
static cublasHandle_t blas;
static float *loss_dev;
static unsigned long long rng_offset; /* dropout counter, advances every launch */

/* saved by the head */
static float *logits, *logp, *row_loss, *last_x;
static const int *labels;
static int cur_batch;
static float *teacher; /* fixed random linear map whose argmax labels the inputs */
static float *extra[2 * MAX_LAYERS];
static int extra_n[2 * MAX_LAYERS];

static struct param *new_param(const char *name, int n, float scale, float fill, uint64_t *rng)
{
	struct param *p = &P[nparams++];
	param_init(p, name, n, scale, fill, rng);
	return p;
}

static size_t fbytes(long long n)
{
	return (size_t)n * sizeof(float);
}

static void forward(const float *x, int B)
{
	int H = O.hidden;
	for (int l = 0; l < O.layers; l++) {
		struct layer *ly = &L[l];
		long long nel = (long long)B * H;
		int nn = (int)nel;
		ly->x = (float *)x;
		ly->z = dev_alloc_async(fbytes(nel), "a linear layer output", S);
		matmul(blas, 0, 1, B, H, ly->in, 1.0f, x, ly->w->w, 0.0f, ly->z);

		ly->g = dev_alloc_async(fbytes(nel), "a GELU output", S);
		void *a1[] = {&ly->z, &ly->b->w, &ly->g, &B, &H};
		launch1d(&K.bias_gelu_fwd, nel, 256, S, a1);

		ly->n = dev_alloc_async(fbytes(nel), "a batch-norm output", S);
		ly->mean = dev_alloc_async(fbytes(H), "batch-norm statistics", S);
		ly->invstd = dev_alloc_async(fbytes(H), "batch-norm statistics", S);
		float mom = BN_MOMENTUM, eps = BN_EPS;
		void *a2[] = {&ly->g,       &ly->n,    &ly->gamma->w, &ly->beta->w, &ly->run_mean,
		              &ly->run_var, &ly->mean, &ly->invstd,   &B,           &H,
		              &mom,         &eps};
		launch1d(&K.bn_fwd, H, 64, S, a2);

		void *a3[] = {&ly->n, &nn};
		launch1d(&K.relu, nel, 256, S, a3);

		ly->out = dev_alloc_async(fbytes(nel), "a dropout output", S);
		ly->drop_offset = rng_offset;
		rng_offset += (unsigned long long)nel;
		void *a4[] = {&ly->n, &ly->out, &nn, &O.dropout, &O.seed, &ly->drop_offset};
		launch1d(&K.dropout_fwd, nel, 256, S, a4);
		x = ly->out;
	}
	int C = O.classes;
	last_x = (float *)x;
	logits = dev_alloc_async(fbytes((long long)B * C), "the logits", S);
	matmul(blas, 0, 1, B, C, H, 1.0f, x, head_w->w, 0.0f, logits);
	void *a5[] = {&logits, &head_b->w, &B, &C};
	launch1d(&K.add_bias, (long long)B * C, 256, S, a5);
	logp = dev_alloc_async(fbytes((long long)B * C), "the log-probabilities", S);
	row_loss = dev_alloc_async(fbytes(B), "the per-row losses", S);
	void *a6[] = {&logits, &labels, &logp, &row_loss, &C};
	launch(&K.lsm_nll, (dim3){(unsigned)B, 1, 1}, (dim3){32, 1, 1}, 0, S, a6);
	float scale = 1.0f / ((float)B * O.accum);
	void *a7[] = {&row_loss, &loss_dev, &B, &scale};
	launch(&K.loss_acc, (dim3){1, 1, 1}, (dim3){1, 1, 1}, 0, S, a7);
}

static void backward(void *unused)
{
	(void)unused;
	int B = cur_batch, H = O.hidden, C = O.classes;
	float scale = 1.0f / ((float)B * O.accum);
	float *dlogits = dev_alloc_async(fbytes((long long)B * C), "the logit gradient", S);
	void *a1[] = {&logp, &labels, &dlogits, &B, &C, &scale};
	launch1d(&K.nll_bwd, (long long)B * C, 256, S, a1);
	matmul(blas, 1, 0, C, H, B, 1.0f, dlogits, last_x, 1.0f, head_w->g);
	void *a2[] = {&dlogits, &head_b->g, &B, &C};
	launch1d(&K.bias_grad, C, 64, S, a2);
	float *dx = dev_alloc_async(fbytes((long long)B * H), "an activation gradient", S);
	matmul(blas, 0, 0, B, H, C, 1.0f, dlogits, head_w->w, 0.0f, dx);
	dev_free_async(dlogits, S);
	dev_free_async(logits, S);
	dev_free_async(logp, S);
	dev_free_async(row_loss, S);

	for (int l = O.layers - 1; l >= 0; l--) {
		struct layer *ly = &L[l];
		long long nel = (long long)B * H;
		int nn = (int)nel;
		float *dn = dev_alloc_async(fbytes(nel), "a dropout gradient", S);
		void *b1[] = {&dx, &dn, &nn, &O.dropout, &O.seed, &ly->drop_offset};
		launch1d(&K.dropout_bwd, nel, 256, S, b1);
		dev_free_async(dx, S);
		dev_free_async(ly->out, S);
		void *b2[] = {&ly->n, &dn, &nn};
		launch1d(&K.relu_bwd, nel, 256, S, b2);

		float *dg = dev_alloc_async(fbytes(nel), "a batch-norm gradient", S);
		void *b3[] = {&ly->g, &dn,           &ly->gamma->w, &ly->mean, &ly->invstd,
		              &dg,    &ly->gamma->g, &ly->beta->g,  &B,        &H};
		launch1d(&K.bn_bwd, H, 64, S, b3);
		dev_free_async(dn, S);
		dev_free_async(ly->n, S);
		dev_free_async(ly->mean, S);
		dev_free_async(ly->invstd, S);

		float *dz = dev_alloc_async(fbytes(nel), "a GELU gradient", S);
		void *b4[] = {&ly->z, &ly->b->w, &dg, &dz, &B, &H};
		launch1d(&K.bias_gelu_bwd, nel, 256, S, b4);
		dev_free_async(dg, S);
		dev_free_async(ly->g, S);
		dev_free_async(ly->z, S);
		void *b5[] = {&dz, &ly->b->g, &B, &H};
		launch1d(&K.bias_grad, H, 64, S, b5);
		matmul(blas, 1, 0, H, ly->in, B, 1.0f, dz, ly->x, 1.0f, ly->w->g);
		if (l > 0) {
			dx = dev_alloc_async(fbytes((long long)B * ly->in),
			                     "an activation gradient", S);
			matmul(blas, 0, 0, B, ly->in, H, 1.0f, dz, ly->w->w, 0.0f, dx);
		}
		dev_free_async(dz, S);
	}
}

/* Inputs uniform in [-1, 1); the label is the teacher's argmax. */
static void make_batch(void *host, int B, int iter, int micro)
{
	uint64_t rng = O.seed * 1000003ull + (uint64_t)iter * 131ull + (uint64_t)micro;
	float *x = host;
	int *lab = (int *)(x + (size_t)B * O.in_dim);
	for (int r = 0; r < B; r++) {
		for (int d = 0; d < O.in_dim; d++)
			x[(size_t)r * O.in_dim + d] = rng_uniform(&rng);
		int best = 0;
		float best_v = 0.0f;
		for (int c = 0; c < O.classes; c++) {
			float v = 0.0f;
			for (int d = 0; d < O.in_dim; d++)
				v +=
				    teacher[(size_t)c * O.in_dim + d] * x[(size_t)r * O.in_dim + d];
			if (c == 0 || v > best_v) {
				best = c;
				best_v = v;
			}
		}
		lab[r] = best;
	}
}

static void load_kernels(void)
{
	static struct kmodule ew, red, opt;
	kmodule_load(&ew, &O, "elementwise", 1);
	kmodule_load(&red, &O, "reduce", 0);
	kmodule_load(&opt, &O, "optim", 0);
	kernel_get(&K.bias_gelu_fwd, &ew, "bias_gelu_fwd", LAUNCH_RUNTIME);
	kernel_get(&K.bias_gelu_bwd, &ew, "bias_gelu_bwd", LAUNCH_RUNTIME);
	kernel_get(&K.relu, &ew, "relu_inplace", LAUNCH_RUNTIME);
	kernel_get(&K.relu_bwd, &ew, "relu_bwd_inplace", LAUNCH_RUNTIME);
	kernel_get(&K.dropout_fwd, &ew, "dropout_fwd", LAUNCH_RUNTIME);
	kernel_get(&K.dropout_bwd, &ew, "dropout_bwd", LAUNCH_RUNTIME);
	kernel_get(&K.add_bias, &ew, "add_bias_inplace", LAUNCH_RUNTIME);
	kernel_get(&K.bias_grad, &red, "bias_grad", LAUNCH_DRIVER);
	kernel_get(&K.bn_fwd, &red, "batchnorm_fwd", LAUNCH_DRIVER);
	kernel_get(&K.bn_bwd, &red, "batchnorm_bwd", LAUNCH_DRIVER_EX);
	kernel_get(&K.lsm_nll, &red, "log_softmax_nll", LAUNCH_DRIVER);
	kernel_get(&K.nll_bwd, &red, "nll_bwd", LAUNCH_DRIVER_EX);
	kernel_get(&K.loss_acc, &red, "loss_accumulate", LAUNCH_DRIVER);
	kernel_get(&K.adam, &opt, "adam_step", LAUNCH_DRIVER_EX);
}

static void adam(int step)
{
	for (int i = 0; i < nparams; i++)
		adam_launch(&K.adam, &P[i], O.lr, 0.9f, 0.999f, 1e-8f, 1e-4f, 0, step, S);
}

static int init_params(void)
{
	uint64_t rng = O.seed;
	int in = O.in_dim;
	for (int l = 0; l < O.layers; l++) {
		struct layer *ly = &L[l];
		ly->in = in;
		ly->w = new_param("a weight", O.hidden * in, 1.0f / sqrtf((float)in), 0, &rng);
		ly->b = new_param("a bias", O.hidden, 0, 0.0f, &rng);
		ly->gamma = new_param("a batch-norm scale", O.hidden, 0, 1.0f, &rng);
		ly->beta = new_param("a batch-norm shift", O.hidden, 0, 0.0f, &rng);
		ly->run_mean = dev_alloc(fbytes(O.hidden), "batch-norm running statistics");
		ly->run_var = dev_alloc(fbytes(O.hidden), "batch-norm running statistics");
		RT(cudaMemset(ly->run_mean, 0, fbytes(O.hidden)));
		float *ones = malloc(fbytes(O.hidden));
		for (int i = 0; ones && i < O.hidden; i++)
			ones[i] = 1.0f;
		if (ones == NULL)
			return 2;
		RT(cudaMemcpy(ly->run_var, ones, fbytes(O.hidden), cudaMemcpyHostToDevice));
		free(ones);
		in = O.hidden;
		/* The running statistics are state too: the checksum covers them. */
		extra[2 * l] = ly->run_mean;
		extra[2 * l + 1] = ly->run_var;
		extra_n[2 * l] = extra_n[2 * l + 1] = O.hidden;
	}
	head_w = new_param("the head weight", O.classes * O.hidden, 1.0f / sqrtf((float)O.hidden),
	                   0, &rng);
	head_b = new_param("the head bias", O.classes, 0, 0.0f, &rng);

	teacher = malloc(fbytes((long long)O.classes * O.in_dim));
	if (teacher == NULL)
		return 2;
	uint64_t trng = O.seed ^ 0x7465616368ull;
	for (int i = 0; i < O.classes * O.in_dim; i++)
		teacher[i] = rng_uniform(&trng);
	return 0;
}

/* The staged batch is B rows of in_dim floats, then B int labels. */
static void forward_batch(void *input, int B)
{
	labels = (const int *)((float *)input + (size_t)B * O.in_dim);
	forward(input, B);
}

int main(int argc, char **argv)
{
	O = (struct trainer_opts){.batch = 256,
	                          .hidden = 256,
	                          .layers = 2,
	                          .iters = 6,
	                          .in_dim = 64,
	                          .classes = 10,
	                          .accum = 1,
	                          .lr = 1e-2f,
	                          .dropout = 0.1f,
	                          .seed = 1,
	                          .ranks = 1,
	                          .kernels_dir = TRAINER_KERNELS_DIR};
	trainer_parse(argc, argv, &O, "--seq,--heads,--vocab,--graphs,--launch-attrs");
	if (O.layers > MAX_LAYERS) {
		fprintf(stderr, "mlp: --layers must be at most %d\n", MAX_LAYERS);
		return 1;
	}
	const struct trainer_model m = {.stream = &S,
	                                .blas = &blas,
	                                .loss = &loss_dev,
	                                .batch = &cur_batch,
	                                .params = P,
	                                .nparams = &nparams,
	                                .extra = extra,
	                                .extra_n = extra_n,
	                                .n_extra = 2 * O.layers,
	                                .sample_bytes = (O.in_dim + 1) * sizeof(float),
	                                .load_kernels = load_kernels,
	                                .init = init_params,
	                                .make_batch = make_batch,
	                                .forward = forward_batch,
	                                .backward = backward,
	                                .step = adam};
	int rc = trainer_run(&O, &m);
	free(teacher);
	return rc;
}
