/*
 * iter_bench.c — host cost per kernel launch once run mode applies a plan.
 *
 *   iter_bench MODULE ITERS [THREADS]
 *
 * A "training loop" libremat can learn: each iteration allocates two
 * buffers, launches OPS empty kernels (dynamic shared memory 0, 16, 32 …
 * bytes, so the iteration is the period and not one launch) and frees the
 * buffers.  With THREADS 2 the second half of each iteration's launches
 * comes from a second host thread, handed over and back as the trainers'
 * --bwd-thread does.  Warm-up iterations, a pause for the planner, more
 * warm-up; then ITERS timed iterations, best of 5 rounds, printed as
 * "ns_per_launch X" (the time spent in launches only).  Every launch goes
 * through the exported cuLaunchKernel, as in the trainers.
 *
 * Under callgrind (--instr-atstart=no) only the timed rounds are counted,
 * in every thread: wall clock swings on a shared machine, instruction
 * counts do not.
 */
#include <pthread.h>
#include <unistd.h>
#include "../bench_cuda.h"
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#define OPS 256

static CUfunction fn;
static CUstream s;
static int threads = 1;

/* The hand-over between the two launching threads. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn; /* 1: the second thread's half is due, 2: done, -1: quit */
static double second_half_ns;

static double launches(unsigned from, unsigned to)
{
	int x = 0;
	void *args[] = {&x};
	double t0 = now_ns();
	for (unsigned j = from; j < to; j++)
		CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 16 * j, s, args, NULL));
	return now_ns() - t0;
}

static void *second_thread(void *arg)
{
	(void)arg;
	CUcontext ctx;
	CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CHECK(cuCtxSetCurrent(ctx));
	pthread_mutex_lock(&mu);
	for (;;) {
		while (turn == 0 || turn == 2)
			pthread_cond_wait(&cv, &mu);
		if (turn < 0)
			break;
		pthread_mutex_unlock(&mu);
		double t = launches(OPS / 2, OPS);
		pthread_mutex_lock(&mu);
		second_half_ns = t;
		turn = 2;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* One iteration; returns the time spent in its launches alone (the
 * simulator's own allocation calls are slow and not what is measured). */
static double iteration(void)
{
	CUdeviceptr a, b;
	CHECK(cuMemAllocAsync(&a, 64 << 10, s));
	CHECK(cuMemAllocAsync(&b, 32 << 10, s));
	double t;
	if (threads == 1) {
		t = launches(0, OPS);
	} else {
		t = launches(0, OPS / 2);
		pthread_mutex_lock(&mu);
		turn = 1;
		pthread_cond_broadcast(&cv);
		while (turn != 2)
			pthread_cond_wait(&cv, &mu);
		turn = 0;
		t += second_half_ns;
		pthread_mutex_unlock(&mu);
	}
	CHECK(cuMemFreeAsync(b, s));
	CHECK(cuMemFreeAsync(a, s));
	return t;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: iter_bench MODULE ITERS [THREADS]\n");
		return 1;
	}
	long n = atol(argv[2]);
	threads = argc == 4 ? atoi(argv[3]) : 1;
	if (threads != 1 && threads != 2) {
		fprintf(stderr, "iter_bench: THREADS is 1 or 2\n");
		return 1;
	}
	bench_setup(argv[1], &fn, &s);
	pthread_t t2;
	if (threads == 2 && pthread_create(&t2, NULL, second_thread, NULL)) {
		fprintf(stderr, "iter_bench: cannot start the second thread\n");
		return 2;
	}
	/* Detection, profile, then time for remat-plan (a cached plan needs none). */
	for (int it = 0; it < 12; it++)
		iteration();
	CHECK(cuStreamSynchronize(s));
	usleep(300 * 1000);
	for (int it = 0; it < 12; it++)
		iteration();
	CHECK(cuStreamSynchronize(s));
	double best = 1e30;
	CALLGRIND_START_INSTRUMENTATION;
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
	CALLGRIND_STOP_INSTRUMENTATION;
	if (threads == 2) {
		pthread_mutex_lock(&mu);
		turn = -1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		pthread_join(t2, NULL);
	}
	printf("ns_per_launch %.1f\nlaunches %ld\n", best, 5 * n * OPS);
	return 0;
}
