/*
 * test_model.c — what the planning model says beyond "activations made
 * and freed inside the iteration", each on a small graph file planned
 * end to end and checked by the evaluator and the reference simulation:
 * an op that updates running statistics in place is replayed on its
 * stashed statistics; a persistent buffer whose content is dead across
 * the iteration boundary is released after its last read and mapped
 * again before its first write; a partial write makes the prior version
 * an input of the rebuild; rebuild chains are longer than the old caps
 * (8 writes of one buffer, 64 ops).
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = tu_tmpdir();
	return dir ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmdir(dir);
	return 0;
}

/* Loads graph text; rc is what pl_graph_load returned, err its message. */
static struct pl_graph *load(const char *text, int *rc, char *err, size_t errlen)
{
	struct pl_graph *g = NULL;
	*rc = pl_graph_load(tu_write(dir, "g.json", text), &g, err, errlen);
	return g;
}

static struct pl_graph *load_ok(const char *text)
{
	char err[512];
	int rc;
	struct pl_graph *g = load(text, &rc, err, sizeof(err));
	if (rc)
		fail_msg("%s", err);
	return g;
}

/* Plans g for budget with planner p, checks the plan with the evaluator
 * and the reference simulation; returns it (with its evaluation). */
static struct pl_plan *plan_checked(const struct pl_graph *g, int64_t budget, enum pl_planner p,
                                    struct pl_eval *e)
{
	struct pl_options o;
	pl_options_default(&o);
	o.planner = p;
	o.time_limit_s = 5;
	struct pl_plan *plan = NULL;
	struct pl_result res;
	int rc = pl_plan_make(g, budget, &o, &plan, &res);
	if (rc)
		fail_msg("planner %s, budget %lld: %s", pl_planner_name(p), (long long)budget,
		         res.error);
	assert_int_equal(pl_evaluate(g, plan, e), 0);
	if (!e->valid)
		fail_msg("%s", e->error);
	assert_true(e->peak <= budget);
	struct tu_sim r;
	tu_simulate(g, plan, &r);
	assert_true(r.valid);
	assert_int_equal(r.peak, e->peak);
	assert_int_equal(r.recompute, e->recompute_ns);
	for (int32_t i = 0; i < g->nops; i++)
		assert_int_equal(r.curve[i], e->curve[i]);
	free(r.curve);
	return plan;
}

static int has_step(const struct pl_plan *p, int32_t pos, int kind, int32_t arg)
{
	for (uint32_t i = p->step_off[pos]; i < p->step_off[pos + 1]; i++)
		if (p->steps[i].kind == kind && p->steps[i].arg == arg)
			return 1;
	return 0;
}

static int evicts(const struct pl_plan *p, int32_t pos, int32_t buf)
{
	for (uint32_t i = p->evict_off[pos]; i < p->evict_off[pos + 1]; i++)
		if (p->evict[i] == buf)
			return 1;
	return 0;
}

/* Batch norm: op 1 normalises A into B and updates the running
 * statistics S in place; X (ops 2-3, slow) makes the peak.  At 600 bytes
 * B (400) must be out over ops 2-3; rebuilding it replays op 1, which
 * must see S as it was before op 1 (its stash, taken at op 1) and leaves
 * S as op 1 left it: updated once. */
static const char bn_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
    " {\"id\": 0, \"size\": 100, \"alloc_at\": 0, \"free_at\": -1},"
    " {\"id\": 1, \"size\": 400, \"alloc_at\": 1, \"free_at\": -1},"
    " {\"id\": 2, \"size\": 8, \"persistent\": true, \"alloc_at\": -1, \"free_at\": -1},"
    " {\"id\": 3, \"size\": 300, \"alloc_at\": 2, \"free_at\": 4}],"
    " \"ops\": ["
    " {\"i\": 0, \"name\": \"conv\", \"duration_ns\": 10, \"reads\": [], \"writes\": [0]},"
    " {\"i\": 1, \"name\": \"batch_norm\", \"duration_ns\": 10, \"reads\": [0, 2],"
    "  \"writes\": [1, 2]},"
    " {\"i\": 2, \"name\": \"other\", \"duration_ns\": 10, \"reads\": [0], \"writes\": [3]},"
    " {\"i\": 3, \"name\": \"slow\", \"duration_ns\": 100000, \"reads\": [3], \"writes\": []},"
    " {\"i\": 4, \"name\": \"bn_backward\", \"duration_ns\": 10, \"reads\": [1, 0],"
    "  \"writes\": []}],"
    " \"end\": true}";

