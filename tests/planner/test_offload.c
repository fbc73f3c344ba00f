/*
 * test_offload.c — offload to host memory as a planning choice: the
 * planner offloads a buffer version when the copies hide behind compute
 * and recomputes it when the copy engines are too slow for that; the
 * evaluator times copies on their engines (a prefetch awaited too soon
 * stalls compute by what it sticks out), counts a prefetch's destination
 * from the prefetch on and refuses what the runtime could not do; plans
 * with offload are version 3 and read back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MB    (1 << 20)
#define OP_NS 100000 /* 100 us per op: 1 MiB at 52.8 GB/s (20.9 us) hides in one */

/* A at buffer 0 is written by op 0, read by op 1 and by op 11: idle over
 * the peak (ops 3..8, where the workspace C is allocated). */
static struct pl_graph *graph(void)
{
	static const struct pl_buffer bufs[] = {
	    {.size = MB, .alloc_at = -1, .free_at = -1},    /* A */
	    {.size = MB, .alloc_at = -1, .free_at = -1},    /* B */
	    {.size = 65536, .alloc_at = -1, .free_at = -1}, /* X: the input */
	    {.size = MB, .alloc_at = 3, .free_at = 9},      /* C: workspace */
	};
	const uint32_t R = PL_REF_READ, W = PL_REF_WRITE;
	static struct tu_ref refs[32];
	size_t n = 0;
	refs[n++] = (struct tu_ref){0, 2, R};
	refs[n++] = (struct tu_ref){0, 0, W};
	refs[n++] = (struct tu_ref){1, 0, R};
	refs[n++] = (struct tu_ref){1, 1, W};
	refs[n++] = (struct tu_ref){2, 1, R};
	refs[n++] = (struct tu_ref){3, 3, W};
	for (int32_t k = 4; k <= 8; k++)
		refs[n++] = (struct tu_ref){k, 3, R | W};
	refs[n++] = (struct tu_ref){9, 2, R};
	refs[n++] = (struct tu_ref){10, 1, R | W};
	refs[n++] = (struct tu_ref){11, 0, R};
	refs[n++] = (struct tu_ref){11, 1, R};
	struct pl_graph *g = tu_hand_graph("off", 12, bufs, 4, refs, n, OP_NS, 0);
	assert_non_null(g);
	return g;
}

static void plan_at(const struct pl_graph *g, double gbps, struct pl_plan **p, struct pl_result *r)
{
	struct pl_options o;
	pl_options_default(&o);
	o.offload_gbps = gbps;
	o.time_limit_s = 10;
	int rc = pl_plan_make(g, g->baseline_peak - MB, &o, p, r);
	if (rc)
		fail_msg("pl_plan_make: %s", r->error);
}

static int has_step(const struct pl_plan *p, int32_t pos, int kind, int32_t arg)
{
	for (uint32_t k = p->step_off[pos]; k < p->step_off[pos + 1]; k++)
		if (p->steps[k].kind == kind && p->steps[k].arg == arg)
			return 1;
	return 0;
}

/* Done when: with the copy engines too slow to hide a copy, the planner
 * recomputes instead; at the H100's PCIe rate it offloads, for free. */
static void test_choice_follows_bandwidth(void **state)
{
	(void)state;
	struct pl_graph *g = graph();
	struct pl_plan *p;
	struct pl_result r;

	plan_at(g, 52.8, &p, &r);
	assert_true(r.offloads >= 1);
	assert_int_equal(r.recompute_ns, 0);
	assert_int_equal(r.stall_ns, 0);
	assert_true(r.peak <= g->baseline_peak - MB);
	assert_true(has_step(p, 2, PL_STEP_OFFLOAD, 0));
	assert_true(has_step(p, 11, PL_STEP_AWAIT, 0));
	assert_true(p->offload_gbps == 52.8);
	pl_plan_free(p);

	/* 0.01 GB/s: 1 MiB takes 105 ms, a thousand ops' worth */
	plan_at(g, 0.01, &p, &r);
	assert_int_equal(r.offloads, 0);
	assert_true(r.recompute_ns >= OP_NS);
	assert_true(r.peak <= g->baseline_peak - MB);
	for (uint32_t k = 0; k < p->step_off[p->nops]; k++)
		assert_false(PL_STEP_IS_OFFLOAD(p->steps[k].kind));
	pl_plan_free(p);

	/* off (the default): recompute, as before offload existed */
	plan_at(g, 0, &p, &r);
	assert_int_equal(r.offloads, 0);
	assert_true(r.recompute_ns >= OP_NS);
	pl_plan_free(p);
	pl_graph_free(g);
}

static struct pl_eval eval(const struct pl_graph *g, struct pl_plan_builder *b, double gbps)
{
	struct pl_plan *p = pl_builder_finish(b);
	assert_non_null(p);
	p->offload_gbps = gbps;
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	pl_plan_free(p);
	return e;
}

/* Buffer A offloaded before op 2 and evicted after it, prefetched before
 * op `fetch`, awaited before op 11, timed at gbps. */
