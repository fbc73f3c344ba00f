/*
 * test_iteration.c — iteration detection on synthetic op streams shaped
 * like training: N identical layers (the period must be the whole
 * iteration, not one layer), a different first iteration, an odd
 * iteration in the middle, and the boundary at the memory minimum.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../profiler/iteration.h"

/* Signatures of a toy trainer's ops. */
enum { COPY = 1, FWD, LOSS, BWD, ADAM, AUTOTUNE, EVAL, TEMP_USE, TEMP_DONE };

struct stream {
	uint64_t sig[20000];
	int64_t level[20000];
	int64_t gap[20000];
	size_t n;
	int64_t live, gapmin;
	size_t first_fwd[64]; /* index of each iteration's first forward op */
	size_t iters;
};

static int64_t push_op(struct remat_detector *d, const struct remat_det_op *op)
{
	return remat_det_push(d, op);
}

/* One op with unknown arguments and no copy (what most tests need). */
static int64_t push(struct remat_detector *d, uint64_t sig, int64_t level, int64_t gap)
{
	struct remat_det_op op = {sig, 0, level, gap, REMAT_DET_OTHER};
	return remat_det_push(d, &op);
}

static void op(struct stream *s, uint64_t sig)
{
	s->sig[s->n] = sig;
	s->level[s->n] = s->live;
	s->gap[s->n] = s->gapmin < s->live ? s->gapmin : s->live;
	s->gapmin = s->live;
	s->n++;
}

static void release(struct stream *s, int64_t bytes)
{
	s->live -= bytes;
	if (s->live < s->gapmin)
		s->gapmin = s->live;
}

/* One training step over `layers` identical layers: batch copy, forward
 * (one activation allocated per layer), loss, backward (activations
 * freed), `adam` optimizer kernels. */
static void step(struct stream *s, int layers, int adam, int eval)
{
	op(s, COPY);
	s->first_fwd[s->iters++] = s->n;
	for (int l = 0; l < layers; l++) {
		s->live += 4096;
		op(s, FWD);
	}
	if (eval) {
		release(s, 4096 * (int64_t)layers);
		return;
	}
	op(s, LOSS);
	for (int l = 0; l < layers; l++) {
		op(s, BWD);
		release(s, 4096);
	}
	for (int a = 0; a < adam; a++)
		op(s, ADAM);
}

/* Feeds the stream as the profiler does: at a steady boundary at least
 * `warmup` iterations in, it profiles one period and verifies the next;
 * a mismatch in those two periods drops the attempt.  Returns the start
 * of the first attempt that survives, or -1. */
static int64_t feed(struct remat_detector *d, const struct stream *s, size_t warmup)
{
	int64_t start = -1;
	size_t period = 0;
	for (size_t i = 0; i < s->n; i++) {
		assert_true(push(d, s->sig[i], s->level[i], s->gap[i]) == (int64_t)i);
		if (start >= 0) {
			if (d->period != period)
				start = -1; /* dropped: look again */
			else if (i + 1 == (size_t)start + 2 * period)
				return start;
			else
				continue;
		}
		if (remat_det_steady(d) && remat_det_is_boundary(d, i) &&
		    remat_det_iteration_index(d, i) >= warmup) {
			start = (int64_t)i;
			period = d->period;
		}
	}
	return -1;
}

static void test_flat_runs_are_not_iterations(void **state)
{
	(void)state;
	struct remat_detector d;
	remat_det_init(&d, 1 << 20);
	/* Set-up: 50 identical memsets at one memory level. */
	for (int i = 0; i < 50; i++) {
		push(&d, COPY, 100, 100);
		assert_false(remat_det_steady(&d));
	}
	remat_det_fini(&d);
}

/* The definition of the period, by brute force: the smallest p for which
 * the last 2p keys are two copies of one sequence, 0 when none. */
static size_t period_by_definition(const uint64_t *key, size_t n)
{
	for (size_t p = 1; 2 * p <= n; p++) {
		size_t k = 0;
		while (k < p && key[n - 1 - k] == key[n - 1 - k - p])
			k++;
		if (k == p)
			return p;
	}
	return 0;
}

/* The incremental detector agrees with its definition after every op, on
 * sequences with noise before, within and after repetitions: a period
 * holds as long as every op repeats the op one period earlier (an
 * iteration with repeated layers inside keeps its length); once broken,
 * the period is the smallest that the definition allows. */
static void test_period_matches_definition(void **state)
{
	(void)state;
	uint64_t seed = 12345;
	static uint64_t key[4096];
	for (int round = 0; round < 40; round++) {
		struct remat_detector d;
		remat_det_init(&d, 1 << 20);
		size_t n = 0, want = 0;
		for (int part = 0; part < 6 && n < 3000; part++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t period = 1 + (seed >> 33) % 40, reps = 1 + (seed >> 20) % 5;
			uint64_t base = seed >> 40;
			for (size_t r = 0; r < reps; r++)
				for (size_t j = 0; j < period && n < 3000; j++) {
					uint64_t sig =
					    base + j % 7; /* repeats inside a period too */
					int64_t level = (int64_t)(j % 3);
					push(&d, sig, level, level);
					key[n] = remat_det_pair(sig, level);
					if (!want || key[n] != key[n - want])
						want = period_by_definition(key, n + 1);
					n++;
					if (d.period != want)
						fail_msg("op %zu: period %zu, by definition %zu", n,
						         d.period, want);
				}
		}
		remat_det_fini(&d);
	}
}