static void batch_norm_statistics_stashed(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(bn_graph);
	assert_int_equal(g->baseline_peak, 808);
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 600, (enum pl_planner)p, &e);
		assert_true(evicts(plan, 1, 1));
		assert_true(has_step(plan, 1, PL_STEP_STASH, 2));
		assert_true(has_step(plan, 4, PL_STEP_UNSTASH, 2));
		assert_true(has_step(plan, 4, PL_STEP_REPLAY, 1));
		/* S is updated once: no save/restore needed, the replay writes
		 * the same content op 1 wrote */
		assert_false(has_step(plan, 4, PL_STEP_SAVE, 2));
		assert_int_equal(e.replays, 1);
		/* the stash counts: A 100 + S 8 + its stash 8 + X 300 while B is out */
		assert_int_equal(e.curve[2], 416);
		/* and the plan file says it (version 2: stashes) */
		char err[512], *path = strdup(tu_write(dir, "p.json", ""));
		assert_int_equal(pl_plan_save_json(plan, path, err, sizeof(err)), 0);
		struct pl_plan *back;
		assert_int_equal(pl_plan_load_json(path, g, &back, err, sizeof(err)), 0);
		assert_int_equal(back->step_off[g->nops], plan->step_off[g->nops]);
		assert_true(has_step(back, 1, PL_STEP_STASH, 2));
		pl_plan_free(back);
		free(path);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	pl_graph_free(g);
}

/* The same graph with a measured cost of device copies: the stash at op
 * 1 and the unstash before op 4 take 100 ns + 8 bytes at 2 bytes per ns
 * (104 ns) each, counted in the plan's cost like the replay of op 1, by
 * the evaluator and by the reference simulation (plan_checked); the
 * member survives a save and load of the graph. */
static void device_copies_cost_time(void **state)
{
	(void)state;
	char text[sizeof(bn_graph) + 100];
	const char *at = strstr(bn_graph, "\"buffers\"");
	snprintf(text, sizeof(text),
	         "%.*s\"device_copy\": {\"fixed_ns\": 100, \"bytes_per_us\": 2000}, %s",
	         (int)(at - bn_graph), bn_graph, at);
	struct pl_graph *g = load_ok(text);
	assert_int_equal(g->copy_fixed_ns, 100);
	assert_int_equal(g->copy_bytes_per_us, 2000);
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 600, (enum pl_planner)p, &e);
		assert_true(has_step(plan, 1, PL_STEP_STASH, 2));
		assert_int_equal(e.recompute_ns, 10 + 2 * 104);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	char err[512], *path = strdup(tu_write(dir, "g.json", ""));
	assert_int_equal(pl_graph_save_json(g, path, err, sizeof(err)), 0);
	struct pl_graph *back;
	assert_int_equal(pl_graph_load(path, &back, err, sizeof(err)), 0);
	assert_int_equal(back->copy_fixed_ns, 100);
	assert_int_equal(back->copy_bytes_per_us, 2000);
	pl_graph_free(back);
	free(path);
	pl_graph_free(g);
	/* below a byte per ns, or not an object: refused, named */
	const char *bad[] = {"{\"fixed_ns\": 1, \"bytes_per_us\": 999}", "7"};
	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text), "%.*s\"device_copy\": %s, %s", (int)(at - bn_graph),
		         bn_graph, bad[i], at);
		path = strdup(tu_write(dir, "bad.json", text));
		assert_int_not_equal(pl_graph_load(path, &back, err, sizeof(err)), 0);
		assert_non_null(strstr(err, "device_copy"));
		free(path);
	}
}

/* P lives in long-lived memory (allocated before the iteration, like
 * llm.c's activations) and op 0 overwrites all of it every iteration:
 * its content at the boundary is dead.  Released after its last read (op
 * 1) and mapped again before op 0, the peak falls from 1900 to 1100;
 * without the member saying so it cannot. */
static const char dead_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
    " {\"id\": 0, \"size\": 1000, \"persistent\": true, \"alloc_at\": -1, \"free_at\": -1,"
    "  \"dead_across_boundary\": true},"
    " {\"id\": 1, \"size\": 100, \"alloc_at\": 1, \"free_at\": -1},"
    " {\"id\": 2, \"size\": 800, \"alloc_at\": 2, \"free_at\": 4}],"
    " \"ops\": ["
    " {\"i\": 0, \"duration_ns\": 10, \"reads\": [0], \"writes\": [0]},"
    " {\"i\": 1, \"duration_ns\": 10, \"reads\": [0], \"writes\": [1]},"
    " {\"i\": 2, \"duration_ns\": 10, \"reads\": [1], \"writes\": [2]},"
    " {\"i\": 3, \"duration_ns\": 10, \"reads\": [2], \"writes\": []},"
    " {\"i\": 4, \"duration_ns\": 10, \"reads\": [1], \"writes\": []}],"
    " \"end\": true}";

static char *replaced(const char *text, const char *from, const char *to)
{
	char *s = tu_replace(text, from, to);
	assert_non_null(s);
	return s;
}

