/*
 * test_eval.c — the evaluator: against the naive reference simulation on
 * random plans (planner-made ones, random candidate sets, and mutated
 * ones that are mostly invalid), and on hand-made plans whose faults it
 * must name.
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void check_same(const struct pl_graph *g, const struct pl_plan *p, int *nvalid,
                       int *ninvalid)
{
	struct pl_eval e;
	struct tu_sim r;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	tu_simulate(g, p, &r);
	assert_int_equal(e.valid, r.valid);
	if (e.valid) {
		assert_int_equal(e.peak, r.peak);
		assert_int_equal(e.recompute_ns, r.recompute);
		for (int32_t i = 0; i < g->nops; i++)
			assert_int_equal(e.curve[i], r.curve[i]);
		(*nvalid)++;
	} else {
		assert_true(strlen(e.error) > 0);
		(*ninvalid)++;
	}
	free(r.curve);
	pl_eval_free(&e);
}

static void evaluator_matches_reference(void **state)
{
	(void)state;
	int nvalid = 0, ninvalid = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		uint64_t s = seed * 7919;
		struct rg_opts o = tu_mixed_opts(seed);
		struct pl_graph *g = tu_random_graph(seed, &o);
		assert_non_null(g);
		struct pl_options opt;
		pl_options_default(&opt);
		struct pl_cands cs;
		assert_int_equal(pl_cands_build(g, &opt, &cs, NULL, 0), 0);
		struct pl_selection sel;
		for (int trial = 0; trial < 20; trial++) {
			struct pl_plan *p = tu_random_selection(g, &cs, &s, &sel);
			assert_non_null(p);
			check_same(g, p, &nvalid, &ninvalid);
			/* The model curve bounds the exact one from above, but for
			 * the shares of shared chunks it counts as saved (all of
			 * their bytes at most) where not all of a group is out. */
			struct pl_eval e;
			int64_t *model = malloc(sizeof(int64_t) * g->nops), shares = 0;
			for (int32_t i = 0; i < g->nshared; i++)
				shares += g->shared[i].bytes;
			pl_sel_curve(g, &cs, sel.chosen, model);
			assert_int_equal(pl_evaluate(g, p, &e), 0);
			if (e.valid)
				for (int32_t i = 0; i < g->nops; i++)
					assert_true(e.curve[i] <= model[i] + shares);
			free(model);
			pl_eval_free(&e);
			for (int m = 0; m < 5; m++) {
				struct pl_plan *q = tu_mutate(g, p, &s);
				check_same(g, q, &nvalid, &ninvalid);
				pl_plan_free(q);
			}
			pl_plan_free(p);
			pl_sel_free(&sel);
		}
		pl_cands_free(&cs);
		pl_graph_free(g);
	}
	print_message("%d valid and %d invalid plans agree\n", nvalid, ninvalid);
	assert_true(nvalid > 500);
	assert_true(ninvalid > 500);
}

/* Hand-made graph: 0 writes A, 1 writes B from A, 2 reads B (gap), 3 and
 * 4 read B.  Stats S is read and updated by op 1 (running statistics). */
static struct pl_graph *small_graph(int with_stats)
{
	const struct pl_buffer bufs[] = {
	    {.size = 100, .alloc_at = 0, .free_at = -1},
	    {.size = 200, .alloc_at = 1, .free_at = -1},
	    {.size = 10, .alloc_at = -1, .free_at = -1, .persistent = 1},
	    {.size = 50, .alloc_at = 2, .free_at = 4}};
	const struct tu_ref refs[] = {
	    {0, 0, PL_REF_WRITE}, {1, 0, PL_REF_READ},
	    {1, 1, PL_REF_WRITE}, {1, 2, with_stats ? PL_REF_READ | PL_REF_WRITE : PL_REF_READ},
	    {2, 3, PL_REF_WRITE}, {3, 3, PL_REF_READ},
	    {4, 1, PL_REF_READ},  {4, 0, PL_REF_READ}};
	struct pl_graph *g =
	    tu_hand_graph("k", 5, bufs, 4, refs, sizeof(refs) / sizeof(refs[0]), 10, 10);
	assert_non_null(g);
	return g;
}

