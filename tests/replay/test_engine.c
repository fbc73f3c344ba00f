/*
 * test_engine.c — the replay engine's state machine (replay/), driven op by
 * op like the session drives it, on the real allocator and the fake driver
 * (tests/core/fake_driver.h), whose kernels compute on the memory they
 * point to and fail the test on any access to an unmapped page.
 *
 * The program: three persistent buffers G, G2, G3 and, each iteration,
 * three activations allocated on the way and freed in the backward pass:
 *
 *     alloc a; op0 a = k(-, 1); alloc b; op1 b = k(a, 2); alloc c;
 *     op2 c = k(b, 3); op3 G = k(c, 4); free c; op4 G2 = k(b, 5); free b;
 *     op5 G3 = k(a, 6); free a; op6 G = k(G, 7)
 *
 * with k(in, seed)[i] = in[i] * 3 + seed + i (bytes).  The plan evicts a
 * after op1 and b after op2, rebuilds both before op4 (a only to rebuild b,
 * released again) and a before op5: a peak of 10 chunks instead of 12.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../alloc/alloc.h"
#include "../../core/config.h"
#include "../../core/driver.h"
#include "../../replay/replay.h"
#include "../core/fake_driver.h"

struct remat_config remat_cfg;

#define SZ   (2 * FAKE_GRAN)
#define NOPS 7

static int hidden_state; /* what the "indirect" kernel reads besides its parameters */
static int indirect;     /* op0 reads hidden_state (verification must catch it) */

static void k_run(void **params)
{
	uint64_t in, out, n, seed;
	memcpy(&in, params[0], 8);
	memcpy(&out, params[1], 8);
	memcpy(&n, params[2], 8);
	memcpy(&seed, params[3], 8);
	for (uint64_t i = 0; i < n; i++) {
		uint8_t x = in ? *fake_byte(in + i) : 0;
		*fake_byte(out + i) =
		    (uint8_t)(x * 3 + seed + i + (indirect && !in ? hidden_state : 0));
	}
}
static struct fake_kernel kern = {"k", k_run};
static CUstream S1 = (CUstream)0x111;

/* The program's buffers, this iteration's activations. */
static CUdeviceptr G, G2, G3, a, b, c;

/* ---- what the session does around the program's calls ------------------- */

static int verdicts[8]; /* counts of each replay verdict seen */
static int replaying;   /* the engine follows the program (it has not said stop) */

/* An op of the program: kernel k on S1.  The engine tells ops apart by
 * function and launch configuration: op n of the profile has grid n + 1. */
static int op_failures; /* the program's launches that returned an error */

static void prog_op_grid(CUdeviceptr in, CUdeviceptr out, uint64_t seed, unsigned grid)
{
	uint64_t n = SZ;
	void *kp[4] = {&in, &out, &n, &seed};
	struct remat_op op = {.kind = REMAT_OP_KERNEL, .func = &kern, .stream = S1, .params = kp};
	op.grid[0] = grid;
	op.grid[1] = op.grid[2] = 1;
	op.block[0] = op.block[1] = op.block[2] = 1;
	enum replay_verdict v = replaying ? replay_op_begin(&op) : REPLAY_CONTINUE;
	verdicts[v]++;
	if (v == REPLAY_STOP || v == REPLAY_REPROFILE || v == REPLAY_FAIL)
		replaying = 0;
	if (v == REPLAY_FAIL) {
		op_failures++; /* the session gives the op the error instead */
		return;
	}
	if (remat_drv.cuLaunchKernel((CUfunction)&kern, grid, 1, 1, 1, 1, 1, 0, S1, kp, NULL) !=
	    CUDA_SUCCESS) {
		op_failures++;
		return;
	}
	if (v == REPLAY_EVICT_AFTER)
		replay_op_end(&op, CUDA_SUCCESS);
}

/* Op seed - 1 of the profile (the seed is the op's position + 1). */
static void prog_op(CUdeviceptr in, CUdeviceptr out, uint64_t seed)
{
	prog_op_grid(in, out, seed, (unsigned)seed);
}