static void dead_across_boundary_released(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(dead_graph);
	assert_int_equal(g->baseline_peak, 1900);
	assert_true(g->bufs[0].dead_across);
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 1100, (enum pl_planner)p, &e);
		assert_int_equal(plan->nboundary, 1);
		assert_int_equal(plan->boundary[0], 0);
		assert_true(evicts(plan, 1, 0));
		assert_true(has_step(plan, 0, PL_STEP_MAP, 0));
		assert_int_equal(e.replays, 0); /* mapping it is the whole rebuild */
		assert_int_equal(e.curve[3], 900);
		/* round trip: version 2, the boundary list kept */
		char err[512], *path = strdup(tu_write(dir, "p.json", ""));
		assert_int_equal(pl_plan_save_json(plan, path, err, sizeof(err)), 0);
		char *text = NULL;
		FILE *f = fopen(path, "r");
		size_t cap = 0;
		assert_non_null(f);
		assert_true(getdelim(&text, &cap, 0, f) > 0);
		fclose(f);
		assert_non_null(strstr(text, "\"version\": 2"));
		assert_non_null(strstr(text, "\"unmapped_at_boundary\": [0]"));
		free(text);
		struct pl_plan *back;
		assert_int_equal(pl_plan_load_json(path, g, &back, err, sizeof(err)), 0);
		assert_int_equal(back->nboundary, 1);
		struct pl_eval e2;
		assert_int_equal(pl_evaluate(g, back, &e2), 0);
		assert_true(e2.valid);
		assert_int_equal(e2.peak, e.peak);
		pl_eval_free(&e2);
		pl_plan_free(back);
		free(path);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	/* Unmapped at the end but not listed: the next iteration would start
	 * without it. */
	struct pl_plan_builder *b = pl_builder_new(5);
	pl_builder_evict(b, 1, 0);
	struct pl_plan *bad = pl_builder_finish(b);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, bad, &e), 0);
	assert_false(e.valid);
	assert_non_null(strstr(e.error, "buffer 0 is still evicted at the end"));
	pl_eval_free(&e);
	pl_plan_free(bad);
	pl_graph_free(g);

	/* Never assumed: without the member the budget is out of reach. */
	char *text = replaced(dead_graph, ",  \"dead_across_boundary\": true", "");
	g = load_ok(text);
	free(text);
	struct pl_options o;
	pl_options_default(&o);
	o.time_limit_s = 5;
	struct pl_plan *p = NULL;
	struct pl_result res;
	char err[512];
	assert_int_equal(pl_plan_make(g, 1100, &o, &p, &res), PL_EBUDGET);
	pl_graph_free(g);

	/* Said of a buffer it cannot be true of: one clear message each. */
	int rc;
	text = replaced(dead_graph, "\"reads\": [0], \"writes\": [0]",
	                "\"reads\": [0], \"writes\": []");
	assert_null(load(text, &rc, err, sizeof(err)));
	assert_int_equal(rc, PL_EINPUT);
	if (!strstr(err, "buffer 0 is dead across the boundary, but op 0 reads it"))
		fail_msg("%s", err);
	free(text);
	text = replaced(dead_graph, "\"alloc_at\": -1, \"free_at\": -1,",
	                "\"alloc_at\": 0, \"free_at\": -1,");
	assert_null(load(text, &rc, err, sizeof(err)));
	assert_int_equal(rc, PL_EINPUT);
	if (!strstr(err, "$.buffers[0]: dead_across_boundary on a buffer not live across"))
		fail_msg("%s", err);
	free(text);
}

/* A long-lived region holds one tensor, then another (a pool or a range
 * the program maps itself reuses its memory): op 0 (slow) writes A into
 * region 0, op 1 reads it, op 4 overwrites the whole region with B
 * without reading it, op 5 reads B.  Between op 1 and op 4 the region's
 * content is dead, as a freed buffer's is: at 900 bytes it is out over
 * ops 2-3, and mapping it again before op 4 is the whole rebuild (no
 * replay of op 0, which would cost 100 us for content nobody reads). */
static const char reuse_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
    " {\"id\": 0, \"size\": 500, \"persistent\": true, \"alloc_at\": -1, \"free_at\": -1,"
    "  \"dead_across_boundary\": true},"
    " {\"id\": 1, \"size\": 100, \"alloc_at\": 1, \"free_at\": -1},"
    " {\"id\": 2, \"size\": 800, \"alloc_at\": 2, \"free_at\": 4}],"
    " \"ops\": ["
    " {\"i\": 0, \"duration_ns\": 100000, \"reads\": [], \"writes\": [0]},"
    " {\"i\": 1, \"duration_ns\": 10, \"reads\": [0], \"writes\": [1]},"
    " {\"i\": 2, \"duration_ns\": 10, \"reads\": [1], \"writes\": [2]},"
    " {\"i\": 3, \"duration_ns\": 10, \"reads\": [2], \"writes\": []},"
    " {\"i\": 4, \"duration_ns\": 10, \"reads\": [1], \"writes\": [0]},"
    " {\"i\": 5, \"duration_ns\": 10, \"reads\": [0], \"writes\": []}],"
    " \"end\": true}";