static void test_choose_phase_pure(void **state)
{
	(void)state;
	/* Gap levels of the last period (ops 4..9): a plateau of 1s at ops
	 * 7, 8, 9 then 4 — wrapping — and the rise at op 5.  The plateau
	 * ends at op 4, whose gap holds the lowest point: iterations start
	 * there, phase 4 % 6 = 4. */
	int64_t l[] = {0, 0, 0, 0, 1, 5, 9, 1, 1, 1};
	assert_int_equal(remat_det_choose_phase(l, NULL, 10, 6), 4);
	/* Two minima: the longer plateau wins. */
	int64_t m[] = {2, 3, 2, 2, 2, 7};
	assert_int_equal(remat_det_choose_phase(m, NULL, 6, 6), 4);
	/* Flat: the next op starts an iteration. */
	int64_t f[] = {4, 4, 4, 4};
	assert_int_equal(remat_det_choose_phase(f, NULL, 4, 2), 0);
	/* Flat, as under a program's own pool: after the last copy to the
	 * host of the last period (ops 6..11: the one at op 9), else at its
	 * first copy from the host. */
	int64_t g[12] = {0};
	uint8_t c[12] = {0};
	c[7] = c[9] = REMAT_DET_TO_HOST;
	c[10] = REMAT_DET_FROM_HOST;
	assert_int_equal(remat_det_choose_phase(g, c, 12, 6), 10 % 6);
	c[7] = c[9] = 0;
	assert_int_equal(remat_det_choose_phase(g, c, 12, 6), 10 % 6);
	c[10] = 0;
	c[8] = REMAT_DET_FROM_HOST;
	assert_int_equal(remat_det_choose_phase(g, c, 12, 6), 8 % 6);
}

static void test_identical_layers(void **state)
{
	(void)state;
	static struct stream s;
	memset(&s, 0, sizeof(s));
	for (int it = 0; it < 6; it++)
		step(&s, 8, 3, 0);
	struct remat_detector d;
	remat_det_init(&d, 1 << 20);
	int64_t start = feed(&d, &s, 2);
	size_t P = 1 + 8 + 1 + 8 + 3;
	assert_int_equal(d.period, P);
	assert_true(start >= 0);
	/* The boundary: after the low plateau (optimizer + batch copy),
	 * right before the first forward op. */
	assert_int_equal((size_t)start, s.first_fwd[2]);
	remat_det_fini(&d);
}

/* The detector, fed the stream, profiles an iteration of `period` ops. */
static void whole_iteration_found(const struct stream *s, size_t period)
{
	struct remat_detector d;
	remat_det_init(&d, 1 << 20);
	int64_t start = feed(&d, s, 2);
	assert_int_equal(d.period, period);
	assert_true(start >= 0);
	remat_det_fini(&d);
}

/* Seen with PyTorch on an H100: the radix sort of an embedding's backward
 * runs a memset and a kernel per pass at one level, eight times; the
 * iteration around it moves the level. */
static void test_flat_loop_inside_moving_iteration(void **state)
{
	(void)state;
	static struct stream s;
	memset(&s, 0, sizeof(s));
	for (int it = 0; it < 6; it++) {
		step(&s, 6, 0, 0);
		/* Some flat ops first: the move is only on the way in. */
		for (int t = 0; t < 3; t++)
			op(&s, ADAM + (uint64_t)t * 100);
		s.live += 512;
		for (int t = 0; t < 8; t++) {
			op(&s, TEMP_USE);
			op(&s, TEMP_DONE);
		}
		release(&s, 512);
	}
	whole_iteration_found(&s, 1 + 6 + 1 + 6 + 3 + 16);
}

static void test_different_first_iteration(void **state)
{
	(void)state;
	static struct stream s;
	memset(&s, 0, sizeof(s));
	/* Lazy init: autotuning launches and the optimizer state allocated
	 * on the first step (the level shifts for good). */
	for (int k = 0; k < 7; k++)
		op(&s, AUTOTUNE);
	step(&s, 4, 2, 0);
	s.live += 1 << 20;
	for (int it = 1; it < 7; it++)
		step(&s, 4, 2, 0);
	struct remat_detector d;
	remat_det_init(&d, 1 << 20);
	int64_t start = feed(&d, &s, 2);
	assert_int_equal(d.period, 1 + 4 + 1 + 4 + 2);
	assert_true(start >= 0);
	/* Never inside the odd first iteration, and at a forward start. */
	int found = 0;
	for (size_t it = 2; it < s.iters; it++)
		found |= (size_t)start == s.first_fwd[it];
	assert_true(found);
	remat_det_fini(&d);
}

