/*
 * test_kernels.c — checks the trainers' backward kernels against finite
 * differences of their forward kernels, by running the simcc-built
 * modules straight through libsimcuda_kernel.so's grid runner (no driver
 * involved).  The GEMMs are cuBLAS's: sim/tests/cublas_test.c.
 *
 * Each check takes a random weighting w of the forward output, so that
 * L(x) = sum w * f(x), feeds dy = w to the backward kernel and compares
 * its dx with (L(x + h) - L(x - h)) / 2h at a few coordinates.
 */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "simcuda_abi.h"

#ifndef KERNELS_DIR
#define KERNELS_DIR "build/kernels"
#endif

static const struct simcuda_module *ew, *red;

static const struct simcuda_module *load(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.so", KERNELS_DIR, name);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "test_kernels: %s\n", dlerror());
		return NULL;
	}
	return dlsym(h, SIMCUDA_MODULE_SYMBOL);
}

static int setup(void **state)
{
	(void)state;
	ew = load("elementwise");
	red = load("reduce");
	return ew && red ? 0 : -1;
}

static void run(const struct simcuda_module *m, const char *name, unsigned blocks, unsigned threads,
                unsigned smem, void **args)
{
	for (unsigned i = 0; i < m->nkernels; i++)
		if (strcmp(m->kernels[i].name, name) == 0) {
			assert_int_equal(simcuda_run_grid(&m->kernels[i], args,
			                                  (simcuda_dim3){blocks, 1, 1},
			                                  (simcuda_dim3){threads, 1, 1}, smem),
			                 0);
			return;
		}
	fail_msg("no kernel %s", name);
}

static uint64_t rng = 12345;
static float uni(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (float)(rng >> 40) / 16777216.0f * 2.0f - 1.0f;
}
static void fill(float *a, int n, float scale)
{
	for (int i = 0; i < n; i++)
		a[i] = scale * uni();
}
static double dot(const float *a, const float *b, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (double)a[i] * b[i];
	return s;
}

#define TOL(num) (2e-2 + 2e-2 * fabs(num))

/* y = gelu(z + b); dz = bias_gelu_bwd(z, b, w) */
static void bias_gelu_gradient(void **state)
{
	(void)state;
	enum { R = 3, C = 5, N = R * C };
	float z[N], b[C], y[N], w[N], dz[N];
	fill(z, N, 2.0f);
	fill(b, C, 0.5f);
	fill(w, N, 1.0f);
	int r = R, c = C;
	float *zp = z, *bp = b, *yp = y, *wp = w, *dzp = dz;
	void *bwd[] = {&zp, &bp, &wp, &dzp, &r, &c};
	run(ew, "bias_gelu_bwd", 1, 64, 0, bwd);
	for (int i = 0; i < N; i++) {
		float keep = z[i], h = 1e-2f;
		void *fwd[] = {&zp, &bp, &yp, &r, &c};
		z[i] = keep + h;
		run(ew, "bias_gelu_fwd", 1, 64, 0, fwd);
		double lp = dot(w, y, N);
		z[i] = keep - h;
		run(ew, "bias_gelu_fwd", 1, 64, 0, fwd);
		double num = (lp - dot(w, y, N)) / (2 * h);
		z[i] = keep;
		assert_true(fabs(num - dz[i]) < TOL(num));
	}
}