static void dead_between_tensors_released(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(reuse_graph);
	assert_int_equal(g->baseline_peak, 1400);
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 900, (enum pl_planner)p, &e);
		assert_true(evicts(plan, 1, 0));
		assert_true(has_step(plan, 4, PL_STEP_MAP, 0));
		assert_int_equal(e.replays, 0);
		assert_int_equal(e.recompute_ns, 0);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	pl_graph_free(g);
	/* Op 4 updating the region in place needs A back: op 0 is replayed. */
	char *text = replaced(reuse_graph, "\"reads\": [1], \"writes\": [0]",
	                      "\"reads\": [1, 0], \"writes\": [0]");
	g = load_ok(text);
	free(text);
	struct pl_eval e;
	struct pl_plan *plan = plan_checked(g, 900, PL_PLANNER_ILP, &e);
	assert_true(has_step(plan, 4, PL_STEP_REPLAY, 0));
	assert_int_equal(e.recompute_ns, 100000);
	pl_eval_free(&e);
	pl_plan_free(plan);
	pl_graph_free(g);
}

/* A rebuild that replays into a region whose content there is dead:
 * op 1 writes T1 into region R from X, op 2 reads it into Y, op 3
 * overwrites R whole with T2 (read by op 5), op 7 with T3.  At 1400
 * bytes Y is out over ops 4-5 (C) and rebuilt before op 6 by replaying
 * ops 1 and 2, which writes T1 over T2 in R; nothing reads T2 after op
 * 5, so the rebuild leaves it lost instead of saving and restoring R
 * (its copy would take the rebuild to 1500 bytes). */
static const char overwrite_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1,"
    " \"device_copy\": {\"fixed_ns\": 1000, \"bytes_per_us\": 1000}, \"buffers\": ["
    " {\"id\": 0, \"size\": 100, \"alloc_at\": 0, \"free_at\": -1},"
    " {\"id\": 1, \"size\": 500, \"persistent\": true, \"alloc_at\": -1, \"free_at\": -1,"
    "  \"dead_across_boundary\": true},"
    " {\"id\": 2, \"size\": 400, \"alloc_at\": 2, \"free_at\": -1},"
    " {\"id\": 3, \"size\": 800, \"alloc_at\": 4, \"free_at\": 6}],"
    " \"ops\": ["
    " {\"i\": 0, \"duration_ns\": 10, \"reads\": [], \"writes\": [0]},"
    " {\"i\": 1, \"duration_ns\": 10, \"reads\": [0], \"writes\": [1]},"
    " {\"i\": 2, \"duration_ns\": 10, \"reads\": [1], \"writes\": [2]},"
    " {\"i\": 3, \"duration_ns\": 10, \"reads\": [], \"writes\": [1]},"
    " {\"i\": 4, \"duration_ns\": 10, \"reads\": [], \"writes\": [3]},"
    " {\"i\": 5, \"duration_ns\": 10, \"reads\": [3, 1], \"writes\": []},"
    " {\"i\": 6, \"duration_ns\": 10, \"reads\": [2, 0], \"writes\": []},"
    " {\"i\": 7, \"duration_ns\": 10, \"reads\": [], \"writes\": [1]},"
    " {\"i\": 8, \"duration_ns\": 10, \"reads\": [1], \"writes\": []}],"
    " \"end\": true}";

static void rebuild_writes_over_dead_content(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(overwrite_graph);
	assert_int_equal(g->baseline_peak, 1800);
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 1400, (enum pl_planner)p, &e);
		assert_true(has_step(plan, 6, PL_STEP_REPLAY, 1));
		assert_false(has_step(plan, 6, PL_STEP_SAVE, 1));
		assert_int_equal(e.recompute_ns, 20);
		assert_int_equal(e.curve[6], 1000);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	pl_graph_free(g);
}

/* A replay that reads a region whose content dies before the replay's
 * position (the logits of gpt --alloc vmm: op 1 writes them into region
 * R, op 2 reads them into Y, op 5 overwrites R whole with a gradient).
 * Rebuilding Y before op 5 by replaying op 2 needs R's old content, so
 * it replays op 1 as well (dead content is no input to count on: see
 * dead_content_is_rebuilt), and R must stay mapped over its gap from
 * op 2 to op 5 for that: a candidate that only maps R again before op 5
 * is incompatible with it.  The pair was once compatible (the rebuild
 * then replayed op 2 alone), and dtr chose it at 1000 bytes (the
 * evaluator refused the plan). */
