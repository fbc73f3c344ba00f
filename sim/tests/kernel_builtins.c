/*
 * kernel_builtins.c — threadIdx, blockIdx, blockDim and gridDim in all
 * three dimensions, as a kernel sees them on the simulated device: every
 * thread of a 3-D launch runs exactly once with its own coordinates.
 */
#include "driver_common.h"

static void test_every_thread_once(void **state)
{
	(void)state;
	setup_context();
	CUmodule m = load_test_module();
	const unsigned gx = 2, gy = 3, gz = 2, bx = 4, by = 2, bz = 3;
	const unsigned n = gx * gy * gz * bx * by * bz;
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, n * 4));
	CHECK(cuMemsetD32(p, 0xffffffffu, n));
	void *args[] = {&p};
	CHECK(cuLaunchKernel(get_fn(m, "index3d"), gx, gy, gz, bx, by, bz, 0, NULL, args, NULL));
	unsigned *out = malloc(n * 4);
	CHECK(cuMemcpyDtoH(out, p, n * 4));
	unsigned i = 0;
	for (unsigned z = 0; z < gz; z++)
		for (unsigned y = 0; y < gy; y++)
			for (unsigned x = 0; x < gx; x++)
				for (unsigned tz = 0; tz < bz; tz++)
					for (unsigned ty = 0; ty < by; ty++)
						for (unsigned tx = 0; tx < bx; tx++, i++)
							assert_int_equal(out[i],
							                 tx | ty << 4 | tz << 8 |
							                     x << 12 | y << 16 |
							                     z << 20);
	free(out);
	CHECK(cuMemFree(p));
	struct simcuda_stats st;
	simcudaGetStats(&st);
	assert_int_equal(st.kernels, 1);
	/* the legacy default cost model (rerun_as_legacy): 2000 ns + 0.5 ns per
	 * thread, after the memset */
	assert_int_equal(st.sim_time_ns,
	                 (1000 + n * 4 / 40) + (2000 + n / 2) + (1000 + n * 4 / 10));
}

int main(int argc, char **argv)
{
	(void)argc;
	rerun_as_legacy(argv);
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_thread_once)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