static CUdeviceptr prog_alloc(void)
{
	CUdeviceptr p;
	struct remat_alloc_info info;
	if (replaying)
		replay_alloc_before();
	if (remat_alloc(&p, SZ, S1, 1, &info) != CUDA_SUCCESS)
		fail_msg("allocation refused: %s", fake.last_warn);
	if (replaying)
		replay_alloc(p, SZ);
	return p;
}

static void prog_free(CUdeviceptr p)
{
	CUresult rc;
	if (replaying)
		replay_free(p);
	assert_int_equal(remat_free(p, S1, 1, &rc), 1);
}

/* One iteration; extra: an op the profile does not have, before op3;
 * touch: op3 reads a (evicted then) instead of c; after(k), when given,
 * runs once op k is issued. */
static void observe(void (*after)(int op), int op)
{
	if (after)
		after(op);
}

static void iteration_with(int extra, int touch, void (*after)(int op))
{
	a = prog_alloc();
	prog_op(0, a, 1);
	observe(after, 0);
	b = prog_alloc();
	prog_op(a, b, 2);
	observe(after, 1);
	c = prog_alloc();
	prog_op(b, c, 3);
	observe(after, 2);
	if (extra)
		prog_op_grid(c, G2, 9, 99);
	prog_op(touch ? a : c, G, 4);
	observe(after, 3);
	prog_free(c);
	prog_op(b, G2, 5);
	observe(after, 4);
	prog_free(b);
	prog_op(a, G3, 6);
	observe(after, 5);
	prog_free(a);
	prog_op(G, G, 7);
	observe(after, 6);
}

static void iteration(int extra, int touch)
{
	iteration_with(extra, touch, NULL);
}

/* G, G2, G3 after one iteration, computed on the host. */
static void expected(uint8_t *g, uint8_t *g2, uint8_t *g3, int touch)
{
	for (uint64_t i = 0; i < SZ; i++) {
		uint8_t va = (uint8_t)(1 + i + (indirect ? hidden_state : 0));
		uint8_t vb = (uint8_t)(va * 3 + 2 + i), vc = (uint8_t)(vb * 3 + 3 + i);
		uint8_t vg = (uint8_t)((touch ? va : vc) * 3 + 4 + i);
		g[i] = (uint8_t)(vg * 3 + 7 + i);
		g2[i] = (uint8_t)(vb * 3 + 5 + i);
		g3[i] = (uint8_t)(va * 3 + 6 + i);
	}
}

static void check_results(int touch)
{
	static uint8_t want[3][SZ], got[SZ];
	expected(want[0], want[1], want[2], touch);
	CUdeviceptr out[3] = {G, G2, G3};
	for (int i = 0; i < 3; i++) {
		fake_read(got, out[i], SZ);
		if (memcmp(got, want[i], SZ))
			fail_msg("buffer G%d differs from the unmodified program's", i + 1);
	}
}

/* ---- the profile and the plan --------------------------------------------- */

static uint32_t layout[4][2] = {{0, 8}, {8, 8}, {16, 8}, {24, 8}};
static int32_t ids[NOPS][2][2] = {
    /* reads, writes (-1: none): buffers G 0, G2 1, G3 2, a 3, b 4, c 5 */
    {{-1, -1}, {3, -1}}, {{3, -1}, {4, -1}}, {{4, -1}, {5, -1}}, {{5, -1}, {0, -1}},
    {{4, -1}, {1, -1}},  {{3, -1}, {2, -1}}, {{0, -1}, {0, -1}},
};

/* The profile of one iteration as the profiler would record it: addresses
 * are the ones the allocator gives the first iteration. */