/* The candidate model's promise, which every planner relies on: any set
 * of candidates the selection calls compatible makes a valid plan.  The
 * random graphs include long-lived regions that hold one tensor, then
 * another, and an arena's memset (rg_opts.reuse): a rebuild reading
 * content another one writes over unsaved, or reading a region another
 * one only maps again, was compatible once (hundreds of the 12000 plans
 * here failed evaluation). */
static void compatible_candidates_make_valid_plans(void **state)
{
	(void)state;
	int nreuse = 0;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		uint64_t s = seed * 7919;
		struct rg_opts o = tu_mixed_opts(seed);
		struct pl_graph *g = tu_random_graph(seed, &o);
		assert_non_null(g);
		nreuse += o.reuse;
		struct pl_options opt;
		pl_options_default(&opt);
		struct pl_cands cs;
		assert_int_equal(pl_cands_build(g, &opt, &cs, NULL, 0), 0);
		for (int trial = 0; trial < 40; trial++) {
			struct pl_selection sel;
			struct pl_plan *p = tu_random_selection(g, &cs, &s, &sel);
			assert_non_null(p);
			struct pl_eval e;
			assert_int_equal(pl_evaluate(g, p, &e), 0);
			if (!e.valid)
				fail_msg("seed %llu, selection %d: %s", (unsigned long long)seed,
				         trial, e.error);
			pl_eval_free(&e);
			pl_plan_free(p);
			pl_sel_free(&sel);
		}
		pl_cands_free(&cs);
		pl_graph_free(g);
	}
	assert_true(nreuse >= 100);
}

static void expect(const struct pl_graph *g, struct pl_plan_builder *b, const char *msg)
{
	struct pl_plan *p = pl_builder_finish(b);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	if (!msg) {
		if (!e.valid)
			fail_msg("unexpected: %s", e.error);
	} else {
		assert_false(e.valid);
		if (!strstr(e.error, msg))
			fail_msg("'%s' does not say '%s'", e.error, msg);
	}
	pl_eval_free(&e);
	pl_plan_free(p);
}

static void evaluator_names_faults(void **state)
{
	(void)state;
	struct pl_graph *g = small_graph(0);
	struct pl_plan_builder *b;
	/* Baseline: ops 0..4 live 100 | 300 | 350 | 350 | 300 (+10 persistent). */
	struct pl_plan *p = pl_plan_empty(g->nops);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	assert_true(e.valid);
	assert_int_equal(e.peak, 360);
	assert_int_equal(e.curve[0], 110);
	pl_eval_free(&e);
	pl_plan_free(p);

	/* Evict B after op 1, rebuild before op 4 by replaying op 1. */
	b = pl_builder_new(5);
	pl_builder_evict(b, 1, 1);
	pl_builder_step(b, 4, PL_STEP_MAP, 1);
	pl_builder_step(b, 4, PL_STEP_REPLAY, 1);
	p = pl_builder_finish(b);
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	assert_true(e.valid);
	assert_int_equal(e.curve[2], 160);
	assert_int_equal(e.curve[4], 310);
	assert_int_equal(e.peak, 310);
	assert_int_equal(e.recompute_ns, 20);
	assert_int_equal(e.evicted_buffers, 1);
	pl_eval_free(&e);
	pl_plan_free(p);

	b = pl_builder_new(5);
	pl_builder_evict(b, 1, 1);
	expect(g, b, "buffer 1 is not mapped");
	b = pl_builder_new(5);
	pl_builder_evict(b, 1, 1);
	pl_builder_step(b, 4, PL_STEP_MAP, 1);
	expect(g, b, "reads buffer 1 version 1 but it holds version -3");
	b = pl_builder_new(5);
	pl_builder_step(b, 3, PL_STEP_MAP, 3);
	expect(g, b, "map of buffer 3, which is mapped");
	b = pl_builder_new(5);
	pl_builder_step(b, 2, PL_STEP_REPLAY, 3);
	expect(g, b, "not an earlier op");
	b = pl_builder_new(5);
	pl_builder_step(b, 4, PL_STEP_SAVE, 0);
	expect(g, b, "saved copies left");
	b = pl_builder_new(5);
	pl_builder_evict(b, 1, 2);
	expect(g, b, "buffer 2 is still evicted at the end");
	b = pl_builder_new(5);
	pl_builder_evict(b, 1, 2);
	pl_builder_step(b, 4, PL_STEP_MAP, 2);
	expect(g, b, "buffer 2 ends the iteration with version -3");
	b = pl_builder_new(5);
	pl_builder_evict(b, 4, 0);
	expect(g, b, "still evicted at the end");
	b = pl_builder_new(5);
	pl_builder_evict(b, 4, 3);
	expect(g, b, "is not allocated");
	pl_graph_free(g);

	/* Op 1 also updates statistics S: replaying it reads S's old version. */
	g = small_graph(1);
	b = pl_builder_new(5);
	pl_builder_evict(b, 1, 1);
	pl_builder_step(b, 4, PL_STEP_MAP, 1);
	pl_builder_step(b, 4, PL_STEP_REPLAY, 1);
	expect(g, b, "reads buffer 2 version -1 but it holds version 1");
	/* a stash must be taken before it is given back, and given back by the end */
	b = pl_builder_new(5);
	pl_builder_step(b, 4, PL_STEP_UNSTASH, 2);
	expect(g, b, "unstash of buffer 2, which is not stashed");
	b = pl_builder_new(5);
	pl_builder_step(b, 1, PL_STEP_STASH, 2);
	expect(g, b, "buffer 2 is still stashed at the end");
	b = pl_builder_new(5);
	pl_builder_step(b, 1, PL_STEP_STASH, 2);
	pl_builder_step(b, 2, PL_STEP_STASH, 2);
	expect(g, b, "stash of buffer 2, which is stashed already");
	/* only content dead across the boundary may be left unmapped there */
	p = pl_plan_empty(5);
	p->boundary = malloc(sizeof(int32_t));
	p->boundary[p->nboundary++] = 2;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	assert_false(e.valid);
	assert_non_null(strstr(e.error, "its content there is live"));
	pl_eval_free(&e);
	pl_plan_free(p);
	pl_graph_free(g);
}

