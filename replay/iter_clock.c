/*
 * iter_clock.c — what the plan costs in time, measured: the wall-clock
 * time of each iteration, kept apart for iterations that ran unmodified
 * after the profile and those that applied the plan.  The median of the
 * last few of each is printed at exit (REMAT_LOG=1; `remat run` shows the
 * ratio).  Wall clock between iteration boundaries is the time the
 * program waits for the device when it synchronises every iteration, as
 * training loops do (a loss read back to the host).
 */
#include <stdlib.h>
#include <time.h>

#include "../core/log.h"
#include "internal.h"

#define SAMPLES 64

static struct {
	double last;             /* previous boundary, 0: none yet */
	double ms[2][SAMPLES];   /* [0] unmodified, [1] with the plan: the latest SAMPLES */
	unsigned long long n[2]; /* iterations timed */
} clock_state;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

void replay_clock_start(void)
{
	clock_state.last = now_ms();
}

void replay_clock_boundary(enum replay_clock_kind kind)
{
	double t = now_ms();
	if (clock_state.last > 0 && kind != REPLAY_CLOCK_SKIP) {
		int k = kind == REPLAY_CLOCK_PLAN;
		clock_state.ms[k][clock_state.n[k]++ % SAMPLES] = t - clock_state.last;
	}
	clock_state.last = t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(int k)
{
	size_t n = clock_state.n[k] < SAMPLES ? (size_t)clock_state.n[k] : SAMPLES;
	qsort(clock_state.ms[k], n, sizeof(double), cmp_double);
	return n % 2 ? clock_state.ms[k][n / 2]
	             : (clock_state.ms[k][n / 2 - 1] + clock_state.ms[k][n / 2]) / 2;
}

void replay_clock_report(void)
{
	if (!clock_state.n[1])
		return;
	if (clock_state.n[0])
		remat_log(REMAT_LOG_INFO,
		          "run mode: iteration time %.3f ms without the plan (median of %llu), "
		          "%.3f ms with it (median of %llu)",
		          median(0), clock_state.n[0], median(1), clock_state.n[1]);
	else
		remat_log(REMAT_LOG_INFO,
		          "run mode: iteration time %.3f ms with the plan (median of %llu); no "
		          "iteration ran without it after the profile",
		          median(1), clock_state.n[1]);
}