static struct remat_profile *make_profile(void)
{
	struct remat_profile *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->refs = 1;
	p->graph_hash = 0x1234;
	p->nops = NOPS;
	p->ops = calloc(NOPS, sizeof(*p->ops));
	p->nkernels = 1;
	p->kernels = calloc(1, sizeof(*p->kernels));
	p->kernels[0].name = strdup("k");
	p->kernels[0].layout_known = 1;
	p->kernels[0].nparams = 4;
	p->kernels[0].param = malloc(sizeof(layout));
	memcpy(p->kernels[0].param, layout, sizeof(layout));
	p->kernels[0].param_bytes = 32;
	for (int k = 0; k < NOPS; k++) {
		struct prof_op *o = &p->ops[k];
		o->kind = REMAT_OP_KERNEL;
		o->func = &kern;
		o->cstream = S1;
		o->stream = 1;
		o->kernel = 0;
		o->grid[0] = (unsigned)k + 1;
		o->grid[1] = o->grid[2] = 1;
		o->block[0] = o->block[1] = o->block[2] = 1;
		o->params_len = 32;
		o->replayable = 1;
		o->reads = calloc(2, sizeof(int32_t));
		o->writes = calloc(2, sizeof(int32_t));
		for (int i = 0; i < 2 && ids[k][0][i] >= 0; i++)
			o->reads[o->nreads++] = ids[k][0][i];
		for (int i = 0; i < 2 && ids[k][1][i] >= 0; i++)
			o->writes[o->nwrites++] = ids[k][1][i];
	}
	CUdeviceptr addr[6] = {G, G2, G3, a, b, c};
	int64_t alloc_at[6] = {-1, -1, -1, 0, 1, 2}, free_at[6] = {-1, -1, -1, 6, 5, 4};
	p->nbufs = 6;
	p->bufs = calloc(6, sizeof(*p->bufs));
	for (int i = 0; i < 6; i++)
		p->bufs[i] = (struct prof_buf){.addr = addr[i],
		                               .size = SZ,
		                               .rounded = SZ,
		                               .alloc_at = alloc_at[i],
		                               .free_at = free_at[i],
		                               .alloc_seq = i < 3 ? -1 : i - 3};
	p->streams = calloc(2, sizeof(*p->streams));
	p->streams[1] = S1;
	p->nstreams = 2;
	p->level0 = 4 * SZ; /* G, G2, G3, and a, allocated just before op 0 */
	return p;
}

/* The plan pb built, for the profile's graph, its peak the budget. */
static struct pl_plan *finish_plan(struct pl_plan_builder *pb, int64_t peak)
{
	struct pl_plan *pl = pl_builder_finish(pb);
	assert_non_null(pl);
	pl->graph_hash = 0x1234;
	pl->budget = peak;
	pl->peak = peak;
	return pl;
}

static struct pl_plan *make_plan(void)
{
	struct pl_plan_builder *pb = pl_builder_new(NOPS);
	pl_builder_evict(pb, 1, 3); /* a after op1 */
	pl_builder_evict(pb, 2, 4); /* b after op2 */
	int steps4[][2] = {{PL_STEP_MAP, 3},
	                   {PL_STEP_REPLAY, 0},
	                   {PL_STEP_MAP, 4},
	                   {PL_STEP_REPLAY, 1},
	                   {PL_STEP_RELEASE, 3}};
	for (size_t i = 0; i < 5; i++)
		pl_builder_step(pb, 4, steps4[i][0], steps4[i][1]);
	pl_builder_step(pb, 5, PL_STEP_MAP, 3);
	pl_builder_step(pb, 5, PL_STEP_REPLAY, 0);
	return finish_plan(pb, 10 * FAKE_GRAN);
}

/* ---- the session's side: plans on demand ---------------------------------- */

static enum replay_plan_answer answer = REPLAY_PLAN_WAIT;
static struct pl_plan *(*plan_maker)(void) = make_plan;
static int polls, rejected, replans, excluded[8], nexcluded;

static enum replay_plan_answer poll_plan(struct pl_plan **out)
{
	polls++;
	if (answer == REPLAY_PLAN_READY)
		*out = plan_maker();
	enum replay_plan_answer a0 = answer;
	if (answer == REPLAY_PLAN_READY)
		answer = REPLAY_PLAN_WAIT; /* handed out once */
	return a0;
}
static char reject_why[512];
static int reject_plan(const char *why)
{
	rejected++;
	snprintf(reject_why, sizeof(reject_why), "%s", why);
	return 0;
}
static int replan(const int32_t *list, int n)
{
	replans++;
	nexcluded = n < 8 ? n : 8;
	memcpy(excluded, list, (size_t)nexcluded * sizeof(*list));
	answer = REPLAY_PLAN_READY;
	return 0;
}
static const struct replay_hooks hooks = {poll_plan, reject_plan, replan};