/* batch norm over rows: dx, dgamma, dbeta; running stats move by momentum */
static void batchnorm_gradient(void **state)
{
	(void)state;
	enum { R = 6, C = 3, N = R * C };
	float x[N], y[N], w[N], dx[N], gamma[C], beta[C], rm[C], rv[C], sm[C], si[C];
	float dgamma[C] = {0}, dbeta[C] = {0};
	fill(x, N, 1.5f);
	fill(w, N, 1.0f);
	for (int c = 0; c < C; c++) {
		gamma[c] = 1.0f + 0.3f * uni();
		beta[c] = 0.2f * uni();
	}
	int r = R, c = C;
	float mom = 0.1f, eps = 1e-5f;
	float *xp = x, *yp = y, *gp = gamma, *bp = beta, *rmp = rm, *rvp = rv, *smp = sm, *sip = si;
	float *wp = w, *dxp = dx, *dgp = dgamma, *dbp = dbeta;
	void *fwd[] = {&xp, &yp, &gp, &bp, &rmp, &rvp, &smp, &sip, &r, &c, &mom, &eps};
	for (int i = 0; i < C; i++)
		rm[i] = 0.0f, rv[i] = 1.0f;
	run(red, "batchnorm_fwd", 1, 32, 0, fwd);
	/* running_mean = 0.9 * 0 + 0.1 * batch mean */
	for (int j = 0; j < C; j++) {
		double mean = 0;
		for (int i = 0; i < R; i++)
			mean += x[i * C + j];
		assert_true(fabs(rm[j] - 0.1 * mean / R) < 1e-5);
	}
	void *bwd[] = {&xp, &wp, &gp, &smp, &sip, &dxp, &dgp, &dbp, &r, &c};
	run(red, "batchnorm_bwd", 1, 32, 0, bwd);
	for (int i = 0; i < N; i++) {
		float keep = x[i], h = 1e-2f;
		x[i] = keep + h;
		run(red, "batchnorm_fwd", 1, 32, 0, fwd);
		double lp = dot(w, y, N);
		x[i] = keep - h;
		run(red, "batchnorm_fwd", 1, 32, 0, fwd);
		double num = (lp - dot(w, y, N)) / (2 * h);
		x[i] = keep;
		assert_true(fabs(num - dx[i]) < TOL(num));
	}
	for (int j = 0; j < C; j++) {
		float keep = gamma[j], h = 1e-2f;
		gamma[j] = keep + h;
		run(red, "batchnorm_fwd", 1, 32, 0, fwd);
		double lp = dot(w, y, N);
		gamma[j] = keep - h;
		run(red, "batchnorm_fwd", 1, 32, 0, fwd);
		double num = (lp - dot(w, y, N)) / (2 * h);
		gamma[j] = keep;
		assert_true(fabs(num - dgamma[j]) < TOL(num));
		double sw = 0;
		for (int i = 0; i < R; i++)
			sw += w[i * C + j];
		assert_true(fabs(sw - dbeta[j]) < 1e-4);
	}
}

/* layer norm per row (block reduction): dx accumulates, dgamma */
static void layernorm_gradient(void **state)
{
	(void)state;
	enum { R = 4, C = 40, N = R * C };
	float x[N], y[N], w[N], dx[N], gamma[C], beta[C], mean[R], rstd[R];
	float dgamma[C] = {0}, dbeta[C] = {0};
	fill(x, N, 2.0f);
	fill(w, N, 1.0f);
	for (int c = 0; c < C; c++) {
		gamma[c] = 1.0f + 0.3f * uni();
		beta[c] = 0.2f * uni();
	}
	for (int i = 0; i < N; i++)
		dx[i] = 0.5f; /* layernorm_bwd adds to what is there */
	int r = R, c = C;
	float eps = 1e-5f;
	float *xp = x, *yp = y, *gp = gamma, *bp = beta, *mp = mean, *sp = rstd, *wp = w, *dxp = dx,
	      *dgp = dgamma, *dbp = dbeta;
	void *fwd[] = {&xp, &gp, &bp, &yp, &mp, &sp, &c, &eps};
	run(red, "layernorm_fwd", R, 32, 32 * sizeof(float), fwd);
	void *bwd[] = {&xp, &wp, &gp, &mp, &sp, &dxp, &r, &c};
	run(red, "layernorm_bwd", 1, 32, 0, bwd);
	void *pg[] = {&xp, &wp, &mp, &sp, &dgp, &dbp, &r, &c};
	run(red, "layernorm_param_grad", 1, 64, 0, pg);
	for (int i = 0; i < N; i += 3) {
		float keep = x[i], h = 1e-2f;
		x[i] = keep + h;
		run(red, "layernorm_fwd", R, 32, 32 * sizeof(float), fwd);
		double lp = dot(w, y, N);
		x[i] = keep - h;
		run(red, "layernorm_fwd", R, 32, 32 * sizeof(float), fwd);
		double num = (lp - dot(w, y, N)) / (2 * h);
		x[i] = keep;
		assert_true(fabs(num - (dx[i] - 0.5f)) < TOL(num));
	}
	for (int j = 0; j < C; j += 7) {
		float keep = gamma[j], h = 1e-2f;
		gamma[j] = keep + h;
		run(red, "layernorm_fwd", R, 32, 32 * sizeof(float), fwd);
		double lp = dot(w, y, N);
		gamma[j] = keep - h;
		run(red, "layernorm_fwd", R, 32, 32 * sizeof(float), fwd);
		double num = (lp - dot(w, y, N)) / (2 * h);
		gamma[j] = keep;
		assert_true(fabs(num - dgamma[j]) < TOL(num));
	}
}