static const char dying_input_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
    " {\"id\": 0, \"size\": 100, \"alloc_at\": 0, \"free_at\": -1},"
    " {\"id\": 1, \"size\": 500, \"persistent\": true, \"alloc_at\": -1, \"free_at\": -1,"
    "  \"dead_across_boundary\": true},"
    " {\"id\": 2, \"size\": 400, \"alloc_at\": 2, \"free_at\": -1},"
    " {\"id\": 3, \"size\": 800, \"alloc_at\": 3, \"free_at\": 5}],"
    " \"ops\": ["
    " {\"i\": 0, \"duration_ns\": 10, \"reads\": [], \"writes\": [0]},"
    " {\"i\": 1, \"duration_ns\": 10, \"reads\": [0], \"writes\": [1]},"
    " {\"i\": 2, \"duration_ns\": 10, \"reads\": [1], \"writes\": [2]},"
    " {\"i\": 3, \"duration_ns\": 10, \"reads\": [], \"writes\": [3]},"
    " {\"i\": 4, \"duration_ns\": 1000, \"reads\": [3], \"writes\": []},"
    " {\"i\": 5, \"duration_ns\": 10, \"reads\": [2], \"writes\": [1]},"
    " {\"i\": 6, \"duration_ns\": 10, \"reads\": [1, 0], \"writes\": []}],"
    " \"end\": true}";

static void replay_input_dying_stays_mapped(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(dying_input_graph);
	assert_int_equal(g->baseline_peak, 1800);
	struct pl_options o;
	pl_options_default(&o);
	struct pl_cands cs;
	assert_int_equal(pl_cands_build(g, &o, &cs, NULL, 0), 0);
	int32_t r_gap = -1, y_cand = -1, r_cand = -1;
	for (int32_t q = 0; q < cs.ngaps; q++)
		if (cs.gaps[q].buf == 1 && cs.gaps[q].a == 2 && cs.gaps[q].c == 5)
			r_gap = q;
	assert_true(r_gap >= 0);
	for (int32_t j = 0; j < cs.ncands; j++) {
		const struct pl_cand *x = &cs.c[j];
		for (uint32_t k = 0; k < x->ngaps; k++) {
			int32_t q = cs.gap_list[x->gap_off + k];
			if (x->ngaps == 1 && q == r_gap)
				r_cand = j;
			if (x->ngaps == 1 && cs.gaps[q].buf == 2 && x->at == 5 && x->cost == 20)
				y_cand = j;
		}
	}
	assert_true(r_cand >= 0 && y_cand >= 0);
	int forbids = 0;
	for (uint32_t k = 0; k < cs.c[y_cand].nforbid; k++)
		forbids |= cs.forbid_list[cs.c[y_cand].forbid_off + k] == r_gap;
	assert_true(forbids);
	struct pl_selection sel;
	assert_int_equal(pl_sel_init(&sel, &cs), 0);
	pl_sel_take(&sel, &cs, r_cand);
	assert_false(pl_sel_compatible(&sel, y_cand));
	pl_sel_free(&sel);
	pl_cands_free(&cs);
	/* Both out at 1000 bytes: R mapped again and Y's rebuild replaying
	 * ops 1 and 2, which the walk (dtr, and the ILP from it) finds;
	 * greedy only picks among candidates, and no compatible pair of them
	 * gets there. */
	for (int p = PL_PLANNER_DTR; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 1000, (enum pl_planner)p, &e);
		assert_true(has_step(plan, 5, PL_STEP_REPLAY, 1));
		assert_true(has_step(plan, 5, PL_STEP_REPLAY, 2));
		assert_int_equal(e.recompute_ns, 20);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	pl_graph_free(g);
}

/* Content that dies without being read again is no replay input to
 * count on, since another rebuild may write over it unsaved: op 0 (an
 * arena's memset) writes Q and region R, op 1 writes R from Q, op 2 reads
 * R into Y, op 6 overwrites R whole.  Before op 5, rebuilding Q replays
 * op 0, which writes over R's dead content; rebuilding Y there replays
 * op 2, which must then not read R as it is but have op 1 rebuild it
 * first (the ILP once chose both rebuilds, the evaluator refused the
 * plan: llm.c's arena at 60%). */
