/*
 * runtime_sticky_test.c — sticky errors.  The simulated driver faults the
 * second kernel (SIMCUDA_FAIL_LAUNCH=2): as on a GPU, the launch itself
 * succeeds and the fault corrupts the context, so every later call on the
 * device fails with cudaErrorLaunchFailure and cudaGetLastError cannot
 * clear it, until cudaDeviceReset.  Its own program: the driver reads the variable
 * when it is loaded, so the test re-executes itself with it set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>

#ifndef RT_MODULE
#error "RT_MODULE: path of the rt_kernels.so test module"
#endif

#define CHECK(call) assert_int_equal((call), cudaSuccess)

static cudaError_t launch_iota(cudaKernel_t k, int *p, int n)
{
	void *args[] = {&p, &n};
	return cudaLaunchKernel((const void *)k, (dim3){(unsigned)(n + 63) / 64, 1, 1},
	                        (dim3){64, 1, 1}, args, 0, 0);
}

static void test_sticky_until_reset(void **state)
{
	(void)state;
	cudaLibrary_t lib;
	cudaKernel_t iota;
	CHECK(cudaLibraryLoadFromFile(&lib, RT_MODULE, NULL, NULL, 0, NULL, NULL, 0));
	CHECK(cudaLibraryGetKernel(&iota, lib, "rt_iota"));
	int *p;
	CHECK(cudaMalloc((void **)&p, 256 * sizeof(int)));
	CHECK(launch_iota(iota, p, 256));
	CHECK(cudaDeviceSynchronize());

	CHECK(launch_iota(iota, p, 256));
	/* Every call that uses the device now fails the same way... */
	assert_int_equal(launch_iota(iota, p, 256), cudaErrorLaunchFailure);
	void *q = NULL;
	assert_int_equal(cudaMalloc(&q, 16), cudaErrorLaunchFailure);
	assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
	assert_int_equal(cudaMemset(p, 0, 16), cudaErrorLaunchFailure);
	/* ...and reporting it does not clear it. */
	assert_int_equal(cudaGetLastError(), cudaErrorLaunchFailure);
	assert_int_equal(cudaGetLastError(), cudaErrorLaunchFailure);
	assert_int_equal(cudaPeekAtLastError(), cudaErrorLaunchFailure);

	/* The reset destroys the context and everything in it. */
	CHECK(cudaDeviceReset());
	assert_int_equal(cudaGetLastError(), cudaSuccess);
	CHECK(cudaMalloc((void **)&p, 256 * sizeof(int)));
	CHECK(launch_iota(iota, p, 256));
	static int host[256];
	CHECK(cudaMemcpy(host, p, sizeof(host), cudaMemcpyDeviceToHost));
	assert_int_equal(host[255], 255);
	CHECK(cudaFree(p));
	CHECK(cudaLibraryUnload(lib));
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *v = getenv("SIMCUDA_FAIL_LAUNCH");
	if (!v || strcmp(v, "2") != 0) {
		setenv("SIMCUDA_FAIL_LAUNCH", "2", 1);
		execv("/proc/self/exe", argv);
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sticky_until_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
