// arena.cu — the arena trainer's command line, its five arenas (each one
// cudaMalloc made at start-up, every tensor an offset into it), the
// deterministic data and the training loop.  stdout holds only
// `iter N loss HEX` lines and the final `checksum HEX16` (FNV-1a 64 over
// the parameter arena), like the other trainers; see
// tests/trainers/README.md.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"

const char *const arena_prog = "arena";

void cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
	if (e == cudaSuccess)
		return;
	fprintf(stderr, "%s: %s failed at %s:%d: %s (%s)\n", arena_prog, call, file, line,
	        cudaGetErrorName(e), cudaGetErrorString(e));
	exit(2);
}

void cublas_check(cublasStatus_t s, const char *call, const char *file, int line)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return;
	fprintf(stderr, "%s: %s failed at %s:%d: %s (%s)\n", arena_prog, call, file, line,
	        cublasGetStatusName(s), cublasGetStatusString(s));
	exit(2);
}

// ---- the layout of the arenas ------------------------------------------------

void param_sizes(const config &c, size_t *s)
{
	size_t C = c.C, L = c.L;
	s[P_WTE] = (size_t)c.V * C;
	s[P_WPE] = (size_t)c.T * C;
	s[P_LN1W] = s[P_LN1B] = s[P_LN2W] = s[P_LN2B] = s[P_PROJB] = s[P_FCPROJB] = L * C;
	s[P_QKVW] = L * 3 * C * C;
	s[P_QKVB] = L * 3 * C;
	s[P_PROJW] = L * C * C;
	s[P_FCW] = s[P_FCPROJW] = L * 4 * C * C;
	s[P_FCB] = L * 4 * C;
	s[P_LNFW] = s[P_LNFB] = C;
	s[P_HEAD] = (size_t)c.V * C;
}

void act_sizes(const config &c, size_t *s)
{
	size_t L = c.L, N = (size_t)c.B * c.T, nc = N * c.C;
	size_t scores = (size_t)c.B * c.NH * c.T * c.T;
	s[A_ENCODED] = s[A_LNF] = nc;
	s[A_LN1] = s[A_Q] = s[A_K] = s[A_V] = s[A_ATTY] = s[A_ATTPROJ] = s[A_RES2] = s[A_LN2] =
	    s[A_FCPROJ] = s[A_RES3] = L * nc;
	s[A_LN1_MEAN] = s[A_LN1_RSTD] = s[A_LN2_MEAN] = s[A_LN2_RSTD] = L * N;
	s[A_QKV] = L * 3 * nc;
	s[A_PREATT] = s[A_ATT] = L * scores;
	s[A_FCH] = s[A_FCH_GELU] = L * 4 * nc;
	s[A_LNF_MEAN] = s[A_LNF_RSTD] = s[A_LOSSES] = N;
	s[A_LOGITS] = N * c.V;
	s[A_LOSS] = 1;
}

void grad_act_sizes(const config &c, size_t *s)
{
	size_t N = (size_t)c.B * c.T, nc = N * c.C, scores = (size_t)c.B * c.NH * c.T * c.T;
	s[G_RES] = s[G_LN] = s[G_Q] = s[G_K] = s[G_V] = s[G_Y] = s[G_ATTY] = nc;
	s[G_QKV] = 3 * nc;
	s[G_ATT] = s[G_PREATT] = scores;
	s[G_FCH] = s[G_FCH2] = 4 * nc;
}

size_t layout_total(const size_t *sizes, int count)
{
	size_t total = 0;
	for (int i = 0; i < count; i++)
		total += sizes[i];
	return total;
}

void place(float *base, const size_t *sizes, int count, float **ptr)
{
	for (int i = 0; i < count; i++) {
		ptr[i] = base;
		base += sizes[i];
	}
}

// One cudaMalloc; out of memory is one line naming the arena.
static float *arena_alloc(size_t floats, const char *what)
{
	void *p = NULL;
	size_t bytes = floats * sizeof(float);
	cudaError_t e = cudaMalloc(&p, bytes);
	if (e == cudaErrorMemoryAllocation) {
		fprintf(stderr, "%s: out of device memory allocating %zu bytes for %s (%s)\n",
		        arena_prog, bytes, what, cudaGetErrorName(e));
		exit(2);
	}
	CUDA_CHECK(e);
	return (float *)p;
}

