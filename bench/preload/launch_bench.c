/*
 * launch_bench.c — host cost of cuLaunchKernel, for the preload benchmark.
 *
 *   launch_bench MODULE N
 *
 * First a short "training" loop (allocate, launch, free: a period libremat
 * in trace mode can find, profile and be done with), then N launches of an
 * empty kernel timed with clock_gettime; prints the best of 5 rounds as
 * "ns_per_launch X".  The program links libcuda directly, like the
 * trainers, so every launch goes through the exported cuLaunchKernel.
 */
#include "../bench_cuda.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: launch_bench MODULE N\n");
		return 1;
	}
	long n = atol(argv[2]);
	CUfunction fn;
	CUstream s;
	bench_setup(argv[1], &fn, &s);
	int x = 0;
	void *args[] = {&x};
	for (int it = 0; it < 8; it++) {
		CUdeviceptr a, b;
		CHECK(cuMemAllocAsync(&a, 1 << 20, s));
		CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
		CHECK(cuMemAllocAsync(&b, 1 << 19, s));
		CHECK(cuLaunchKernel(fn, 2, 1, 1, 1, 1, 1, 0, s, args, NULL));
		CHECK(cuMemFreeAsync(a, s));
		CHECK(cuLaunchKernel(fn, 3, 1, 1, 1, 1, 1, 0, s, args, NULL));
		CHECK(cuMemFreeAsync(b, s));
		CHECK(cuLaunchKernel(fn, 4, 1, 1, 1, 1, 1, 0, s, args, NULL));
	}
	CHECK(cuStreamSynchronize(s));
	double best = 1e30;
	for (int round = 0; round < 5; round++) {
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
			if ((i & 1023) == 1023)
				CHECK(cuStreamSynchronize(s));
		}
		CHECK(cuStreamSynchronize(s));
		double per = (now_ns() - t0) / (double)n;
		if (per < best)
			best = per;
	}
	printf("ns_per_launch %.1f\n", best);
	return 0;
}