static struct pl_eval eval_a(const struct pl_graph *g, int32_t fetch, double gbps)
{
	struct pl_plan_builder *b = pl_builder_new(g->nops);
	pl_builder_step(b, 2, PL_STEP_OFFLOAD, 0);
	pl_builder_evict(b, 2, 0);
	pl_builder_step(b, fetch, PL_STEP_PREFETCH, 0);
	pl_builder_step(b, 11, PL_STEP_AWAIT, 0);
	return eval(g, b, gbps);
}

/* The evaluator's clock: a prefetch started right before its use sticks
 * out by its whole copy; one started in time costs nothing; the device
 * copy goes only once the copy out is over. */
static void test_evaluator_times_copies(void **state)
{
	(void)state;
	struct pl_graph *g = graph();
	int64_t copy = 1000 + (int64_t)(MB / 52.8 + 0.5);

	struct pl_eval e = eval_a(g, 10, 52.8);
	if (!e.valid)
		fail_msg("%s", e.error);
	assert_int_equal(e.stall_ns, 0);
	assert_int_equal(e.offloads, 1);
	assert_int_equal(e.host_peak, MB);
	assert_int_equal(e.time_ns, 12 * OP_NS);
	assert_int_equal(e.curve[5], g->live[5] - MB);
	assert_int_equal(e.curve[10], g->live[10]); /* the destination, from the prefetch */
	pl_eval_free(&e);

	/* prefetched just before the use: compute waits for the whole copy */
	e = eval_a(g, 11, 52.8);
	assert_true(e.valid);
	assert_int_equal(e.stall_ns, copy);
	assert_int_equal(e.time_ns, 12 * OP_NS + copy);
	pl_eval_free(&e);

	/* engines slower than compute: both copies stick out */
	e = eval_a(g, 3, 0.01);
	assert_true(e.valid);
	/* out: ends at 200 us + 105 ms, in: another 105 ms after that */
	int64_t slow = 1000 + (int64_t)(MB / 0.01 + 0.5);
	/* the eviction after op 2 (at 300 us) waits for the copy out (200 us +
	 * slow); op 11 (at 1000 us + slow) for the copy in, which starts then */
	assert_int_equal(e.stall_ns, (slow - OP_NS) + (slow - 8 * OP_NS));
	pl_eval_free(&e);
	pl_graph_free(g);
}

/* What the runtime could not carry out is refused. */
static void test_evaluator_refuses(void **state)
{
	(void)state;
	struct pl_graph *g = graph();
	static const struct {
		int32_t pos[4];
		int kind[4];
		int n, evict_at;
		double gbps;
		const char *why;
	} cases[] = {
	    /* no await: op 11 reads a buffer still being prefetched */
	    {{2, 10}, {PL_STEP_OFFLOAD, PL_STEP_PREFETCH}, 2, 2, 52.8, "being prefetched"},
	    /* prefetch of a buffer evicted, never offloaded */
	    {{10, 11}, {PL_STEP_PREFETCH, PL_STEP_AWAIT}, 2, 2, 52.8, "not on the host"},
	    /* offload steps in a plan without a bandwidth */
	    {{2, 10, 11},
	     {PL_STEP_OFFLOAD, PL_STEP_PREFETCH, PL_STEP_AWAIT},
	     3,
	     2,
	     0,
	     "without offload_gbps"},
	    /* copied out and left at that: the host copy is never freed */
	    {{2}, {PL_STEP_OFFLOAD}, 1, -1, 52.8, "still offloaded"},
	    /* an op writes the buffer while it is copied out */
	    {{0}, {PL_STEP_OFFLOAD}, 1, -1, 52.8, "while it is copied to the host"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pl_plan_builder *b = pl_builder_new(g->nops);
		for (int k = 0; k < cases[i].n; k++)
			pl_builder_step(b, cases[i].pos[k], cases[i].kind[k], 0);
		if (cases[i].evict_at >= 0)
			pl_builder_evict(b, cases[i].evict_at, 0);
		struct pl_eval e = eval(g, b, cases[i].gbps);
		assert_false(e.valid);
		if (!strstr(e.error, cases[i].why))
			fail_msg("case %zu: expected '%s' in '%s'", i, cases[i].why, e.error);
		pl_eval_free(&e);
	}
	pl_graph_free(g);
}

/* Version 3 on disk: written when the plan offloads, read back with its
 * bandwidth; offload steps in a version 2 file are refused. */
static void test_plan_file(void **state)
{
	(void)state;
	struct pl_graph *g = graph();
	struct pl_plan *p;
	struct pl_result r;
	plan_at(g, 52.8, &p, &r);
	char *dir = tu_tmpdir(), path[512], err[256];
	snprintf(path, sizeof(path), "%s/plan.json", dir);
	assert_int_equal(pl_plan_save_json(p, path, err, sizeof(err)), 0);
	struct pl_plan *q;
	int rc = pl_plan_load_json(path, g, &q, err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
	assert_true(q->offload_gbps == 52.8);
	assert_int_equal(q->step_off[q->nops], p->step_off[p->nops]);
	assert_memory_equal(q->steps, p->steps, sizeof(*p->steps) * p->step_off[p->nops]);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, q, &e), 0);
	assert_true(e.valid);
	pl_eval_free(&e);
	pl_plan_free(q);
	size_t n;
	char *text = pl_file_read(path, &n, err, sizeof(err));
	assert_non_null(text);
	assert_non_null(strstr(text, "\"version\": 3"));
	char *v2 = tu_replace(text, "\"version\": 3", "\"version\": 2");
	const char *p2 = tu_write(dir, "v2.json", v2);
	assert_int_equal(pl_plan_rehash(p2, err, sizeof(err)), PL_EINPUT);
	assert_non_null(strstr(err, "needs plan version 3"));
	free(v2);
	free(text);
	pl_plan_free(p);
	tu_rmdir(dir);
	pl_graph_free(g);
}