/* Batch norm: op 1 reads A, writes B and updates running statistics S in
 * place; op 2 updates S again (a second use of the same module).
 * Rebuilding B before op 4 replays op 1 on S's content from before the
 * iteration (its stash, taken before op 1) and puts S's current content
 * back afterwards, so S is updated exactly as often as without the plan.
 * Without the stash the planner could not rebuild B at all. */
static void batch_norm_replay_stashes_statistics(void **state)
{
	(void)state;
	const struct pl_buffer bufs[] = {
	    {.size = 100, .alloc_at = 0, .free_at = -1},
	    {.size = 400, .alloc_at = 1, .free_at = -1},
	    {.size = 8, .alloc_at = -1, .free_at = -1, .persistent = 1}};
	const struct tu_ref refs[] = {{0, 0, PL_REF_WRITE},
	                              {1, 0, PL_REF_READ},
	                              {1, 1, PL_REF_WRITE},
	                              {1, 2, PL_REF_READ | PL_REF_WRITE},
	                              {2, 2, PL_REF_READ | PL_REF_WRITE},
	                              {3, 0, PL_REF_READ},
	                              {4, 1, PL_REF_READ}};
	struct pl_graph *g =
	    tu_hand_graph("bn", 5, bufs, 3, refs, sizeof(refs) / sizeof(refs[0]), 10, 0);
	assert_non_null(g);
	struct pl_options o;
	pl_options_default(&o);
	struct pl_cands cs;
	assert_int_equal(pl_cands_build(g, &o, &cs, NULL, 0), 0);
	int32_t pick = -1;
	for (int32_t j = 0; j < cs.ncands; j++)
		if (cs.c[j].at == 4 && cs.gaps[cs.gap_list[cs.c[j].gap_off]].buf == 1)
			pick = j;
	assert_true(pick >= 0);
	const struct pl_cand *x = &cs.c[pick];
	const struct pl_step want[] = {{PL_STEP_MAP, 1},
	                               {PL_STEP_SAVE, 2},
	                               {PL_STEP_UNSTASH, 2},
	                               {PL_STEP_REPLAY, 1},
	                               {PL_STEP_RESTORE, 2}};
	assert_int_equal(x->nsteps, 5);
	for (int k = 0; k < 5; k++) {
		assert_int_equal(cs.steps[x->step_off + k].kind, want[k].kind);
		assert_int_equal(cs.steps[x->step_off + k].arg, want[k].arg);
	}
	/* the stash is memory from op 1 (S's first use) to the rebuild */
	int stash_range = 0;
	for (uint32_t r = 0; r < x->nranges; r++) {
		const struct pl_range *rg = &cs.ranges[x->range_off + r];
		stash_range |= rg->lo == 1 && rg->hi == 4 && rg->bytes == -8;
	}
	assert_true(stash_range);
	uint8_t *chosen = calloc(cs.ncands, 1);
	chosen[pick] = 1;
	struct pl_plan *p = pl_sel_plan(g, &cs, chosen);
	assert_non_null(p);
	assert_int_equal(p->step_off[2] - p->step_off[1], 1);
	assert_int_equal(p->steps[p->step_off[1]].kind, PL_STEP_STASH);
	assert_int_equal(p->steps[p->step_off[1]].arg, 2);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	if (!e.valid)
		fail_msg("%s", e.error);
	/* A 100 and S 8 (+ its stash 8) while B is out; at 4 B is back and
	 * S's current content is copied aside during the replay */
	assert_int_equal(e.curve[2], 100 + 8 + 8);
	assert_int_equal(e.curve[4], 100 + 400 + 8 + 8 + 8);
	assert_int_equal(e.replays, 1);
	struct tu_sim r;
	tu_simulate(g, p, &r);
	assert_true(r.valid);
	assert_int_equal(r.peak, e.peak);
	free(r.curve);
	pl_eval_free(&e);
	pl_plan_free(p);
	/* without putting S's current content back, S ends updated by op 1
	 * only: the evaluator sees the double update */
	struct pl_plan_builder *b = pl_builder_new(5);
	pl_builder_evict(b, 1, 1);
	pl_builder_step(b, 1, PL_STEP_STASH, 2);
	pl_builder_step(b, 4, PL_STEP_MAP, 1);
	pl_builder_step(b, 4, PL_STEP_UNSTASH, 2);
	pl_builder_step(b, 4, PL_STEP_REPLAY, 1);
	p = pl_builder_finish(b);
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	assert_false(e.valid);
	assert_non_null(strstr(e.error, "buffer 2 ends the iteration with version 1 instead of 2"));
	pl_eval_free(&e);
	pl_plan_free(p);
	free(chosen);
	pl_cands_free(&cs);
	pl_graph_free(g);
}