static const char clobber_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
    " {\"id\": 0, \"size\": 500, \"persistent\": true, \"alloc_at\": -1, \"free_at\": -1,"
    "  \"dead_across_boundary\": true},"
    " {\"id\": 1, \"size\": 300, \"alloc_at\": 0, \"free_at\": -1},"
    " {\"id\": 2, \"size\": 400, \"alloc_at\": 2, \"free_at\": -1},"
    " {\"id\": 3, \"size\": 800, \"alloc_at\": 3, \"free_at\": 5}],"
    " \"ops\": ["
    " {\"i\": 0, \"duration_ns\": 10, \"reads\": [], \"writes\": [0, 1]},"
    " {\"i\": 1, \"duration_ns\": 10, \"reads\": [1], \"writes\": [0]},"
    " {\"i\": 2, \"duration_ns\": 10, \"reads\": [0], \"writes\": [2]},"
    " {\"i\": 3, \"duration_ns\": 10, \"reads\": [], \"writes\": [3]},"
    " {\"i\": 4, \"duration_ns\": 10, \"reads\": [3], \"writes\": []},"
    " {\"i\": 5, \"duration_ns\": 10, \"reads\": [2, 1], \"writes\": []},"
    " {\"i\": 6, \"duration_ns\": 10, \"reads\": [], \"writes\": [0]},"
    " {\"i\": 7, \"duration_ns\": 10, \"reads\": [0], \"writes\": []}],"
    " \"end\": true}";

static void dead_content_is_rebuilt(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(clobber_graph);
	struct pl_options o;
	pl_options_default(&o);
	struct pl_cands cs;
	assert_int_equal(pl_cands_build(g, &o, &cs, NULL, 0), 0);
	int clobbers = 0, reads = 0;
	for (int32_t j = 0; j < cs.ncands; j++) {
		const struct pl_cand *x = &cs.c[j];
		if (x->at != 5)
			continue;
		int op0 = 0, op1 = 0, op2 = 0;
		for (uint32_t k = 0; k < x->nsteps; k++) {
			const struct pl_step *st = &cs.steps[x->step_off + k];
			if (st->kind == PL_STEP_REPLAY) {
				op0 |= st->arg == 0;
				op1 |= st->arg == 1;
				op2 |= st->arg == 2;
			}
		}
		clobbers |= op0 && !op2;
		if (op2) {
			reads = 1;
			assert_true(op1); /* R from Q, never R's dead content */
		}
	}
	assert_true(clobbers && reads);
	pl_cands_free(&cs);
	for (int p = PL_PLANNER_DTR; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 1300, (enum pl_planner)p, &e);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	pl_graph_free(g);
}

/* Op 2 updates part of B from A (B is not among its reads): the bytes it
 * leaves keep version 0, so rebuilding B's version 2 replays op 0 and
 * then op 2.  At 900 bytes B must be out over ops 3-4. */
static const char partial_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
    " {\"id\": 0, \"size\": 500, \"alloc_at\": 0, \"free_at\": -1},"
    " {\"id\": 1, \"size\": 100, \"alloc_at\": 1, \"free_at\": -1},"
    " {\"id\": 2, \"size\": 800, \"alloc_at\": 3, \"free_at\": 5}],"
    " \"ops\": ["
    " {\"i\": 0, \"duration_ns\": 10, \"reads\": [], \"writes\": [0]},"
    " {\"i\": 1, \"duration_ns\": 10, \"reads\": [0], \"writes\": [1]},"
    " {\"i\": 2, \"duration_ns\": 10, \"reads\": [1], \"writes\": [0], \"partial\": [0]},"
    " {\"i\": 3, \"duration_ns\": 10, \"reads\": [1], \"writes\": [2]},"
    " {\"i\": 4, \"duration_ns\": 100000, \"reads\": [2], \"writes\": []},"
    " {\"i\": 5, \"duration_ns\": 10, \"reads\": [0], \"writes\": []}],"
    " \"end\": true}";

static void partial_write_rebuilds_prior_version(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(partial_graph);
	const struct pl_op *op = &g->ops[2];
	assert_int_equal(op->nrefs, 2);
	for (uint32_t k = 0; k < op->nrefs; k++)
		if (g->refs[op->ref_off + k].buf == 0) {
			assert_int_equal(g->refs[op->ref_off + k].flags,
			                 PL_REF_READ | PL_REF_WRITE | PL_REF_PARTIAL);
			assert_int_equal(g->refs[op->ref_off + k].ver, 0);
		}
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 900, (enum pl_planner)p, &e);
		assert_true(evicts(plan, 2, 0));
		assert_true(has_step(plan, 5, PL_STEP_REPLAY, 0));
		assert_true(has_step(plan, 5, PL_STEP_REPLAY, 2));
		assert_int_equal(e.replays, 2);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	/* Replaying op 2 alone would leave the rest of B undefined. */
	struct pl_plan_builder *b = pl_builder_new(6);
	pl_builder_evict(b, 2, 0);
	pl_builder_step(b, 5, PL_STEP_MAP, 0);
	pl_builder_step(b, 5, PL_STEP_REPLAY, 2);
	struct pl_plan *bad = pl_builder_finish(b);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, bad, &e), 0);
	assert_false(e.valid);
	assert_non_null(strstr(e.error, "replay of op 2 (at op 5): reads buffer 0 version 0"));
	pl_eval_free(&e);
	pl_plan_free(bad);
	/* The graph file keeps it; a partial write must be a write. */
	char err[512], path[4096];
	snprintf(path, sizeof(path), "%s/saved.json", dir);
	assert_int_equal(pl_graph_save_json(g, path, err, sizeof(err)), 0);
	struct pl_graph *h;
	assert_int_equal(pl_graph_load(path, &h, err, sizeof(err)), 0);
	assert_true(h->hash == g->hash);
	for (uint32_t k = 0; k < g->nrefs; k++)
		assert_int_equal(h->refs[k].flags, g->refs[k].flags);
	pl_graph_free(h);
	pl_graph_free(g);
	int rc;
	char *text = replaced(partial_graph, "\"partial\": [0]", "\"partial\": [1]");
	assert_null(load(text, &rc, err, sizeof(err)));
	assert_int_equal(rc, PL_EINPUT);
	if (!strstr(err, "$.ops[2].partial: buffer 1 is not in \"writes\""))
		fail_msg("%s", err);
	free(text);
}