/* Set-up as in a process: the persistent buffers, then one unmodified
 * iteration profiled with freed ranges quarantined, so every buffer of the
 * profile has an address of its own. */
static int setup(void **state)
{
	(void)state;
	static int device;
	fake.dev = ++device; /* a fresh device (and allocator state) per test */
	fake_install();
	fake.events_complete_at_record = 1;
	memset(verdicts, 0, sizeof(verdicts));
	op_failures = 0;
	fake.fail_launch_at = fake.sticky = 0;
	answer = REPLAY_PLAN_WAIT;
	plan_maker = make_plan;
	polls = rejected = replans = 0;
	nexcluded = 0;
	indirect = 0;
	remat_cfg.verify = 0;
	struct remat_alloc_info info;
	assert_int_equal(remat_alloc(&G, SZ, S1, 1, &info), CUDA_SUCCESS);
	assert_int_equal(remat_alloc(&G2, SZ, S1, 1, &info), CUDA_SUCCESS);
	assert_int_equal(remat_alloc(&G3, SZ, S1, 1, &info), CUDA_SUCCESS);
	remat_alloc_quarantine(1);
	/* The profiled iteration: no replay engine yet, so do its part. */
	CUresult rc;
	CUdeviceptr addrs[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(remat_alloc(&addrs[i], SZ, S1, 1, &info), CUDA_SUCCESS);
	a = addrs[0], b = addrs[1], c = addrs[2];
	for (int i = 0; i < 3; i++)
		assert_int_equal(remat_free(addrs[i], S1, 1, &rc), 1);
	remat_alloc_boundary(1);
	replay_start(make_profile(), 10 * FAKE_GRAN, 3 * SZ, 3, &hooks);
	replaying = 1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	replay_shutdown();
	/* What a test's engine left in the allocator goes: the next test's
	 * budget counts every device's chunks. */
	remat_alloc_set_budget(0);
	remat_alloc_follow(NULL, 0);
	remat_alloc_quarantine(0);
	CUresult rc;
	CUdeviceptr left[] = {G, G2, G3, a, b, c};
	for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++)
		if (remat_alloc_owns(left[i], NULL))
			remat_free(left[i], NULL, 0, &rc);
	remat_alloc_boundary(1);
	return 0;
}

/* ---- the tests --------------------------------------------------------------- */

/* The plan's evictions as the allocator sees them: unmapped, or waiting to
 * be once the stream gets there. */
static void evictions_seen(int op)
{
	if (op == 2)
		assert_false(remat_alloc_mapped(a, SZ)); /* evicted after op1 */
	if (op == 3)
		assert_false(remat_alloc_mapped(b, SZ)); /* evicted after op2 */
	if (op == 4)
		assert_false(remat_alloc_mapped(a, SZ)); /* rebuilt for b, released again */
}

/* No plan yet: the iterations are followed, nothing is evicted; the plan
 * that arrives at a boundary applies from the next iteration, evicting and
 * rebuilding as planned, bit-identical, within the budget. */
static void test_plan_applies(void **state)
{
	(void)state;
	iteration(0, 0);
	check_results(0);
	assert_int_equal(polls, 0); /* the boundary comes with the next iteration */
	iteration(0, 0);
	assert_int_equal(polls, 1);
	assert_int_equal(verdicts[REPLAY_EVICT_AFTER], 0);
	answer = REPLAY_PLAN_READY; /* arrives at the next boundary */
	for (int it = 0; it < 3; it++) {
		memset(verdicts, 0, sizeof(verdicts));
		remat_alloc_reset_peak();
		iteration_with(0, 0, evictions_seen);
		check_results(0);
		assert_int_equal(verdicts[REPLAY_EVICT_AFTER], 2);
		struct remat_alloc_stats st;
		remat_alloc_stats(&st);
		assert_true(st.peak <= 10 * FAKE_GRAN);
	}
}