/* Rebuilding B replays op 1, which also writes a workspace that is freed
 * by then (mapped for the replay, released after) and an output M that
 * op 3 has overwritten since (saved and restored around the replay). */
static void rebuild_with_side_effects(void **state)
{
	(void)state;
	const struct pl_buffer bufs[] = {{.size = 100, .alloc_at = 0, .free_at = -1},
	                                 {.size = 400, .alloc_at = 1, .free_at = 7},
	                                 {.size = 50, .alloc_at = 1, .free_at = 2},
	                                 {.size = 20, .alloc_at = 1, .free_at = -1}};
	const struct tu_ref refs[] = {
	    {0, 0, PL_REF_WRITE}, {1, 0, PL_REF_READ}, {1, 1, PL_REF_WRITE}, {1, 2, PL_REF_WRITE},
	    {1, 3, PL_REF_WRITE}, {2, 1, PL_REF_READ}, {3, 3, PL_REF_WRITE}, {4, 0, PL_REF_READ},
	    {5, 0, PL_REF_READ},  {6, 1, PL_REF_READ}, {6, 3, PL_REF_READ}};
	struct pl_graph *g =
	    tu_hand_graph("side", 7, bufs, 4, refs, sizeof(refs) / sizeof(refs[0]), 7, 0);
	assert_non_null(g);
	struct pl_options o;
	pl_options_default(&o);
	struct pl_cands cs;
	assert_int_equal(pl_cands_build(g, &o, &cs, NULL, 0), 0);
	int32_t pick = -1;
	for (int32_t j = 0; j < cs.ncands; j++)
		if (cs.c[j].at == 6 && !cs.c[j].segment &&
		    cs.gaps[cs.gap_list[cs.c[j].gap_off]].buf == 1)
			pick = j;
	assert_true(pick >= 0);
	const struct pl_cand *x = &cs.c[pick];
	assert_int_equal(x->transient, 50 + 20);
	assert_int_equal(x->cost, 7);
	const struct pl_step want[] = {{PL_STEP_MAP, 1},     {PL_STEP_MAP, 2},
	                               {PL_STEP_SAVE, 3},    {PL_STEP_REPLAY, 1},
	                               {PL_STEP_RELEASE, 2}, {PL_STEP_RESTORE, 3}};
	assert_int_equal(x->nsteps, 6);
	for (int k = 0; k < 6; k++) {
		assert_int_equal(cs.steps[x->step_off + k].kind, want[k].kind);
		assert_int_equal(cs.steps[x->step_off + k].arg, want[k].arg);
	}
	uint8_t *chosen = calloc(cs.ncands, 1);
	chosen[pick] = 1;
	struct pl_plan *p = pl_sel_plan(g, &cs, chosen);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	if (!e.valid)
		fail_msg("%s", e.error);
	/* live at 6: A 100, B 400, M 20; the rebuild adds WS 50 and M's copy 20 */
	assert_int_equal(e.curve[6], 100 + 400 + 20 + 50 + 20);
	assert_int_equal(e.curve[4], 100 + 20);
	assert_int_equal(e.recompute_ns, 7);
	struct tu_sim r;
	tu_simulate(g, p, &r);
	assert_true(r.valid);
	assert_int_equal(r.curve[6], e.curve[6]);
	free(r.curve);
	pl_eval_free(&e);
	pl_plan_free(p);
	/* Without the restore, op 6 would read M's wrong version. */
	struct pl_plan_builder *b = pl_builder_new(7);
	pl_builder_evict(b, 2, 1);
	const struct pl_step *st = &cs.steps[x->step_off];
	for (int k = 0; k < 6; k++)
		if (st[k].kind != PL_STEP_RESTORE && st[k].kind != PL_STEP_SAVE)
			pl_builder_step(b, 6, st[k].kind, st[k].arg);
	p = pl_builder_finish(b);
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	assert_false(e.valid);
	assert_non_null(strstr(e.error, "reads buffer 3 version 3 but it holds version 1"));
	pl_eval_free(&e);
	pl_plan_free(p);
	free(chosen);
	pl_cands_free(&cs);
	pl_graph_free(g);
}

