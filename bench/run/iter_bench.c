/*
 * iter_bench.c — host cost per kernel launch once run mode applies a plan.
 *
 *   iter_bench MODULE ITERS
 *
 * A "training loop" libremat can learn: each iteration allocates two
 * buffers, launches OPS empty kernels (dynamic shared memory 0, 16, 32 … bytes, so the iteration is
 * the period and not one launch) and frees the buffers.  Warm-up
 * iterations, a pause for the planner, more warm-up; then ITERS timed
 * iterations, best of 5 rounds, printed as "ns_per_launch X".  Every
 * launch goes through the exported cuLaunchKernel, as in the trainers.
 */
#include <unistd.h>
#include "../bench_cuda.h"

#define OPS 256

static CUfunction fn;
static CUstream s;

/* One iteration; returns the time spent in its launches alone (the
 * simulator's own allocation calls are slow and not what is measured). */
static double iteration(void)
{
	int x = 0;
	void *args[] = {&x};
	CUdeviceptr a, b;
	CHECK(cuMemAllocAsync(&a, 64 << 10, s));
	CHECK(cuMemAllocAsync(&b, 32 << 10, s));
	double t0 = now_ns();
	for (unsigned j = 0; j < OPS; j++)
		CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 16 * j, s, args, NULL));
	CHECK(cuMemFreeAsync(b, s));
	double t = now_ns() - t0;
	CHECK(cuMemFreeAsync(a, s));
	return t;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: iter_bench MODULE ITERS\n");
		return 1;
	}
	long n = atol(argv[2]);
	bench_setup(argv[1], &fn, &s);
	/* Detection, profile, then time for remat-plan (a cached plan needs none). */
	for (int it = 0; it < 12; it++)
		iteration();
	CHECK(cuStreamSynchronize(s));
	usleep(300 * 1000);
	for (int it = 0; it < 12; it++)
		iteration();
	CHECK(cuStreamSynchronize(s));
	double best = 1e30;
	for (int round = 0; round < 5; round++) {
		double t = 0;
		for (long i = 0; i < n; i++) {
			t += iteration();
			/* As bench/preload: a sync per 1024 launches bounds the queue. */
			if (i % 4 == 3)
				CHECK(cuStreamSynchronize(s));
		}
		CHECK(cuStreamSynchronize(s));
		double per = t / (double)(n * OPS);
		if (per < best)
			best = per;
	}
	printf("ns_per_launch %.1f\n", best);
	return 0;
}