/* Another op: what is evicted is rebuilt, the rest of the iteration runs
 * unmodified; the next iteration like the profiled one applies the plan
 * again; three divergent iterations in a row ask for a new profile. */
static void test_divergence(void **state)
{
	(void)state;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0); /* applies the plan */
	iteration(1, 0);
	check_results(0);
	iteration(0, 0);
	check_results(0);
	memset(verdicts, 0, sizeof(verdicts));
	iteration(0, 0);
	assert_int_equal(verdicts[REPLAY_EVICT_AFTER], 2); /* applied again */
	memset(verdicts, 0, sizeof(verdicts));
	for (int it = 0; it < 3 && !verdicts[REPLAY_REPROFILE]; it++)
		iteration(1, 0);
	assert_int_equal(verdicts[REPLAY_REPROFILE], 1);
}

/* After op5 (a's last use), op0 issued again: it writes into a what a
 * holds, and the memory level is op0's: a start found while lost (op0 is
 * not the op expected there), which the next op does not follow. */
static void reissue_op0(int op)
{
	if (op == 5)
		prog_op(0, a, 1);
}

/* A false start is no divergent iteration: two divergent iterations, each
 * with one, do not make three in a row (a new profile: four without the
 * rule); the next iteration like the profiled one applies the plan. */
static void test_false_start(void **state)
{
	(void)state;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0); /* applies the plan */
	memset(verdicts, 0, sizeof(verdicts));
	for (int it = 0; it < 2; it++) {
		iteration_with(0, 0, reissue_op0);
		check_results(0);
	}
	iteration(0, 0);
	check_results(0);
	assert_int_equal(verdicts[REPLAY_REPROFILE], 0);
	memset(verdicts, 0, sizeof(verdicts));
	iteration(0, 0);
	assert_int_equal(verdicts[REPLAY_EVICT_AFTER], 2);
}

/* A plan that keeps G3 unmapped from op 0 to op 5, which writes it
 * whole: its content from the last iteration is never read. */
static struct pl_plan *make_plan_g3(void)
{
	struct pl_plan_builder *pb = pl_builder_new(NOPS);
	pl_builder_evict(pb, 0, 2); /* G3 after op0 */
	pl_builder_step(pb, 5, PL_STEP_MAP, 2);
	return finish_plan(pb, 12 * FAKE_GRAN);
}

/* A false start is never applied: op0 issued again after op5 has written
 * G3 is not op 0 of an iteration, and the plan's eviction of G3 after op
 * 0 there would drop this iteration's result (mapped fresh at the
 * divergence, G3 would lose it). */
static void test_false_start_not_applied(void **state)
{
	(void)state;
	plan_maker = make_plan_g3;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0); /* applies the plan */
	iteration(0, 0);
	check_results(0);
	iteration_with(0, 0, reissue_op0);
	check_results(0);
	iteration(0, 0);
	check_results(0);
}

/* An op the profile has at that position touches an evicted buffer the
 * plan did not rebuild there: it is rebuilt first. */
static void test_unplanned_access(void **state)
{
	(void)state;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0);
	iteration(0, 1); /* op3 reads a, evicted after op1 */
	check_results(1);
	iteration(0, 0);
	check_results(0);
}

/* No plan will come: the engine lets go at the next op, the job runs on. */
static void test_no_plan(void **state)
{
	(void)state;
	answer = REPLAY_PLAN_NONE;
	iteration(0, 0);
	memset(verdicts, 0, sizeof(verdicts));
	a = prog_alloc(); /* the boundary is here: the plan is asked for */
	prog_op(0, a, 1);
	assert_int_equal(verdicts[REPLAY_STOP], 1);
}

/* A plan that does not fit the profile (it replays an op that comes later)
 * is refused: the session is told, and no plan will come. */
static struct pl_plan *bad_plan(void)
{
	struct pl_plan *pl = make_plan();
	for (uint32_t i = 0; i < pl->step_off[NOPS]; i++)
		if (pl->steps[i].kind == PL_STEP_REPLAY)
			pl->steps[i].arg = 6;
	return pl;
}