/* A copy aside holds every byte of its buffer: a region that starts and
 * ends inside chunks (rounded: the one chunk it holds whole) takes its
 * size rounded up, as libremat's copy does (remat_alloc_scratch). */
static void copy_of_region_takes_its_size(void **state)
{
	(void)state;
	struct pl_graph *g = small_graph(1);
	g->granularity = 64;
	g->bufs[2].size = 100;
	g->bufs[2].rounded = 64;
	struct pl_eval base, e;
	struct pl_plan *p = pl_builder_finish(pl_builder_new(5));
	assert_int_equal(pl_evaluate(g, p, &base), 0);
	assert_true(base.valid);
	pl_plan_free(p);
	struct pl_plan_builder *b = pl_builder_new(5);
	pl_builder_step(b, 2, PL_STEP_STASH, 2);
	pl_builder_step(b, 3, PL_STEP_UNSTASH, 2);
	p = pl_builder_finish(b);
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	if (!e.valid)
		fail_msg("%s", e.error);
	assert_int_equal(e.curve[2] - base.curve[2], 128);
	assert_int_equal(e.curve[4], base.curve[4]); /* given back before op 3 */
	pl_eval_free(&e);
	pl_eval_free(&base);
	pl_plan_free(p);
	pl_graph_free(g);
}

/* Two regions A and B share a 64-byte chunk (their own bytes 100 each) and
 * C (150) is allocated for op 2, while both are idle (tu_shared_graph).
 * Their chunk goes only when both are out: evicting one frees its own
 * bytes, evicting both frees the chunk too, and the rebuild of the first
 * brings it back.  The lower bound counts the chunk only where A or B
 * must be mapped. */
static int64_t peak_of(const struct pl_graph *g, struct pl_plan *p, int64_t *at2)
{
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, p, &e), 0);
	if (!e.valid)
		fail_msg("%s", e.error);
	int64_t peak = e.peak;
	*at2 = e.curve[2];
	struct tu_sim r;
	tu_simulate(g, p, &r); /* the naive reference agrees */
	assert_true(r.valid);
	assert_int_equal(r.peak, peak);
	free(r.curve);
	pl_eval_free(&e);
	pl_plan_free(p);
	return peak;
}

