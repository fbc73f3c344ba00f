/*
 * test_park.c — replay_park_forget (replay/park.c): the program frees an
 * allocation while the plan keeps buffers parked on the host.  The host
 * copies of exactly the parked buffers that start inside the freed range
 * are dropped (those buffers are neither evicted nor live any more, and
 * leave the evicted list); parked buffers outside it and buffers inside it
 * that are not parked stay as they were.  The buffers' ids are not in
 * address order, so that a lookup by id order would find the wrong ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../core/config.h"
#include "../../replay/internal.h"
#include "../core/fake_driver.h"

struct remat_config remat_cfg;

#ifndef NB
#define NB 64
#endif
#define STEP 0x1000ull
#define BASE 0x7000000000ull

static CUstream S1 = (CUstream)0x111;

/* Buffer b lies at slot (b * 37) % NB: every slot once, ids shuffled. */
static uint64_t slot_of(int32_t b)
{
	return (uint64_t)(b * 37 % NB);
}

static struct remat_profile *make_profile(void)
{
	struct remat_profile *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->refs = 1;
	p->nbufs = NB;
	p->bufs = calloc(NB, sizeof(*p->bufs));
	assert_non_null(p->bufs);
	for (int32_t b = 0; b < NB; b++)
		p->bufs[b] = (struct prof_buf){.addr = BASE + slot_of(b) * STEP,
		                               .size = STEP,
		                               .rounded = STEP,
		                               .alloc_at = -1,
		                               .free_at = -1,
		                               .alloc_seq = -1};
	p->streams = calloc(2, sizeof(*p->streams));
	assert_non_null(p->streams);
	p->streams[1] = S1;
	p->nstreams = 2;
	return p;
}

static int parked_slot(uint64_t s)
{
	return s % 2 == 0 || s == 15;
}

static int setup(void **state)
{
	(void)state;
	fake_install();
	static const struct replay_hooks none;
	replay_start(make_profile(), 1 << 30, 0, 0, &none);
	/* What an applied plan that parks leaves: the parked buffers on the
	 * host, unmapped, in the evicted list. */
	replay_engine.off = calloc(NB, 1);
	replay_engine.park_at = calloc(NB, sizeof(*replay_engine.park_at));
	assert_non_null(replay_engine.off);
	assert_non_null(replay_engine.park_at);
	for (int32_t b = 0; b < NB; b++) {
		replay_engine.live[b] = 1;
		if (!parked_slot(slot_of(b)))
			continue;
		replay_engine.park_at[b] = 1 + slot_of(b) * STEP;
		replay_engine.off[b] = REPLAY_OFF_PARKED;
		replay_engine.evicted[b] = 1;
		replay_iv_add(b);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	/* No plan installed these: taken back here, so that nothing tries to
	 * copy the parked buffers back from a pool that does not exist. */
	free(replay_engine.off);
	free(replay_engine.park_at);
	replay_engine.off = NULL;
	replay_engine.park_at = NULL;
	replay_shutdown();
	return 0;
}

static int in_evicted_list(int32_t b)
{
	for (int32_t i = 0; i < replay_engine.niv; i++)
		if (replay_engine.iv[i].buf == b)
			return 1;
	return 0;
}

/* The allocation [slot 16, slot 24): slots 16, 18, 20, 22 were parked. */
static void test_forget_parked_in_range(void **state)
{
	(void)state;
	int32_t niv = replay_engine.niv;
	replay_park_forget(BASE + 16 * STEP, 8 * STEP);
	assert_int_equal(replay_engine.niv, niv - 4);
	for (int32_t b = 0; b < NB; b++) {
		uint64_t s = slot_of(b);
		int inside = s >= 16 && s < 24, parked = parked_slot(s);
		if (inside && parked) {
			assert_int_equal(replay_engine.off[b], REPLAY_OFF_NONE);
			assert_int_equal(replay_engine.evicted[b], 0);
			assert_int_equal(replay_engine.live[b], 0);
			assert_false(in_evicted_list(b));
		} else {
			assert_int_equal(replay_engine.off[b],
			                 parked ? REPLAY_OFF_PARKED : REPLAY_OFF_NONE);
			assert_int_equal(replay_engine.evicted[b], parked);
			assert_int_equal(replay_engine.live[b], 1);
			assert_int_equal(in_evicted_list(b), parked);
		}
	}
	/* The evicted list stays sorted by address. */
	for (int32_t i = 1; i < replay_engine.niv; i++)
		assert_true(replay_engine.iv[i - 1].lo < replay_engine.iv[i].lo);
}

/* A range that starts inside a buffer and one past every buffer forget
 * nothing: only buffers starting in the range belong to the allocation. */
static void test_forget_nothing_outside(void **state)
{
	(void)state;
	int32_t niv = replay_engine.niv;
	replay_park_forget(BASE + 2 * STEP + 1, STEP - 1);
	replay_park_forget(BASE + NB * STEP, 4 * STEP);
	replay_park_forget(BASE - 4 * STEP, 4 * STEP);
	assert_int_equal(replay_engine.niv, niv);
	for (int32_t b = 0; b < NB; b++)
		assert_int_equal(replay_engine.off[b],
		                 parked_slot(slot_of(b)) ? REPLAY_OFF_PARKED : REPLAY_OFF_NONE);
}

/* The whole range: every parked buffer goes, the others stay live. */
static void test_forget_all(void **state)
{
	(void)state;
	replay_park_forget(BASE, NB * STEP);
	assert_int_equal(replay_engine.niv, 0);
	for (int32_t b = 0; b < NB; b++) {
		assert_int_equal(replay_engine.off[b], REPLAY_OFF_NONE);
		assert_int_equal(replay_engine.live[b], !parked_slot(slot_of(b)));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_forget_parked_in_range, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_forget_nothing_outside, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_forget_all, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