static void test_odd_iteration(void **state)
{
	(void)state;
	static struct stream s;
	memset(&s, 0, sizeof(s));
	for (int it = 0; it < 2; it++)
		step(&s, 3, 2, 0);
	step(&s, 3, 2, 1); /* an evaluation pass: forward only */
	for (int it = 0; it < 5; it++)
		step(&s, 3, 2, 0);
	struct remat_detector d;
	remat_det_init(&d, 1 << 20);
	/* Warm-up 3: the detector must regain the period after the odd one. */
	int64_t start = feed(&d, &s, 3);
	size_t P = 1 + 3 + 1 + 3 + 2;
	assert_int_equal(d.period, P);
	assert_true(start >= 0);
	assert_true((size_t)start >= s.first_fwd[4]);
	/* Whatever the boundary, the P ops from it repeat the P before. */
	for (size_t k = 0; k < P; k++)
		assert_true(s.sig[start + k - P] == s.sig[start + k]);
	remat_det_fini(&d);
}

/* Each step frees the previous step's buffers and allocates its own
 * between the same two ops: every op runs at the same level, only the gap
 * shows the low point.  The iteration starts at the op after that gap. */
static void test_low_point_between_ops(void **state)
{
	(void)state;
	static struct stream s;
	memset(&s, 0, sizeof(s));
	for (int it = 0; it < 8; it++) {
		if (it)
			release(&s, 3 << 20);
		s.live += 3 << 20;
		s.first_fwd[s.iters++] = s.n;
		op(&s, COPY);
		op(&s, FWD);
		op(&s, FWD + 100);
		op(&s, LOSS);
	}
	struct remat_detector d;
	remat_det_init(&d, 1 << 20);
	int64_t start = feed(&d, &s, 2);
	assert_int_equal(d.period, 4);
	assert_true(start >= 0);
	assert_int_equal((size_t)start % 4, 0); /* at COPY, right after the gap */
	remat_det_fini(&d);
}

static void test_mismatch_drops_period(void **state)
{
	(void)state;
	static struct stream s;
	memset(&s, 0, sizeof(s));
	for (int it = 0; it < 4; it++)
		step(&s, 2, 1, 0);
	struct remat_detector d;
	remat_det_init(&d, 1 << 20);
	for (size_t i = 0; i < s.n; i++)
		push(&d, s.sig[i], s.level[i], s.gap[i]);
	assert_true(remat_det_steady(&d));
	push(&d, EVAL, 12345, 12345);
	assert_int_equal(d.period, 0);
	assert_false(remat_det_steady(&d));
	remat_det_fini(&d);
}

/* darknet's char-RNN, as libremat first saw it (issue 31): memory
 * allocated once (flat), and an optimizer step that runs the same two
 * kernels over every layer's tensors.  That loop repeats for longer than
 * four of its periods, but each time round on other buffers: it is no
 * iteration.  The whole step, forward over the same buffers every time, is
 * the only period found steady; without the arguments the loop was. */
static void test_loop_over_tensors_is_not_an_iteration(void **state)
{
	(void)state;
	enum { LAYERS = 12, FWD = 6 };
	for (int args_known = 0; args_known < 2; args_known++) {
		struct remat_detector d;
		remat_det_init(&d, 1 << 20);
		size_t first_steady = 0;
		for (int step = 0; step < 6 && !first_steady; step++) {
			for (int k = 0; k < FWD + 2 * LAYERS && !first_steady; k++) {
				struct remat_det_op op = {.level = 1000, .gap = 1000};
				if (k < FWD) {
					op.sig = 100 + (uint64_t)k;
					op.args = 5000 + (uint64_t)k;
				} else {
					int l = (k - FWD) / 2;
					op.sig = (k - FWD) % 2 ? 201 : 200; /* axpy, scal */
					op.args = 7000 + 10 * (uint64_t)l + (uint64_t)(k % 2);
				}
				op.args = args_known ? op.args : 0;
				push_op(&d, &op);
				if (remat_det_steady(&d))
					first_steady = d.period;
			}
		}
		if (args_known)
			assert_int_equal(first_steady, FWD + 2 * LAYERS);
		else
			assert_int_equal(first_steady, 2); /* what it did */
		remat_det_fini(&d);
	}
}

static void test_history_limit(void **state)
{
	(void)state;
	struct remat_detector d;
	remat_det_init(&d, 100);
	for (uint64_t i = 0; i < 100; i++)
		assert_true(push(&d, i, (int64_t)i, (int64_t)i) >= 0);
	assert_int_equal(push(&d, 1000, 0, 0), -1);
	assert_int_equal(d.full, 1);
	remat_det_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_period_matches_definition),
	    cmocka_unit_test(test_choose_phase_pure),
	    cmocka_unit_test(test_identical_layers),
	    cmocka_unit_test(test_different_first_iteration),
	    cmocka_unit_test(test_flat_loop_inside_moving_iteration),
	    cmocka_unit_test(test_odd_iteration),
	    cmocka_unit_test(test_mismatch_drops_period),
	    cmocka_unit_test(test_history_limit),
	    cmocka_unit_test(test_loop_over_tensors_is_not_an_iteration),
	    cmocka_unit_test(test_flat_runs_are_not_iterations),
	    cmocka_unit_test(test_low_point_between_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
