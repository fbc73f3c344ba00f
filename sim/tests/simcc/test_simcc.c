/*
 * test_simcc.c — runs the kernels of simcc_kernels.cu, built by sim/bin/simcc,
 * straight through libsimcuda_kernel.so's grid runner: checks the
 * registration simcc generated (names, parameter layout, barrier flag, cost
 * function) and that the shim's __shared__, __syncthreads and atomics work.
 * The module path comes from argv[1] or SIMCC_TEST_MODULE.
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

#include "simcc_test.h"

#ifndef SIMCC_TEST_MODULE
#define SIMCC_TEST_MODULE "build/simcc/simcc_kernels.so"
#endif
static const char *module_path = SIMCC_TEST_MODULE;
static const struct simcuda_module *mod;

static const struct simcuda_kernel *kernel(const char *name)
{
	for (unsigned i = 0; i < mod->nkernels; i++)
		if (strcmp(mod->kernels[i].name, name) == 0)
			return &mod->kernels[i];
	fail_msg("kernel %s not registered", name);
	return NULL;
}

static int load(void **state)
{
	(void)state;
	void *h = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "test_simcc: %s\n", dlerror());
		return -1;
	}
	mod = dlsym(h, SIMCUDA_MODULE_SYMBOL);
	return mod ? 0 : -1;
}

static void registers_every_kernel_in_order(void **state)
{
	(void)state;
	static const char *names[] = {"params_mixed", "no_params", "row_sum",  "reverse_block",
	                              "atomics",      "math2d",    "fast_math"};
	assert_int_equal(mod->abi_version, SIMCUDA_ABI_VERSION);
	assert_int_equal(mod->nkernels, 7);
	for (unsigned i = 0; i < 7; i++)
		assert_string_equal(mod->kernels[i].name, names[i]);
}

static void mixed_parameter_layout(void **state)
{
	(void)state;
	const struct simcuda_kernel *k = kernel("params_mixed");
	static const unsigned off[] = {0, 4, 8, 16, 24, 48, 56};
	static const unsigned size[] = {1, 4, 8, 8, 24, 1, 8};
	assert_int_equal(k->nparams, 7);
	for (unsigned i = 0; i < 7; i++) {
		assert_int_equal(k->param_offset[i], off[i]);
		assert_int_equal(k->param_size[i], size[i]);
	}
	assert_int_equal(k->param_bytes, 64);
	assert_int_equal(k->synchronizes, 0);

	const struct simcuda_kernel *z = kernel("no_params");
	assert_int_equal(z->nparams, 0);
	assert_int_equal(z->param_bytes, 0);
}

struct mixed {
	char tag;
	double value;
	int count;
};

static void trampoline_passes_each_parameter(void **state)
{
	(void)state;
	char c = -7, c2 = 'z';
	int i = 123456;
	double d = 2.5, out[8] = {0};
	double *outp = out;
	struct mixed m = {'q', -0.125, 99};
	long long ll = -(1LL << 40);
	void *args[] = {&c, &i, &d, &outp, &m, &c2, &ll};
	simcuda_dim3 one = {1, 1, 1};
	assert_int_equal(simcuda_run_grid(kernel("params_mixed"), args, one, one, 0), 0);
	assert_true(out[0] == -7 && out[1] == 123456 && out[2] == 2.5);
	assert_true(out[3] == 'q' && out[4] == -0.125 && out[5] == 99);
	assert_true(out[6] == 'z' && out[7] == (double)(-(1LL << 40)));
}

static void default_cost_and_no_cost(void **state)
{
	(void)state;
	/* simcc_kernels.cu has SIMCUDA_DEFAULT_COST: 7 * grid.x * block.x */
	const struct simcuda_kernel *k = kernel("params_mixed");
	assert_non_null(k->cost_ns);
	assert_true(k->cost_ns(NULL, (simcuda_dim3){3, 1, 1}, (simcuda_dim3){64, 1, 1}) ==
	            7.0 * 3 * 64);
	/* simcc_plain.cu has no cost function at all */
	char path[512];
	snprintf(path, sizeof path, "%s", module_path);
	char *slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0),
	         "simcc_plain.so");
	const struct simcuda_module *plain = simcc_open(path);
	assert_non_null(plain);
	assert_int_equal(plain->nkernels, 1);
	assert_string_equal(plain->kernels[0].name, "plain_fill");
	assert_null(plain->kernels[0].cost_ns);
	int out[8], value = 42, *op = out;
	void *args[] = {&op, &value};
	assert_int_equal(simcuda_run_grid(&plain->kernels[0], args, (simcuda_dim3){2, 1, 1},
	                                  (simcuda_dim3){4, 1, 1}, 0),
	                 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(out[i], 42);
}

static void block_reduction_with_barriers(void **state)
{
	(void)state;
	enum { ROWS = 5, COLS = 1000 };
	static float in[ROWS * COLS];
	float out[ROWS];
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			in[r * COLS + c] = (float)((r + 1) * (c % 7));
	const struct simcuda_kernel *k = kernel("row_sum");
	assert_int_equal(k->synchronizes, 1);
	const float *inp = in;
	float *outp = out;
	int cols = COLS;
	void *args[] = {&inp, &outp, &cols};
	assert_int_equal(
	    simcuda_run_grid(k, args, (simcuda_dim3){ROWS, 1, 1}, (simcuda_dim3){128, 1, 1}, 0), 0);
	for (int r = 0; r < ROWS; r++) {
		float want = 0;
		for (int c = 0; c < COLS; c++)
			want += in[r * COLS + c];
		/* Integers below 2^24: every summation order is exact. */
		assert_true(out[r] == want);
	}
}