/* Regions A and B share a chunk (tensors packed at 512-byte steps, as gpt
 * --alloc vmm lays them out): it goes only when both are out.  Both are
 * idle over the peak, cheap to copy and dead across the boundary (ops 0
 * and 1 write them whole); the budget needs the shared chunk freed too.
 * The planner offloads both and recomputes nothing: an offload counts the
 * chunks its buffer shares like an eviction (it once saved only the
 * buffer's own bytes, and gpt --alloc vmm recomputed 45% of its iteration
 * where offload costs nothing). */
static void test_offload_frees_shared_chunks(void **state)
{
	(void)state;
	static const struct pl_buffer bufs[] = {
	    {.size = MB, .alloc_at = -1, .free_at = -1, .dead_across = 1}, /* A */
	    {.size = MB, .alloc_at = -1, .free_at = -1, .dead_across = 1}, /* B */
	    {.size = 65536, .alloc_at = -1, .free_at = -1},                /* X: the input */
	    {.size = 4 * MB, .alloc_at = 3, .free_at = 9},                 /* C: workspace */
	};
	const uint32_t R = PL_REF_READ, W = PL_REF_WRITE;
	struct tu_ref refs[32];
	size_t n = 0;
	refs[n++] = (struct tu_ref){0, 2, R};
	refs[n++] = (struct tu_ref){0, 0, W};
	refs[n++] = (struct tu_ref){1, 2, R};
	refs[n++] = (struct tu_ref){1, 1, W};
	refs[n++] = (struct tu_ref){2, 2, R};
	refs[n++] = (struct tu_ref){3, 3, W};
	for (int32_t k = 4; k <= 8; k++)
		refs[n++] = (struct tu_ref){k, 3, R | W};
	refs[n++] = (struct tu_ref){9, 2, R};
	refs[n++] = (struct tu_ref){10, 2, R};
	refs[n++] = (struct tu_ref){11, 0, R};
	refs[n++] = (struct tu_ref){11, 1, R};
	const struct tu_share sh[] = {{MB, 0, 1}};
	struct pl_graph *g = tu_hand_graph_shared("offsh", 12, bufs, 4, refs, n, OP_NS, 0, sh, 1);
	assert_non_null(g);
	int64_t budget = g->baseline_peak - 3 * MB; /* A, B and their chunk out */
	struct pl_options o;
	pl_options_default(&o);
	o.offload_gbps = 52.8;
	o.plan_version = 2;
	o.time_limit_s = 10;
	struct pl_plan *p;
	struct pl_result r;
	char err[256];
	int rc = pl_plan_make(g, budget, &o, &p, &r);
	if (rc)
		fail_msg("pl_plan_make: %s", r.error);
	assert_int_equal(r.offloads, 2);
	assert_int_equal(r.recompute_ns, 0);
	assert_true(r.peak <= budget);
	assert_true(has_step(p, 1, PL_STEP_OFFLOAD, 0) || has_step(p, 2, PL_STEP_OFFLOAD, 0));
	assert_true(has_step(p, 2, PL_STEP_OFFLOAD, 1));
	pl_plan_free(p);

	/* The MILP alone, on offload candidates only: the budget is in its
	 * model (with the chunk counted out only for evictions, it was not). */
	o.offload_only = 1;
	struct pl_cands cs;
	assert_int_equal(pl_cands_build(g, &o, &cs, err, sizeof(err)), 0);
	uint8_t chosen[64];
	assert_true(cs.ncands <= 64);
	struct pl_ilp_result ir;
	assert_int_equal(
	    pl_ilp(&(struct pl_ilp_task){.g = g, .cs = &cs, .budget = budget, .time_limit = 10},
	           chosen, &ir),
	    0);
	assert_int_equal(ir.status, 0);
	int took = 0;
	for (int32_t j = 0; j < cs.ncands; j++)
		took += chosen[j] && cs.c[j].offload;
	assert_int_equal(took, 2);
	pl_cands_free(&cs);
	pl_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_choice_follows_bandwidth),
	    cmocka_unit_test(test_evaluator_times_copies),
	    cmocka_unit_test(test_evaluator_refuses),
	    cmocka_unit_test(test_plan_file),
	    cmocka_unit_test(test_offload_frees_shared_chunks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