/* Appends to a growing string. */
static void cat(char **s, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char **s, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	*s = realloc(*s, *n + k + 1);
	va_start(ap, fmt);
	vsnprintf(*s + *n, k + 1, fmt, ap);
	va_end(ap);
	*n += k;
}

/* B is written at op 0 and updated in place by ops 1..20; X (op 21-22,
 * a slow op) pushes the peak over the budget; op 23 reads B.  Rebuilding
 * B replays all 21 writes (the old cap was 8). */
static void long_inplace_chain(void **state)
{
	(void)state;
	char *s = NULL;
	size_t n = 0;
	cat(&s, &n,
	    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
	    " {\"id\": 0, \"size\": 500, \"alloc_at\": 0, \"free_at\": -1},"
	    " {\"id\": 1, \"size\": 800, \"alloc_at\": 21, \"free_at\": 23}], \"ops\": [");
	cat(&s, &n, "{\"i\": 0, \"duration_ns\": 10, \"reads\": [], \"writes\": [0]},");
	for (int i = 1; i <= 20; i++)
		cat(&s, &n, "{\"i\": %d, \"duration_ns\": 10, \"reads\": [0], \"writes\": [0]},",
		    i);
	cat(&s, &n,
	    "{\"i\": 21, \"duration_ns\": 100000, \"reads\": [], \"writes\": [1]},"
	    "{\"i\": 22, \"duration_ns\": 10, \"reads\": [1], \"writes\": []},"
	    "{\"i\": 23, \"duration_ns\": 10, \"reads\": [0], \"writes\": []}], \"end\": true}");
	struct pl_graph *g = load_ok(s);
	free(s);
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 900, (enum pl_planner)p, &e);
		assert_int_equal(e.replays, 21);
		for (int32_t k = 0; k <= 20; k++)
			assert_true(has_step(plan, 23, PL_STEP_REPLAY, k));
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	pl_graph_free(g);
}

/* F is made by a chain of 100 ops through temporaries each freed right
 * after its reader (only F stays); rebuilding F replays all 100 (the old
 * cap was 64), releasing each temporary after its last replay, so the
 * rebuild needs two temporaries at a time, not a hundred. */
static void long_chain_through_freed_buffers(void **state)
{
	(void)state;
	char *s = NULL;
	size_t n = 0;
	cat(&s, &n, "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": [");
	for (int i = 0; i < 99; i++) /* temporaries T0..T98: op i writes, op i+1 reads */
		cat(&s, &n, "{\"id\": %d, \"size\": 10, \"alloc_at\": %d, \"free_at\": %d},", i, i,
		    i + 2);
	cat(&s, &n,
	    "{\"id\": 99, \"size\": 500, \"alloc_at\": 99, \"free_at\": -1},"
	    "{\"id\": 100, \"size\": 800, \"alloc_at\": 100, \"free_at\": 102}], \"ops\": [");
	cat(&s, &n, "{\"i\": 0, \"duration_ns\": 10, \"reads\": [], \"writes\": [0]},");
	for (int i = 1; i < 100; i++)
		cat(&s, &n, "{\"i\": %d, \"duration_ns\": 10, \"reads\": [%d], \"writes\": [%d]},",
		    i, i - 1, i);
	cat(&s, &n,
	    "{\"i\": 100, \"duration_ns\": 100000, \"reads\": [], \"writes\": [100]},"
	    "{\"i\": 101, \"duration_ns\": 10, \"reads\": [100], \"writes\": []},"
	    "{\"i\": 102, \"duration_ns\": 10, \"reads\": [99], \"writes\": []}], \"end\": true}");
	struct pl_graph *g = load_ok(s);
	free(s);
	for (int p = PL_PLANNER_GREEDY; p <= PL_PLANNER_ILP; p++) {
		struct pl_eval e;
		struct pl_plan *plan = plan_checked(g, 900, (enum pl_planner)p, &e);
		assert_int_equal(e.replays, 100);
		assert_true(e.curve[102] <= 500 + 2 * 10);
		pl_eval_free(&e);
		pl_plan_free(plan);
	}
	pl_graph_free(g);
}

/* The evaluator's verdict on plan with parked = ids (n of them). */
static int parks_valid(const struct pl_graph *g, struct pl_plan *plan, const int32_t *ids,
                       int32_t n, const char *why)
{
	int32_t *keep = plan->parked, nkeep = plan->nparked;
	plan->parked = (int32_t *)ids;
	plan->nparked = n;
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, plan, &e), 0);
	int valid = e.valid;
	if (why && !strstr(e.error, why))
		fail_msg("expected \"%s\", got \"%s\"", why, e.error);
	pl_eval_free(&e);
	plan->parked = keep;
	plan->nparked = nkeep;
	return valid;
}

