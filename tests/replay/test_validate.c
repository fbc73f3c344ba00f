/*
 * test_validate.c — the runtime's plan check (replay/validate.c) against
 * the planner's evaluator (planner/evaluate.c): two implementations of the
 * same rules, fed the same plans — the planner's own and single random
 * edits of them, mostly invalid — on random training-like graphs.  They
 * must agree on every verdict and, for a valid plan, on its peak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../replay/internal.h"
#include "../planner/testutil.h"

/* The profile the runtime would hold for graph g: the same buffers, and
 * per op the lists a trace carries (reads, writes, partial writes). */
static struct remat_profile *profile_of(const struct pl_graph *g)
{
	struct remat_profile *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->graph_hash = 0x5eed;
	p->granularity = (uint64_t)g->granularity;
	p->small_pool_bytes = (uint64_t)g->const_bytes;
	p->nkernels = 1;
	p->kernels = calloc(1, sizeof(*p->kernels));
	p->kernels[0].layout_known = 1;
	p->nbufs = (size_t)g->nbufs;
	p->bufs = calloc(p->nbufs ? p->nbufs : 1, sizeof(*p->bufs));
	for (int32_t b = 0; b < g->nbufs; b++) {
		const struct pl_buffer *u = &g->bufs[b];
		p->bufs[b] = (struct prof_buf){.addr = 0x100000000ull * (uint64_t)(b + 1),
		                               .size = (uint64_t)u->size,
		                               .rounded = (uint64_t)u->rounded,
		                               .small = u->small,
		                               .persistent = u->persistent,
		                               .dead_across = u->dead_across,
		                               .alloc_at = u->alloc_at,
		                               .free_at = u->free_at};
	}
	p->nops = (size_t)g->nops;
	p->ops = calloc(p->nops ? p->nops : 1, sizeof(*p->ops));
	for (int32_t k = 0; k < g->nops; k++) {
		const struct pl_op *op = &g->ops[k];
		struct prof_op *o = &p->ops[k];
		o->kind = REMAT_OP_KERNEL;
		o->kernel = 0;
		o->replayable = op->replayable;
		size_t n = op->nrefs ? op->nrefs : 1;
		o->reads = calloc(n, sizeof(int32_t));
		o->writes = calloc(n, sizeof(int32_t));
		o->partial = calloc(n, sizeof(int32_t));
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			if (r->flags & PL_REF_PARTIAL)
				o->partial[o->npartial++] = r->buf;
			else if (r->flags & PL_REF_READ)
				o->reads[o->nreads++] = r->buf;
			if (r->flags & PL_REF_WRITE)
				o->writes[o->nwrites++] = r->buf;
		}
	}
	return p;
}

static void profile_free(struct remat_profile *p)
{
	for (size_t k = 0; k < p->nops; k++) {
		free(p->ops[k].reads);
		free(p->ops[k].writes);
		free(p->ops[k].partial);
	}
	free(p->ops);
	free(p->bufs);
	free(p->kernels);
	free(p);
}

static void agree(const struct pl_graph *g, const struct remat_profile *prof,
                  const struct pl_plan *pl, int *nvalid, int *ninvalid)
{
	struct pl_plan copy = *pl;
	copy.graph_hash = prof->graph_hash;
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, &copy, &e), 0);
	char why[512] = "";
	int64_t peak = 0;
	int rc = replay_plan_validate(prof, &copy, INT64_MAX, &peak, why, sizeof(why));
	if ((rc == 0) != (e.valid != 0))
		fail_msg("they disagree: the evaluator says %s, the runtime %s",
		         e.valid ? "valid" : e.error, rc ? why : "valid");
	if (e.valid) {
		assert_int_equal(peak, e.peak);
		/* At a budget one byte under its peak the runtime refuses it. */
		assert_int_equal(
		    replay_plan_validate(prof, &copy, e.peak - 1, NULL, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "over the budget"));
		(*nvalid)++;
	} else {
		assert_true(strlen(why) > 0);
		(*ninvalid)++;
	}
	pl_eval_free(&e);
}