/* causal softmax rows: masked entries are 0, rows sum to 1, gradient */
static void causal_softmax_gradient(void **state)
{
	(void)state;
	enum { T = 6, ROWS = 2 * T, N = ROWS * T };
	float a[N], p[N], w[N], da[N];
	fill(a, N, 2.0f);
	fill(w, N, 1.0f);
	int rows = ROWS, t = T;
	float *ap = a, *pp = p, *wp = w, *dap = da;
	void *fwd[] = {&ap, &pp, &rows, &t};
	run(red, "causal_softmax_fwd", 1, 32, 0, fwd);
	for (int r = 0; r < ROWS; r++) {
		double s = 0;
		for (int j = 0; j < T; j++) {
			if (j > r % T)
				assert_true(p[r * T + j] == 0.0f);
			s += p[r * T + j];
		}
		assert_true(fabs(s - 1.0) < 1e-5);
	}
	void *bwd[] = {&pp, &wp, &dap, &rows, &t};
	run(red, "causal_softmax_bwd", 1, 32, 0, bwd);
	for (int i = 0; i < N; i++) {
		if (i % T > (i / T) % T)
			continue; /* masked: no gradient path */
		float keep = a[i], h = 1e-2f;
		a[i] = keep + h;
		run(red, "causal_softmax_fwd", 1, 32, 0, fwd);
		double lp = dot(w, p, N);
		a[i] = keep - h;
		run(red, "causal_softmax_fwd", 1, 32, 0, fwd);
		double num = (lp - dot(w, p, N)) / (2 * h);
		a[i] = keep;
		assert_true(fabs(num - da[i]) < TOL(num));
	}
}

/* mean NLL of log-softmax: nll_bwd against finite differences of the loss */
static void cross_entropy_gradient(void **state)
{
	(void)state;
	enum { R = 3, C = 7, N = R * C };
	float logits[N], logp[N], rl[R], dl[N];
	int labels[R] = {2, 6, 0};
	fill(logits, N, 3.0f);
	int r = R, c = C;
	float scale = 1.0f / R;
	float *lp = logits, *pp = logp, *rp = rl, *dp = dl;
	int *lab = labels;
	void *fwd[] = {&lp, &lab, &pp, &rp, &c};
	void *bwd[] = {&pp, &lab, &dp, &r, &c, &scale};
	run(red, "log_softmax_nll", R, 32, 0, fwd);
	for (int i = 0; i < R; i++) {
		double s = 0;
		for (int j = 0; j < C; j++)
			s += exp(logp[i * C + j]);
		assert_true(fabs(s - 1.0) < 1e-5);
		assert_true(rl[i] == -logp[i * C + labels[i]]);
	}
	run(red, "nll_bwd", 1, 64, 0, bwd);
	for (int i = 0; i < N; i++) {
		float keep = logits[i], h = 1e-2f;
		logits[i] = keep + h;
		run(red, "log_softmax_nll", R, 32, 0, fwd);
		double up = (rl[0] + rl[1] + rl[2]) / R;
		logits[i] = keep - h;
		run(red, "log_softmax_nll", R, 32, 0, fwd);
		double num = (up - (rl[0] + rl[1] + rl[2]) / R) / (2 * h);
		logits[i] = keep;
		assert_true(fabs(num - dl[i]) < TOL(num));
	}
}

/* the dropout mask drawn again in backward is the forward one */
static void dropout_mask_replays(void **state)
{
	(void)state;
	enum { N = 1000 };
	float x[N], y[N], dx[N], ones[N];
	for (int i = 0; i < N; i++)
		x[i] = 1.0f + i, ones[i] = 1.0f;
	int n = N;
	float p = 0.25f;
	unsigned long long seed = 7, offset = 12345;
	float *xp = x, *yp = y, *op = ones, *dxp = dx;
	void *fwd[] = {&xp, &yp, &n, &p, &seed, &offset};
	void *bwd[] = {&op, &dxp, &n, &p, &seed, &offset};
	run(ew, "dropout_fwd", 4, 256, 0, fwd);
	run(ew, "dropout_bwd", 4, 256, 0, bwd);
	int dropped = 0;
	for (int i = 0; i < N; i++) {
		assert_true(y[i] == (dx[i] != 0.0f ? x[i] * (1.0f / 0.75f) : 0.0f));
		dropped += dx[i] == 0.0f;
	}
	assert_in_range(dropped, 200, 300); /* p = 0.25 of 1000 */
	/* The next launch (offset advanced) draws a different mask. */
	float y2[N];
	float *y2p = y2;
	offset += N;
	void *fwd2[] = {&xp, &y2p, &n, &p, &seed, &offset};
	run(ew, "dropout_fwd", 4, 256, 0, fwd2);
	int differ = 0;
	for (int i = 0; i < N; i++)
		differ += (y[i] == 0.0f) != (y2[i] == 0.0f);
	assert_true(differ > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bias_gelu_gradient),     cmocka_unit_test(batchnorm_gradient),
	    cmocka_unit_test(layernorm_gradient),     cmocka_unit_test(causal_softmax_gradient),
	    cmocka_unit_test(cross_entropy_gradient), cmocka_unit_test(dropout_mask_replays),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