static void test_plan_rejected(void **state)
{
	(void)state;
	plan_maker = bad_plan;
	answer = REPLAY_PLAN_READY;
	memset(verdicts, 0, sizeof(verdicts));
	iteration(0, 0);
	iteration(0, 0);
	assert_int_equal(rejected, 1);
	assert_int_equal(verdicts[REPLAY_STOP], 1);
	assert_non_null(strstr(reject_why, "step 1 before op 4 replays op 6, not an earlier op"));
	check_results(0);
}

/* Damaged plans, each one edit away from make_plan's: validation refuses
 * every one before it touches memory, naming the first wrong step, and the
 * program computes what it would have. */
static int mutation;
static struct pl_plan *mutated_plan(void)
{
	struct pl_plan *pl = make_plan();
	struct pl_step *s4 = &pl->steps[pl->step_off[4]], *s5 = &pl->steps[pl->step_off[5]];
	switch (mutation) {
	case 0: /* ["replay", 1] -> ["replay", 0]: b is mapped but not rebuilt */
		s4[3].arg = 0;
		break;
	case 1: /* the rebuild of a before op5 undone: released again at once */
		s5[1].kind = PL_STEP_RELEASE;
		s5[1].arg = 3;
		break;
	case 2: /* a released where b is: b unmapped when op4 reads it */
		s4[4].arg = 4;
		break;
	case 3: /* a persistent buffer evicted and never rebuilt */
		pl->evict[0] = 0;
		break;
	case 4: /* a save without its restore */
		s5[1].kind = PL_STEP_SAVE;
		s5[1].arg = 0;
		break;
	case 5: /* the evictions dropped: over the budget */
		pl->evict_off[2] = pl->evict_off[3] = pl->evict_off[NOPS] = 0;
		pl->evict_off[1] = 0;
		break;
	}
	return pl;
}

static void test_plan_mutations_rejected(void **state)
{
	(void)state;
	static const char *const why[] = {
	    "op 4 (before op 4) reads buffer 4 as op 1 left it, but it holds nothing",
	    "op 5 (before op 5) finds buffer 3 unmapped",
	    "op 4 (before op 4) finds buffer 4 unmapped",
	    "op 3 (before op 3) finds buffer 0 unmapped",
	    "op 5 runs with 0 transient mapping(s) and 1 saved copies left",
	    "over the budget of",
	};
	for (mutation = 0; mutation < 6; mutation++) {
		teardown(NULL);
		setup(NULL);
		plan_maker = mutated_plan;
		answer = REPLAY_PLAN_READY;
		iteration(0, 0);
		iteration(0, 0);
		if (rejected != 1 || !strstr(reject_why, why[mutation]))
			fail_msg("mutation %d: rejected %d: '%s'", mutation, rejected, reject_why);
		check_results(0);
	}
}

/* A cached plan refused is replaced: the session says a new one is on its
 * way, and the engine applies that one when it comes. */
static int replace_rejected(const char *why)
{
	rejected++;
	snprintf(reject_why, sizeof(reject_why), "%s", why);
	plan_maker = make_plan;
	answer = REPLAY_PLAN_READY;
	return 1;
}

static void test_rejected_plan_replaced(void **state)
{
	(void)state;
	static const struct replay_hooks again = {poll_plan, replace_rejected, replan};
	replay_start(make_profile(), 10 * FAKE_GRAN, 3 * SZ, 3, &again);
	plan_maker = bad_plan;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0);
	iteration(0, 0); /* refused; the replacement arrives at the next boundary */
	memset(verdicts, 0, sizeof(verdicts));
	iteration(0, 0);
	assert_int_equal(rejected, 1);
	assert_int_equal(verdicts[REPLAY_STOP], 0);
	assert_int_equal(verdicts[REPLAY_EVICT_AFTER], 2);
	check_results(0);
}

/* Stash and unstash run as copies that outlive their position: G stashed,
 * saved, unstashed and restored before op6 leaves it as it was. */