/* agree() on plan p and on 8 random mutations of it. */
static void agree_mutated(const struct pl_graph *g, const struct remat_profile *prof,
                          const struct pl_plan *p, uint64_t *s, int *nvalid, int *ninvalid)
{
	agree(g, prof, p, nvalid, ninvalid);
	for (int m = 0; m < 8; m++) {
		struct pl_plan *q = tu_mutate(g, p, s);
		agree(g, prof, q, nvalid, ninvalid);
		pl_plan_free(q);
	}
}

static void runtime_agrees_with_evaluator(void **state)
{
	(void)state;
	int nvalid = 0, ninvalid = 0;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		uint64_t s = seed * 104729;
		struct rg_opts o = tu_mixed_opts(seed);
		struct pl_graph *g = tu_random_graph(seed, &o);
		assert_non_null(g);
		struct remat_profile *prof = profile_of(g);
		struct pl_options opt;
		pl_options_default(&opt);
		opt.plan_version = 2;
		struct pl_cands cs;
		assert_int_equal(pl_cands_build(g, &opt, &cs, NULL, 0), 0);
		struct pl_selection sel;
		for (int trial = 0; trial < 10; trial++) {
			assert_int_equal(pl_sel_init(&sel, &cs), 0);
			for (int32_t j = 0; j < cs.ncands; j++)
				if (tu_rand(&s) % 3 == 0 && pl_sel_compatible(&sel, j))
					pl_sel_take(&sel, &cs, j);
			struct pl_plan *p = pl_sel_plan(g, &cs, sel.chosen);
			assert_non_null(p);
			agree_mutated(g, prof, p, &s, &nvalid, &ninvalid);
			pl_plan_free(p);
			pl_sel_free(&sel);
		}
		pl_cands_free(&cs);
		profile_free(prof);
		pl_graph_free(g);
	}
	print_message("%d valid and %d invalid plans agree\n", nvalid, ninvalid);
	assert_true(nvalid > 200);
	assert_true(ninvalid > 500);
}

/* Plans that offload (version 3): the runtime's check agrees with the
 * evaluator on random selections of offloads and rebuilds and on their
 * mutations (memory of prefetch destinations included: same peak). */
static void offload_agrees(void **state)
{
	(void)state;
	int nvalid = 0, ninvalid = 0, offloading = 0;
	for (uint64_t seed = 1; seed <= 30; seed++) {
		uint64_t s = seed * 7919;
		struct rg_opts o = tu_mixed_opts(seed);
		struct pl_graph *g = tu_random_graph(seed, &o);
		assert_non_null(g);
		/* ops of 0.1 to 10 ms: time for a copy to hide */
		g->iteration_ns = 0;
		for (int32_t k = 0; k < g->nops; k++)
			g->iteration_ns += g->ops[k].duration_ns *= 100000;
		struct remat_profile *prof = profile_of(g);
		struct pl_options opt;
		pl_options_default(&opt);
		opt.plan_version = 2;
		opt.offload_gbps = 52.8;
		struct pl_cands cs;
		assert_int_equal(pl_cands_build(g, &opt, &cs, NULL, 0), 0);
		for (int trial = 0; trial < 6; trial++) {
			struct pl_selection sel;
			assert_int_equal(pl_sel_init(&sel, &cs), 0);
			for (int32_t j = 0; j < cs.ncands; j++)
				if (tu_rand(&s) % (cs.c[j].offload ? 2 : 4) == 0 &&
				    pl_sel_compatible(&sel, j))
					pl_sel_take(&sel, &cs, j);
			struct pl_plan *p = pl_sel_plan(g, &cs, sel.chosen);
			assert_non_null(p);
			for (uint32_t k = 0; k < p->step_off[p->nops]; k++)
				if (p->steps[k].kind == PL_STEP_OFFLOAD) {
					offloading++;
					break;
				}
			agree_mutated(g, prof, p, &s, &nvalid, &ninvalid);
			pl_plan_free(p);
			pl_sel_free(&sel);
		}
		pl_cands_free(&cs);
		profile_free(prof);
		pl_graph_free(g);
	}
	print_message("%d plans offload; %d valid and %d invalid agree\n", offloading, nvalid,
	              ninvalid);
	assert_true(offloading >= 30);
	assert_true(nvalid > 50);
	assert_true(ninvalid > 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(runtime_agrees_with_evaluator),
	                                   cmocka_unit_test(offload_agrees)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
