/*
 * test_warp.c — warp-level CUDA built by sim/bin/simcc (simcc_warp.cu), run
 * straight through libsimcuda_kernel.so's grid runner.  Every expected
 * value is worked out here from the CUDA documentation's definitions
 * (shuffle segments, votes over the lanes taking part, butterfly sums),
 * not from the simulator.  Misuse (a deadlock, lanes that disagree on the
 * mask, a lane outside its own mask, a bad width) must end the process
 * with one message; those run in a child.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "child.h"
#include "simcc_test.h"

#ifndef SIMCC_WARP_MODULE
#define SIMCC_WARP_MODULE "build/simcc/simcc_warp.so"
#endif
static const struct simcuda_module *mod;

static const struct simcuda_kernel *kernel(const char *name)
{
	return simcc_kernel(mod, name);
}

static void run(const char *name, unsigned blocks, unsigned threads, void *const *args)
{
	simcuda_dim3 grid = {blocks, 1, 1}, block = {threads, 1, 1};
	assert_int_equal(simcuda_run_grid(kernel(name), args, grid, block, 0), 0);
}

static int load(void **state)
{
	(void)state;
	mod = simcc_open(SIMCC_WARP_MODULE);
	return mod ? 0 : -1;
}

/* nvcc's names: extern "C" plain, C++ mangled (also inside a namespace
 * and for a static kernel, which nvcc mangles without a linkage mark). */