// ---- command line --------------------------------------------------------------

static void usage(FILE *to)
{
	fprintf(to,
	        "usage: %s [--batch N] [--seq N] [--width N] [--heads N] [--layers N]\n"
	        "       [--vocab N] [--iters N] [--lr X] [--seed N]\n",
	        arena_prog);
}

static void parse(int argc, char **argv, config &c)
{
	for (int i = 1; i < argc; i++) {
		const char *flag = argv[i];
		if (strcmp(flag, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", arena_prog, flag);
			exit(1);
		}
		const char *val = argv[++i];
		char *end;
		double x = strtod(val, &end);
		int *field = strcmp(flag, "--batch") == 0    ? &c.B
		             : strcmp(flag, "--seq") == 0    ? &c.T
		             : strcmp(flag, "--width") == 0  ? &c.C
		             : strcmp(flag, "--heads") == 0  ? &c.NH
		             : strcmp(flag, "--layers") == 0 ? &c.L
		             : strcmp(flag, "--vocab") == 0  ? &c.V
		             : strcmp(flag, "--iters") == 0  ? &c.iters
		                                             : NULL;
		int ok = *val && *end == '\0' && x > 0;
		if (field && ok && x == (int)x && x <= 1 << 20)
			*field = (int)x;
		else if (strcmp(flag, "--lr") == 0 && ok)
			c.lr = (float)x;
		else if (strcmp(flag, "--seed") == 0 && ok && x == (double)(unsigned long long)x)
			c.seed = (unsigned long long)x;
		else if (field || strcmp(flag, "--lr") == 0 || strcmp(flag, "--seed") == 0) {
			fprintf(stderr, "%s: invalid value '%s' for %s\n", arena_prog, val, flag);
			exit(1);
		} else {
			fprintf(stderr, "%s: unknown flag '%s'\n", arena_prog, flag);
			usage(stderr);
			exit(1);
		}
	}
	// Warps own rows: the width and the head size are whole warps' work
	// split evenly, heads split the width.
	if (c.C % c.NH || c.C % 32) {
		fprintf(stderr, "%s: --width must be a multiple of 32 and of --heads\n",
		        arena_prog);
		exit(1);
	}
}

// ---- data and parameters ---------------------------------------------------------

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static float uniform(uint64_t *s) // [-1, 1)
{
	return (float)(splitmix64(s) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// The text uses the first 64 tokens of the (wider) vocabulary and follows
// next = (7 prev + 11) mod 64, with one token in ten random: the model
// first learns which tokens occur, then the rule, so the loss falls from
// about ln V.
static void make_batch(const config &c, uint64_t *rng, int *tokens, int *targets)
{
	uint64_t used = c.V < 64 ? (uint64_t)c.V : 64;
	for (int b = 0; b < c.B; b++) {
		int tok = (int)(splitmix64(rng) % used);
		for (int t = 0; t <= c.T; t++) {
			if (t < c.T)
				tokens[b * c.T + t] = tok;
			if (t > 0)
				targets[b * c.T + t - 1] = tok;
			tok = splitmix64(rng) % 10 ? (int)((7 * (uint64_t)tok + 11) % used)
			                           : (int)(splitmix64(rng) % used);
		}
	}
}

// Matrices uniform in +-1/sqrt(fan-in), layer-norm gains 1, biases 0.
static void init_params(const config &c, const size_t *sizes, float *host, uint64_t *rng)
{
	float *p = host;
	for (int i = 0; i < NUM_PARAMS; i++) {
		int fan_in = i == P_FCPROJW ? 4 * c.C : c.C;
		float scale = 1.0f / sqrtf((float)fan_in);
		for (size_t j = 0; j < sizes[i]; j++) {
			switch (i) {
			case P_LN1W:
			case P_LN2W:
			case P_LNFW:
				p[j] = 1.0f;
				break;
			case P_LN1B:
			case P_LN2B:
			case P_LNFB:
			case P_QKVB:
			case P_PROJB:
			case P_FCB:
			case P_FCPROJB:
				p[j] = 0.0f;
				break;
			default:
				p[j] = scale * uniform(rng);
			}
		}
		p += sizes[i];
	}
}

static uint64_t fnv1a(const void *data, size_t len)
{
	const unsigned char *p = (const unsigned char *)data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int main(int argc, char **argv)
{
	config c = {4, 32, 64, 4, 2, 512, 6, 3e-3f, 1};
	parse(argc, argv, c);
	model m = {};
	m.cfg = c;
	uint64_t rng = c.seed;

	CUDA_CHECK(cudaSetDevice(0));
	CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
	CUBLAS_CHECK(cublasCreate(&m.blas));
	CUBLAS_CHECK(cublasSetMathMode(m.blas, CUBLAS_DEFAULT_MATH));

	// The five arenas, each one allocation for the whole run.
	size_t psizes[NUM_PARAMS], asizes[NUM_ACTS], gsizes[NUM_GRAD_ACTS];
	param_sizes(c, psizes);
	act_sizes(c, asizes);
	grad_act_sizes(c, gsizes);
	m.num_params = layout_total(psizes, NUM_PARAMS);
	size_t nacts = layout_total(asizes, NUM_ACTS), ngrad = layout_total(gsizes, NUM_GRAD_ACTS);
	m.param_arena = arena_alloc(m.num_params, "the parameters");
	m.grad_arena = arena_alloc(m.num_params, "the gradients");
	m.adam_arena = arena_alloc(2 * m.num_params, "the AdamW state");
	m.act_arena = arena_alloc(nacts, "the activations");
	m.grad_act_arena = arena_alloc(ngrad, "the activation gradients");
	place(m.param_arena, psizes, NUM_PARAMS, m.params);
	place(m.grad_arena, psizes, NUM_PARAMS, m.grads);
	place(m.act_arena, asizes, NUM_ACTS, m.acts);
	place(m.grad_act_arena, gsizes, NUM_GRAD_ACTS, m.grad_acts);
	int N = c.B * c.T;
	int *io = NULL;
	CUDA_CHECK(cudaMalloc((void **)&io, 2 * (size_t)N * sizeof(int)));
	m.tokens = io;
	m.targets = io + N;

	size_t pbytes = m.num_params * sizeof(float);
	float *host_params = (float *)malloc(pbytes);
	int *host_io = (int *)malloc(2 * (size_t)N * sizeof(int));
	if (!host_params || !host_io) {
		fprintf(stderr, "%s: out of host memory\n", arena_prog);
		return 2;
	}
	init_params(c, psizes, host_params, &rng);
	CUDA_CHECK(cudaMemcpy(m.param_arena, host_params, pbytes, cudaMemcpyHostToDevice));
	CUDA_CHECK(cudaMemset(m.adam_arena, 0, 2 * pbytes));

	for (int it = 0; it < c.iters; it++) {
		make_batch(c, &rng, host_io, host_io + N);
		CUDA_CHECK(
		    cudaMemcpy(io, host_io, 2 * (size_t)N * sizeof(int), cudaMemcpyHostToDevice));
		CUDA_CHECK(cudaMemset(m.grad_arena, 0, pbytes));
		CUDA_CHECK(cudaMemset(m.grad_act_arena, 0, ngrad * sizeof(float)));
		model_forward(m);
		model_backward(m);
		adamw(m.param_arena, m.grad_arena, m.adam_arena, m.adam_arena + m.num_params,
		      m.num_params, c.lr, 0.9f, 0.999f, 1e-8f, 0.01f, it + 1);
		float loss;
		CUDA_CHECK(cudaMemcpy(&loss, m.acts[A_LOSS], sizeof loss, cudaMemcpyDeviceToHost));
		printf("iter %d loss %a\n", it, (double)loss);
		fflush(stdout);
	}
	CUDA_CHECK(cudaMemcpy(host_params, m.param_arena, pbytes, cudaMemcpyDeviceToHost));
	printf("checksum %016llx\n", (unsigned long long)fnv1a(host_params, pbytes));

	free(host_params);
	free(host_io);
	CUDA_CHECK(cudaFree(io));
	float *arenas[] = {m.param_arena, m.grad_arena, m.adam_arena, m.act_arena,
	                   m.grad_act_arena};
	for (float *a : arenas)
		CUDA_CHECK(cudaFree(a));
	CUBLAS_CHECK(cublasDestroy(m.blas));
	return 0;
}
