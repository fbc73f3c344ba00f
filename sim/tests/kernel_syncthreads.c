/*
 * kernel_syncthreads.c — the kernel support library: __syncthreads as a
 * real block-wide barrier (a shared-memory tree reduction and a reversal
 * through dynamic shared memory give the right answer only if no thread
 * passes a barrier early), the built-ins, and launch-configuration checks
 * in simcuda_run_grid.  Kernels run both through the driver (on a stream
 * worker) and by calling simcuda_run_grid directly on this thread.
 */
#include "driver_common.h"

#include <dlfcn.h>

#include "simcuda_abi.h"

static CUmodule mod;
static const struct simcuda_module *direct; /* the same module, dlopen()ed */

static const struct simcuda_kernel *kernel(const char *name)
{
	for (unsigned i = 0; i < direct->nkernels; i++)
		if (strcmp(direct->kernels[i].name, name) == 0)
			return &direct->kernels[i];
	fail_msg("no kernel %s", name);
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	setup_context();
	mod = load_test_module();
	void *h = dlopen(TEST_MODULE, RTLD_NOW);
	assert_non_null(h);
	direct = dlsym(h, SIMCUDA_MODULE_SYMBOL);
	assert_non_null(direct);
	return 0;
}

static void check_block_sums(unsigned blocks, unsigned threads)
{
	size_t n = (size_t)blocks * threads;
	float *in = malloc(n * sizeof(float)), *out = malloc(blocks * sizeof(float));
	for (size_t i = 0; i < n; i++)
		in[i] = (float)(i % 7) + 0.5f;
	CUdeviceptr din, dout;
	CHECK(cuMemAlloc(&din, n * sizeof(float)));
	CHECK(cuMemAlloc(&dout, blocks * sizeof(float)));
	CHECK(cuMemcpyHtoD(din, in, n * sizeof(float)));
	void *args[] = {&din, &dout};
	CHECK(cuLaunchKernel(get_fn(mod, "block_sum"), blocks, 1, 1, threads, 1, 1, 0, NULL, args,
	                     NULL));
	CHECK(cuMemcpyDtoH(out, dout, blocks * sizeof(float)));
	for (unsigned b = 0; b < blocks; b++) {
		double want = 0;
		for (unsigned t = 0; t < threads; t++)
			want += (float)(((size_t)b * threads + t) % 7) + 0.5f;
		assert_true(out[b] == (float)want);
	}
	CHECK(cuMemFree(din));
	CHECK(cuMemFree(dout));
	free(in);
	free(out);
}

static void test_block_reduction(void **state)
{
	(void)state;
	check_block_sums(8, 256);
	check_block_sums(2, 1024); /* the largest block */
	check_block_sums(3, 2);
}

static void test_dynamic_shared_reverse(void **state)
{
	(void)state;
	enum { BLOCKS = 4, T = 128 };
	unsigned host[BLOCKS * T], back[BLOCKS * T];
	for (unsigned i = 0; i < BLOCKS * T; i++)
		host[i] = i;
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, sizeof(host)));
	CHECK(cuMemcpyHtoD(p, host, sizeof(host)));
	void *args[] = {&p};
	CHECK(cuLaunchKernel(get_fn(mod, "reverse_dyn"), BLOCKS, 1, 1, T, 1, 1, T * 4, NULL, args,
	                     NULL));
	CHECK(cuMemcpyDtoH(back, p, sizeof(back)));
	for (unsigned b = 0; b < BLOCKS; b++)
		for (unsigned t = 0; t < T; t++)
			assert_int_equal(back[b * T + t], b * T + (T - 1 - t));
	CHECK(cuMemFree(p));
}

static void test_run_grid_directly(void **state)
{
	(void)state;
	enum { B = 4, T = 64 };
	float in[B * T], out[B];
	for (unsigned i = 0; i < B * T; i++)
		in[i] = 1.0f;
	float *pin = in, *pout = out;
	void *args[] = {&pin, &pout};
	simcuda_dim3 grid = {B, 1, 1}, block = {T, 1, 1};
	assert_int_equal(simcuda_run_grid(kernel("block_sum"), args, grid, block, 0), 0);
	for (unsigned b = 0; b < B; b++)
		assert_true(out[b] == (float)T);
}

static void test_run_grid_rejects_bad_config(void **state)
{
	(void)state;
	const struct simcuda_kernel *k = kernel("block_sum");
	void *args[2] = {NULL, NULL};
	static const simcuda_dim3 bad_blocks[] = {
	    {1025, 1, 1}, {1, 1025, 1}, {1, 1, 65}, {32, 32, 2}, {0, 1, 1}};
	for (size_t i = 0; i < sizeof(bad_blocks) / sizeof(bad_blocks[0]); i++) {
		errno = 0;
		assert_int_equal(
		    simcuda_run_grid(k, args, (simcuda_dim3){1, 1, 1}, bad_blocks[i], 0), -1);
		assert_int_equal(errno, EINVAL);
	}
	errno = 0;
	assert_int_equal(
	    simcuda_run_grid(k, args, (simcuda_dim3){1, 65536, 1}, (simcuda_dim3){1, 1, 1}, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(
	    simcuda_run_grid(NULL, args, (simcuda_dim3){1, 1, 1}, (simcuda_dim3){1, 1, 1}, 0), -1);
}

static int child_bad_sync(void)
{
	void *h = dlopen(TEST_MODULE, RTLD_NOW);
	direct = dlsym(h, SIMCUDA_MODULE_SYMBOL);
	simcuda_run_grid(kernel("bad_sync"), NULL, (simcuda_dim3){1, 1, 1}, (simcuda_dim3){2, 1, 1},
	                 0);
	return 0;
}

static void test_syncthreads_needs_flag(void **state)
{
	(void)state;
	struct child_result r = run_child("bad-sync", NULL);
	assert_died_with(&r, "kernel 'bad_sync' block (0,0,0): calls __syncthreads but is not "
	                     "marked as synchronizing");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return strcmp(argv[1], "bad-sync") == 0 ? child_bad_sync() : 2;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_block_reduction),
	    cmocka_unit_test(test_dynamic_shared_reverse),
	    cmocka_unit_test(test_run_grid_directly),
	    cmocka_unit_test(test_run_grid_rejects_bad_config),
	    cmocka_unit_test(test_syncthreads_needs_flag),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