/* Parking (tu_park_graph): buffer 0 lives across the boundary and no op
 * references it (a pool's free tail).  Only a plan that may use host
 * memory parks it (parked_on_host), which takes its 1000 bytes out of
 * every position; without offload 1000 bytes cannot be met. */
static void untouched_buffer_parked(void **state)
{
	(void)state;
	struct pl_graph *g = load_ok(tu_park_graph);
	assert_int_equal(g->baseline_peak, 1950);
	struct pl_options o;
	pl_options_default(&o);
	o.time_limit_s = 5;
	struct pl_plan *plan = NULL;
	struct pl_result res;
	char err[512];
	/* without offload: not reachable, nothing parked */
	assert_int_equal(pl_plan_make(g, 1000, &o, &plan, &res), PL_EBUDGET);
	assert_null(plan);
	assert_int_equal(pl_plan_make(g, 1950, &o, &plan, &res), PL_OK);
	assert_int_equal(plan->nparked, 0);
	pl_plan_free(plan);
	/* with it: parked, out of the curve, on the host */
	o.offload_gbps = 50;
	if (pl_plan_make(g, 1000, &o, &plan, &res))
		fail_msg("%s", res.error);
	assert_int_equal(plan->nparked, 1);
	assert_int_equal(plan->parked[0], 0);
	assert_int_equal(res.baseline_peak, 1950);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, plan, &e), 0);
	assert_true(e.valid);
	assert_int_equal(e.peak, 950);
	assert_int_equal(plan->peak, 950);
	assert_true(e.host_peak >= 1000);
	assert_true(plan->host_bytes >= 1000);
	pl_eval_free(&e);
	/* the evaluator: touched, not live across, twice, without offload */
	const int32_t touched[] = {1}, inside[] = {3}, twice[] = {0, 0};
	assert_false(parks_valid(g, plan, touched, 1, "op 0 references it"));
	assert_false(parks_valid(g, plan, inside, 1, "not live across the boundary"));
	assert_false(parks_valid(g, plan, twice, 2, "listed twice"));
	plan->offload_gbps = 0;
	assert_false(parks_valid(g, plan, plan->parked, 1, "no offload_gbps"));
	plan->offload_gbps = 50;
	/* round trip: version 3, the list kept */
	char *path = strdup(tu_write(dir, "pk.json", ""));
	assert_int_equal(pl_plan_save_json(plan, path, err, sizeof(err)), 0);
	struct pl_plan *back;
	assert_int_equal(pl_plan_load_json(path, g, &back, err, sizeof(err)), 0);
	assert_int_equal(back->nparked, 1);
	assert_int_equal(back->parked[0], 0);
	pl_plan_free(back);
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;
	assert_non_null(f);
	assert_true(getdelim(&text, &cap, 0, f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "\"version\": 3"));
	assert_non_null(strstr(text, "\"parked_on_host\": [0]"));
	free(text);
	free(path);
	pl_plan_free(plan);
	pl_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(batch_norm_statistics_stashed),
	    cmocka_unit_test(device_copies_cost_time),
	    cmocka_unit_test(dead_across_boundary_released),
	    cmocka_unit_test(untouched_buffer_parked),
	    cmocka_unit_test(dead_between_tensors_released),
	    cmocka_unit_test(rebuild_writes_over_dead_content),
	    cmocka_unit_test(replay_input_dying_stays_mapped),
	    cmocka_unit_test(dead_content_is_rebuilt),
	    cmocka_unit_test(partial_write_rebuilds_prior_version),
	    cmocka_unit_test(long_inplace_chain),
	    cmocka_unit_test(long_chain_through_freed_buffers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