static void shared_chunk_goes_with_its_last_region(void **state)
{
	(void)state;
	struct pl_graph *g = tu_shared_graph();
	assert_non_null(g);
	int64_t at2;
	/* baseline: A, B, their chunk and C at op 2 */
	assert_int_equal(g->baseline_peak, 100 + 100 + 64 + 150);
	assert_int_equal(peak_of(g, pl_plan_empty(5), &at2), 414);
	/* A out over op 2: B holds the chunk */
	peak_of(g, tu_shared_plan(0), &at2);
	assert_int_equal(at2, 100 + 64 + 150);
	/* both out: the chunk goes too, and comes back with them before op 3 */
	int64_t peak = peak_of(g, tu_shared_plan(1), &at2);
	assert_int_equal(at2, 150);
	assert_int_equal(peak, 100 + 100 + 64);
	/* no plan goes below op 1's A, B and their chunk */
	assert_int_equal(pl_graph_lower_bound(g), 264);
	pl_graph_free(g);
}

/* A graph file carries the groups: const_bytes holds their bytes (a
 * reader that ignores them keeps them mapped), and they read back. */
static void shared_chunks_round_trip(void **state)
{
	(void)state;
	struct pl_graph *g = tu_shared_graph(), *h = NULL;
	char *dir = tu_tmpdir(), err[256];
	char path[4096];
	snprintf(path, sizeof(path), "%s/g.json", dir);
	assert_int_equal(pl_graph_save_json(g, path, err, sizeof(err)), 0);
	if (pl_graph_load_json(path, &h, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(h->nshared, 1);
	assert_int_equal(h->shared[0].bytes, 64);
	assert_int_equal(h->const_bytes, g->const_bytes);
	assert_int_equal(h->baseline_peak, g->baseline_peak);
	assert_int_equal(h->bufs[1].shared[0], 1);
	assert_int_equal(h->hash, g->hash);
	pl_graph_free(h);
	/* more shared bytes than const_bytes holds: refused */
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	char *bad = tu_replace(text, "\"bytes\": 64", "\"bytes\": 65");
	tu_write(dir, "g.json", bad);
	assert_int_equal(pl_graph_load_json(path, &h, err, sizeof(err)), PL_EINPUT);
	assert_non_null(strstr(err, "shared chunks add up to more than"));
	free(bad);
	/* every other wrong group: one message naming what is wrong */
	static const char *const wrong[][2] = {
	    {"{\"bytes\": 64}", "missing array member \"buffers\""},
	    {"{\"bytes\": 64, \"buffers\": [0, 7]}", "no buffer 7"},
	    {"{\"bytes\": 64, \"buffers\": [0, 0]}", "listed twice"},
	    {"{\"bytes\": 64, \"buffers\": []}", "no buffers"},
	    {"{\"bytes\": 1, \"buffers\": [0]}, {\"bytes\": 1, \"buffers\": [0]}, "
	     "{\"bytes\": 1, \"buffers\": [0]}",
	     "in more than two shared chunk groups"},
	};
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		bad = tu_replace(text, "{\"bytes\": 64, \"buffers\": [0, 1]}", wrong[i][0]);
		assert_non_null(bad);
		tu_write(dir, "g.json", bad);
		assert_int_equal(pl_graph_load_json(path, &h, err, sizeof(err)), PL_EINPUT);
		if (!strstr(err, wrong[i][1]) || !strstr(err, "shared_chunks"))
			fail_msg("case %zu: '%s' lacks '%s'", i, err, wrong[i][1]);
		free(bad);
	}
	tu_rmdir(dir);
	pl_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(evaluator_matches_reference),
	    cmocka_unit_test(compatible_candidates_make_valid_plans),
	    cmocka_unit_test(evaluator_names_faults),
	    cmocka_unit_test(rebuild_with_side_effects),
	    cmocka_unit_test(batch_norm_replay_stashes_statistics),
	    cmocka_unit_test(copy_of_region_takes_its_size),
	    cmocka_unit_test(shared_chunk_goes_with_its_last_region),
	    cmocka_unit_test(shared_chunks_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