static void dynamic_shared_memory(void **state)
{
	(void)state;
	enum { BLOCKS = 3, THREADS = 64 };
	int in[BLOCKS * THREADS], out[BLOCKS * THREADS];
	for (int i = 0; i < BLOCKS * THREADS; i++)
		in[i] = i * 3;
	int *inp = in, *outp = out;
	void *args[] = {&inp, &outp};
	assert_int_equal(simcuda_run_grid(kernel("reverse_block"), args,
	                                  (simcuda_dim3){BLOCKS, 1, 1},
	                                  (simcuda_dim3){THREADS, 1, 1}, THREADS * sizeof(int)),
	                 0);
	for (int b = 0; b < BLOCKS; b++)
		for (int t = 0; t < THREADS; t++)
			assert_int_equal(out[b * THREADS + t], in[b * THREADS + THREADS - 1 - t]);
}

static void atomics_combine_all_threads(void **state)
{
	(void)state;
	enum { N = 300 };
	float vals[N];
	for (int i = 0; i < N; i++)
		vals[i] = (float)(i % 10);
	int count = 0, imax = -1, n = N;
	float fsum = 0;
	unsigned flag = 0;
	int *cp = &count, *mp = &imax;
	float *fp = &fsum;
	unsigned *flp = &flag;
	const float *vp = vals;
	void *args[] = {&cp, &fp, &mp, &flp, &vp, &n};
	const struct simcuda_kernel *k = kernel("atomics");
	assert_int_equal(k->synchronizes, 0);
	assert_int_equal(
	    simcuda_run_grid(k, args, (simcuda_dim3){3, 1, 1}, (simcuda_dim3){128, 1, 1}, 0), 0);
	assert_int_equal(count, N);
	assert_true(fsum == 1350.0f);
	assert_int_equal(imax, 100);
	/* Only the first CAS (thread 0, blocks run in order) finds 0. */
	assert_int_equal(flag, 1);
}

static void math_and_cost_function(void **state)
{
	(void)state;
	enum { W = 16, H = 8 };
	float out[W * H];
	float *op = out;
	int width = W;
	void *args[] = {&op, &width};
	const struct simcuda_kernel *k = kernel("math2d");
	simcuda_dim3 grid = {2, 2, 1}, block = {8, 4, 1};
	assert_int_equal(simcuda_run_grid(k, args, grid, block, 0), 0);
	for (int i = 0; i < W * H; i++) {
		float v = (float)i / 100.0f;
		assert_true(out[i] == expf(v) + tanhf(v) + sqrtf(v));
	}
	assert_non_null(k->cost_ns);
	/* 100 + 2 * width * grid.y * block.y */
	assert_true(k->cost_ns(args, grid, block) == 100.0 + 2.0 * W * 2 * 4);
	/* SIMCUDA_WORK: 30 flops and 4 bytes per element of width * grid.y * block.y */
	assert_non_null(k->work);
	struct simcuda_work w = k->work(args, grid, block);
	assert_true(w.flops == 30.0 * W * 2 * 4 && w.bytes == 4.0 * W * 2 * 4);
	assert_int_equal(w.math, SIMCUDA_MATH_FP32);
	assert_true(w.wire_ns == 0.0);
	/* a kernel without one: NULL, the driver's default */
	assert_null(kernel("params_mixed")->work);
}

/* The fast-math intrinsics link and compute what libm does. */
static void fast_math_intrinsics(void **state)
{
	(void)state;
	float in[3] = {0.5f, 1.0f, 2.25f}, out[30];
	float *pi = in, *po = out;
	void *args[] = {&pi, &po};
	simcuda_dim3 one = {1, 1, 1}, three = {3, 1, 1};
	assert_int_equal(simcuda_run_grid(kernel("fast_math"), args, one, three, 0), 0);
	for (int i = 0; i < 3; i++) {
		float x = in[i], *o = out + 10 * i;
		assert_true(o[0] == expf(x) && o[1] == exp10f(x) && o[2] == logf(x));
		assert_true(o[3] == log2f(x) && o[4] == log10f(x) && o[5] == sinf(x));
		assert_true(o[6] == cosf(x) && o[7] == tanf(x) && o[8] == powf(x, 1.5f));
		assert_true(o[9] == sinf(x) + cosf(x));
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		module_path = argv[1];
	else if (getenv("SIMCC_TEST_MODULE"))
		module_path = getenv("SIMCC_TEST_MODULE");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(registers_every_kernel_in_order),
	    cmocka_unit_test(mixed_parameter_layout),
	    cmocka_unit_test(trampoline_passes_each_parameter),
	    cmocka_unit_test(block_reduction_with_barriers),
	    cmocka_unit_test(dynamic_shared_memory),
	    cmocka_unit_test(atomics_combine_all_threads),
	    cmocka_unit_test(math_and_cost_function),
	    cmocka_unit_test(default_cost_and_no_cost),
	    cmocka_unit_test(fast_math_intrinsics),
	};
	return cmocka_run_group_tests(tests, load, NULL);
}