static struct pl_plan *stash_plan(void)
{
	struct pl_plan *pl = make_plan();
	struct pl_plan_builder *pb = pl_builder_new(NOPS);
	for (int32_t p = 0; p < NOPS; p++) {
		for (uint32_t i = pl->step_off[p]; i < pl->step_off[p + 1]; i++)
			pl_builder_step(pb, p, pl->steps[i].kind, pl->steps[i].arg);
		for (uint32_t i = pl->evict_off[p]; i < pl->evict_off[p + 1]; i++)
			pl_builder_evict(pb, p, pl->evict[i]);
	}
	int steps6[][2] = {
	    {PL_STEP_STASH, 0}, {PL_STEP_SAVE, 0}, {PL_STEP_UNSTASH, 0}, {PL_STEP_RESTORE, 0}};
	for (size_t i = 0; i < 4; i++)
		pl_builder_step(pb, 6, steps6[i][0], steps6[i][1]);
	pl_plan_free(pl);
	pl = pl_builder_finish(pb);
	pl->graph_hash = 0x1234;
	pl->budget = pl->peak = 10 * FAKE_GRAN;
	return pl;
}

static void test_stash(void **state)
{
	(void)state;
	plan_maker = stash_plan;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0);
	for (int it = 0; it < 2; it++) {
		memset(verdicts, 0, sizeof(verdicts));
		iteration(0, 0);
		check_results(0);
		assert_int_equal(rejected, 0);
		assert_int_equal(verdicts[REPLAY_EVICT_AFTER], 2);
	}
}

/* G3 is dead across the boundary (op5 overwrites all of it first): the
 * plan keeps it unmapped from its last use to its first, over the
 * boundary, and maps it fresh before op5. */
static struct pl_plan *boundary_plan(void)
{
	struct pl_plan *pl = make_plan();
	struct pl_plan_builder *pb = pl_builder_new(NOPS);
	for (int32_t p = 0; p < NOPS; p++) {
		if (p == 5)
			pl_builder_step(pb, 5, PL_STEP_MAP, 2);
		for (uint32_t i = pl->step_off[p]; i < pl->step_off[p + 1]; i++)
			pl_builder_step(pb, p, pl->steps[i].kind, pl->steps[i].arg);
		for (uint32_t i = pl->evict_off[p]; i < pl->evict_off[p + 1]; i++)
			pl_builder_evict(pb, p, pl->evict[i]);
	}
	pl_builder_evict(pb, 5, 2);
	pl_plan_free(pl);
	pl = pl_builder_finish(pb);
	pl->graph_hash = 0x1234;
	pl->budget = pl->peak = 8 * FAKE_GRAN;
	pl->boundary = malloc(sizeof(int32_t));
	pl->boundary[0] = 2;
	pl->nboundary = 1;
	return pl;
}

static void g3_unmapped_until_op5(int op)
{
	if (op < 4)
		assert_false(remat_alloc_mapped(G3, SZ));
}

static void test_boundary_unmapped(void **state)
{
	(void)state;
	struct remat_profile *p = make_profile();
	p->bufs[2].dead_across = 1;
	replay_start(p, 8 * FAKE_GRAN, 3 * SZ, 3, &hooks);
	plan_maker = boundary_plan;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0); /* the plan arrives at the end of this one */
	for (int it = 0; it < 2; it++) {
		remat_alloc_reset_peak();
		iteration_with(0, 0, g3_unmapped_until_op5);
		assert_int_equal(rejected, 0);
		assert_false(remat_alloc_mapped(G3, SZ));
		struct remat_alloc_stats st;
		remat_alloc_stats(&st);
		assert_true(st.peak <= 8 * FAKE_GRAN);
	}
	/* The same plan for a profile that does not prove G3 dead there is
	 * refused. */
	teardown(NULL);
	setup(NULL);
	plan_maker = boundary_plan;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0);
	iteration(0, 0);
	assert_int_equal(rejected, 1);
	assert_non_null(strstr(reject_why, "buffer 2 cannot be unmapped at the iteration boundary: "
	                                   "its content there is live"));
}

/* After op0: a replay of op0 from now on computes something else. */
static void change_hidden_state(int op)
{
	if (op == 0)
		hidden_state = 2;
}

/* REMAT_VERIFY=1: one iteration rebuilds in place without evicting; op0
 * reads state its parameters do not show, so a's rebuild differs: a is
 * excluded and a new plan asked for. */