static void kernels_carry_nvcc_names(void **state)
{
	(void)state;
	static const char *names[] = {"_Z8shufflesPii", "_Z5votesPjPKi", "bits",
	                              "_ZN10simcc_test5scaleEPff", "_Z7add_onePi"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		assert_non_null(kernel(names[i]));
	assert_int_equal(kernel("_Z8shufflesPii")->synchronizes, 1);
	assert_int_equal(kernel("bits")->synchronizes, 0);
	assert_int_equal(kernel("_Z5tilesPKfPf")->synchronizes, 1);
}

/* Thread t of the `shuffles` kernel holds 100 * warp + lane. */
static int value(int warp, int lane)
{
	return 100 * warp + lane;
}

static void check_shuffles(int width)
{
	enum { T = 64 };
	int out[8 * T];
	memset(out, 0x55, sizeof out);
	int *p = out;
	void *args[] = {&p, &width};
	run("_Z8shufflesPii", 1, T, args);
	for (int t = 0; t < T; t++) {
		int warp = t / 32, lane = t % 32, seg = lane / width * width, *o = out + 8 * t;
		int own = value(warp, lane);
		/* idx: srcLane modulo width, inside the lane's own segment */
		assert_int_equal(o[0], value(warp, seg + (lane + 3) % width));
		/* up 2: lanes whose source would fall before the segment keep theirs */
		assert_int_equal(o[1], lane - 2 >= seg ? value(warp, lane - 2) : own);
		/* down 5: lanes whose source would pass the segment's end keep theirs */
		assert_int_equal(o[2], lane + 5 < seg + width ? value(warp, lane + 5) : own);
		/* xor 6: earlier segments may be read, later ones give the own value */
		int x = lane ^ 6;
		assert_int_equal(o[3], x / width <= lane / width ? value(warp, x) : own);
		/* srcLane -1 is width - 1 of the segment */
		assert_int_equal(o[4], value(warp, seg + width - 1));
		/* a double, down 1 */
		int d = lane + 1 < seg + width ? value(warp, lane + 1) : own;
		assert_int_equal(o[5], 2 * d + 1);
		/* a long long, xor 1: both halves of the 64 bits move */
		x = lane ^ 1;
		assert_int_equal(o[6], 300000 + (x / width <= lane / width ? value(warp, x) : own));
		/* an unsigned from lane 0 of the segment */
		assert_int_equal(o[7], 3 * value(warp, seg));
	}
}

static void shuffle_variants(void **state)
{
	(void)state;
	check_shuffles(32);
	check_shuffles(8);
	check_shuffles(1);
	/* Lane 9 at width 8 is in segment 8-15: up 2 would read lane 7, before
	 * the segment, so it keeps its 9; down 5 reads 14; xor 6 reads 15. */
	int out[8 * 64], width = 8, *p = out;
	void *args[] = {&p, &width};
	run("_Z8shufflesPii", 1, 64, args);
	assert_int_equal(out[8 * 9 + 1], 9);
	assert_int_equal(out[8 * 9 + 2], 14);
	assert_int_equal(out[8 * 9 + 3], 15);
	assert_int_equal(out[8 * 41 + 0], 112); /* warp 1 lane 9: lane 8 + (12 % 8) */
}

static void votes_with_partial_warp(void **state)
{
	(void)state;
	enum { T = 48 };
	int pred[T];
	unsigned out[4 * T];
	for (int t = 0; t < T; t++)
		pred[t] = t >= 32 ? 1 : t % 3 == 0;
	int *pp = pred;
	unsigned *po = out;
	void *args[] = {&po, &pp};
	run("_Z5votesPjPKi", 1, T, args);
	for (int t = 0; t < 32; t++) {
		assert_int_equal(out[4 * t + 0], 0x49249249u); /* lanes 0, 3, ..., 30 */
		assert_int_equal(out[4 * t + 1], 1);
		assert_int_equal(out[4 * t + 2], 0);
		assert_int_equal(out[4 * t + 3], t < 16 ? 0x00009249u : 0x49240000u);
	}
	/* Warp 1 has lanes 0-15 only: the missing lanes do not vote. */
	for (int t = 32; t < T; t++) {
		assert_int_equal(out[4 * t + 0], 0x0000ffffu);
		assert_int_equal(out[4 * t + 1], 1);
		assert_int_equal(out[4 * t + 2], 1);
		assert_int_equal(out[4 * t + 3], 0x0000ffffu);
	}
}

/* Warp w rotates w + 1 times, then does 5 - w % 5 butterfly rounds
 * (masks 16, 8, ...): lane l then holds the sum over the lanes that
 * differ from l only in the bits of the masks used. */
static void warps_take_different_numbers_of_shuffles(void **state)
{
	(void)state;
	enum { BLOCKS = 2, T = 128, W = T / 32 };
	int in[BLOCKS * T], out[2 * BLOCKS * T];
	for (int i = 0; i < BLOCKS * T; i++)
		in[i] = (i * 37) % 1001;
	int *pi = in, *po = out;
	void *args[] = {&pi, &po};
	run("_Z13uneven_roundsPKiPi", BLOCKS, T, args);
	for (int b = 0; b < BLOCKS; b++)
		for (int t = 0; t < T; t++) {
			int w = t / 32, l = t % 32, base = b * T;
			int rotated = in[base + w * 32 + (l + w + 1) % 32];
			int nw = (w + 1) % W;
			int first = in[base + nw * 32 + (nw + 1) % 32];
			assert_int_equal(out[2 * (base + t)], rotated + first);
			int rounds = 5 - w % 5, used = 0;
			for (int r = 0, m = 16; r < rounds; r++, m >>= 1)
				used |= m;
			int sum = 0;
			for (int k = 0; k < 32; k++)
				if ((k & ~used) == (l & ~used))
					sum += in[base + w * 32 + (k + w + 1) % 32];
			assert_int_equal(out[2 * (base + t) + 1], sum);
		}
}

static void exited_lanes_count_as_arrived(void **state)
{
	(void)state;
	enum { T = 64 };
	int out[2 * T];
	memset(out, 0x77, sizeof out);
	int *po = out;
	void *args[] = {&po};
	run("_Z10exit_earlyPi", 1, T, args);
	for (int t = 0; t < 48; t++) {
		int lane = t % 32;
		int want = lane < 16 ? (t < 32 ? t + 16 : (int)(unsigned)SIMCUDA_WARP_JUNK) : t;
		assert_int_equal(out[2 * t], want);
		/* within each half warp, lane 3 of the half */
		assert_int_equal(out[2 * t + 1], (t & ~15) + 3);
	}
	for (int t = 48; t < T; t++)
		assert_int_equal(out[2 * t], 0x77777777);
}

static void activemask_follows_the_branches(void **state)
{
	(void)state;
	enum { T = 40 };
	unsigned out[2 * T];
	unsigned *po = out;
	void *args[] = {&po};
	run("_Z12active_lanesPj", 1, T, args);
	for (int t = 0; t < T; t++) {
		int lane = t % 32;
		unsigned whole = t < 32 ? 0xffffffffu : 0x000000ffu;
		unsigned side = lane < 10 ? 0x000003ffu : lane < 20 ? 0x000ffc00u : 0xfff00000u;
		assert_int_equal(out[2 * t], whole);
		assert_int_equal(out[2 * t + 1], side & whole);
	}
}

static void cooperative_groups_tiles(void **state)
{
	(void)state;
	enum { T = 64 };
	float in[T], out[8 * T];
	for (int t = 0; t < T; t++)
		in[t] = (float)((t * 7) % 23 - 11);
	float *pi = in, *po = out;
	void *args[] = {&pi, &po};
	run("_Z5tilesPKfPf", 1, T, args);
	for (int t = 0; t < T; t++) {
		int w = t / 32, o8 = t / 8 * 8;
		float sum = 0, mx = -1e30f, mn = 1e30f;
		unsigned positive = 0;
		for (int k = 0; k < 32; k++) {
			sum += in[32 * w + k];
			mx = in[32 * w + k] > mx ? in[32 * w + k] : mx;
		}
		for (int k = 0; k < 8; k++) {
			mn = in[o8 + k] < mn ? in[o8 + k] : mn;
			positive |= (unsigned)(in[o8 + k] > 0) << k;
		}
		const float *o = out + 8 * t;
		assert_true(o[0] == sum);
		assert_true(o[1] == mx);
		assert_true(o[2] == mn);
		assert_true(o[3] == (t % 8 < 7 ? in[t + 1] : in[t]));
		assert_true(o[4] == (float)w);
		assert_true(o[5] == 2.0f);
		assert_true(o[6] == (float)(t % 8));
		assert_true(o[7] == (float)positive);
	}
}

static void integer_intrinsics(void **state)
{
	(void)state;
	unsigned in[] = {0x1u, 0xf0000000u, 0x12345678u};
	size_t n = 3;
	unsigned long long out[9 * 3];
	unsigned *pi = in;
	unsigned long long *po = out;
	void *args[] = {&pi, &po, &n};
	run("bits", 1, 3, args);
	/* thread 0: x = 1, wide = 1 << 32 | 0xf0000000 */
	static const unsigned long long want0[] = {1, 5, 0x80000000u, 0x0000000f80000000ull, 31, 1,
	                                           2, 2, 32};
	/* thread 1: x = 0xf0000000, wide = x << 32 | 0x12345678 */
	static const unsigned long long want1[] = {4, 17, 0x0000000fu, 0x1e6a2c480000000full, 0, 29,
	                                           3, 2,  32};
	/* thread 2: x = 0x12345678, wide = x << 32 | 1 */
	static const unsigned long long want2[] = {13, 14, 0x1e6a2c48u, 0x800000001e6a2c48ull, 3, 4,
	                                           3,  2,  32};
	for (int k = 0; k < 9; k++) {
		assert_int_equal(out[k], want0[k]);
		assert_int_equal(out[9 + k], want1[k]);
		assert_int_equal(out[18 + k], want2[k]);
	}
}

/* The child: runs one misusing kernel in a block of 32 threads. */
static int run_misuse(const char *name)
{
	mod = simcc_open(SIMCC_WARP_MODULE);
	int out[32], *po = out;
	void *args[] = {&po};
	simcuda_dim3 grid = {1, 1, 1}, block = {32, 1, 1};
	return mod ? simcuda_run_grid(simcc_kernel(mod, name), args, grid, block, 0) : 2;
}

static void dies_with(const char *name, const char *text)
{
	struct child_result r = run_child(name, NULL);
	assert_died_with(&r, text);
}

static void misuse_is_refused(void **state)
{
	(void)state;
	dies_with("_Z16deadlock_barrierPi",
	          "kernel '_Z16deadlock_barrierPi' block (0,0,0): deadlock, no thread can go on: "
	          "warp 0 lanes 0-4,6-31 in __shfl_sync(mask 0xffffffff); warp 0 lane 5 at "
	          "__syncthreads");
	dies_with("_Z13mask_mismatchPi", "warp 0: lane 16 calls __shfl_sync(mask 0xffff0000) "
	                                 "while lane 0 waits in __shfl_sync(mask 0xffffffff)");
	dies_with(
	    "_Z11not_in_maskPi",
	    "thread 1 calls __shfl_sync with mask 0x00000001, which leaves out its own lane 1");
	dies_with("_Z9bad_widthPi",
	          "thread 0 calls __shfl_sync with width 12 (a power of two from 1 to 32)");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return run_misuse(argv[1]);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(kernels_carry_nvcc_names),
	    cmocka_unit_test(shuffle_variants),
	    cmocka_unit_test(votes_with_partial_warp),
	    cmocka_unit_test(warps_take_different_numbers_of_shuffles),
	    cmocka_unit_test(exited_lanes_count_as_arrived),
	    cmocka_unit_test(activemask_follows_the_branches),
	    cmocka_unit_test(cooperative_groups_tiles),
	    cmocka_unit_test(integer_intrinsics),
	    cmocka_unit_test(misuse_is_refused),
	};
	return cmocka_run_group_tests(tests, load, NULL);
}