static void test_verify_excludes(void **state)
{
	(void)state;
	remat_cfg.verify = 1;
	indirect = 1;
	hidden_state = 1;
	iteration(0, 0);
	int mapped = fake.nmapped;
	answer = REPLAY_PLAN_READY;
	iteration_with(0, 0, change_hidden_state);
	/* Nothing evicted: what the plan would evict is poisoned instead
	 * (verify_windows.c), and has its content back by the iteration's end. */
	assert_int_equal(fake.nmapped, mapped);
	hidden_state = 1;
	check_results(0); /* the original content was put back */
	a = prog_alloc(); /* the boundary: verification's verdict */
	assert_int_equal(replans, 1);
	assert_true(nexcluded >= 1);
	assert_int_equal(excluded[0], 3);
	prog_op(0, a, 1);
}

/* A planned iteration up to the program's op 4, the next launch (the
 * rebuild the next op needs) set to fail. */
static void run_until_rebuild_fails(void)
{
	answer = REPLAY_PLAN_READY;
	iteration(0, 0);
	a = prog_alloc();
	prog_op(0, a, 1);
	b = prog_alloc();
	prog_op(a, b, 2);
	c = prog_alloc();
	prog_op(b, c, 3);
	prog_op(c, G, 4);
	prog_free(c);
	fake.fail_launch_at = fake.launches + 1;
}

/* A replay launch fails once: what was evicted is rebuilt again without
 * the budget, the plan is dropped, and the program computes what it would
 * have. */
static void test_rebuild_failure_recovered(void **state)
{
	(void)state;
	run_until_rebuild_fails();
	prog_op(b, G2, 5);
	assert_int_equal(verdicts[REPLAY_STOP], 1);
	assert_non_null(strstr(fake.last_warn,
	                       "rebuild before op 4 failed (CUDA error 719) and was "
	                       "done again"));
	prog_free(b);
	prog_op(a, G3, 6);
	prog_free(a);
	prog_op(G, G, 7);
	check_results(0);
	assert_int_equal(op_failures, 0);
}

/* A replay launch fails for good (a sticky device error): the op that
 * needed the rebuild does not run on wrong inputs; the session hands it
 * the error. */
static void test_rebuild_failure_sticky(void **state)
{
	(void)state;
	run_until_rebuild_fails();
	fake.sticky = 1;
	prog_op(b, G2, 5);
	assert_int_equal(verdicts[REPLAY_FAIL], 1);
	assert_int_equal(replay_error(), CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(op_failures, 1);
	assert_non_null(strstr(fake.last_warn, "the program gets the error"));
}

/* The program changes memory it maps itself in the middle of a replay
 * iteration (alloc/program.c): what is evicted is rebuilt before the
 * change, and the next op asks for a new profile. */
static void reshape_after_op2(int op)
{
	if (op != 2)
		return;
	assert_false(remat_alloc_mapped(a, SZ)); /* evicted after op1 */
	int syncs = fake.syncs;
	replay_reshape();
	assert_true(remat_alloc_mapped(a, SZ) && remat_alloc_mapped(b, SZ));
	assert_int_equal(fake.syncs, syncs + 1); /* the rebuild is complete first */
}

static void test_reshape(void **state)
{
	(void)state;
	answer = REPLAY_PLAN_READY;
	iteration(0, 0); /* applies the plan */
	memset(verdicts, 0, sizeof(verdicts));
	iteration_with(0, 0, reshape_after_op2);
	assert_int_equal(verdicts[REPLAY_REPROFILE], 1);
	check_results(0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_plan_applies),
	    T(test_divergence),
	    T(test_false_start),
	    T(test_false_start_not_applied),
	    T(test_unplanned_access),
	    T(test_no_plan),
	    T(test_plan_rejected),
	    T(test_plan_mutations_rejected),
	    T(test_rejected_plan_replaced),
	    T(test_stash),
	    T(test_boundary_unmapped),
	    T(test_verify_excludes),
	    T(test_rebuild_failure_recovered),
	    T(test_rebuild_failure_sticky),
	    T(test_reshape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
