/*
 * test_validate.c — the runtime's plan check (replay/validate.c) against
 * the planner's evaluator (planner/model/evaluate.c): two implementations of the
 * same rules, fed the same plans — the planner's own and single random
 * edits of them, mostly invalid — on random training-like graphs.  They
 * must agree on every verdict and, for a valid plan, on its peak.  Also the
 * slots of the pinned pool the runtime gives a valid plan's host copies
 * (replay/offload_slots.c).
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
		                               .free_at = u->free_at,
		                               .shared = {u->shared[0], u->shared[1]}};
	}
	/* Shared chunks: the test graphs' groups are pairs of neighbours, as a
	 * profile's runs are consecutive regions; their bytes are edge bytes. */
	p->nshared = (size_t)g->nshared;
	p->shared = calloc(p->nshared ? p->nshared : 1, sizeof(*p->shared));
	for (int32_t i = 0; i < g->nshared; i++) {
		const struct pl_shared *sh = &g->shared[i];
		for (uint32_t k = 1; k < sh->n; k++)
			assert_int_equal(g->shared_bufs[sh->off + k],
			                 g->shared_bufs[sh->off] + (int32_t)k);
		p->shared[i] = (struct prof_shared){
		    .bytes = (uint64_t)sh->bytes, .first = g->shared_bufs[sh->off], .n = sh->n};
		p->edge_bytes += (uint64_t)sh->bytes;
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
	free(p->shared);
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
			struct pl_plan *p = tu_random_selection(g, &cs, &s, &sel);
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

/* Random selections of offloads and rebuilds on random graphs whose ops
 * are 0.1 to 10 ms (time for a copy to hide): 6 plans on each of 30 graphs,
 * each handed to fn with the graph, its profile and a random state. */
typedef void offload_plan_fn(const struct pl_graph *g, const struct remat_profile *prof,
                             const struct pl_plan *p, uint64_t *s, void *ctx);
static void each_offload_plan(offload_plan_fn *fn, void *ctx)
{
	for (uint64_t seed = 1; seed <= 30; seed++) {
		uint64_t s = seed * 7919;
		struct rg_opts o = tu_mixed_opts(seed);
		struct pl_graph *g = tu_random_graph(seed, &o);
		assert_non_null(g);
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
			p->graph_hash = prof->graph_hash;
			fn(g, prof, p, &s, ctx);
			pl_plan_free(p);
			pl_sel_free(&sel);
		}
		pl_cands_free(&cs);
		profile_free(prof);
		pl_graph_free(g);
	}
}

struct agreement {
	int nvalid, ninvalid, offloading;
};

static void agree_offloading(const struct pl_graph *g, const struct remat_profile *prof,
                             const struct pl_plan *p, uint64_t *s, void *ctx)
{
	struct agreement *a = ctx;
	for (uint32_t k = 0; k < p->step_off[p->nops]; k++)
		if (p->steps[k].kind == PL_STEP_OFFLOAD) {
			a->offloading++;
			break;
		}
	agree_mutated(g, prof, p, s, &a->nvalid, &a->ninvalid);
}

/* Plans that offload (version 3): the runtime's check agrees with the
 * evaluator on random selections of offloads and rebuilds and on their
 * mutations (memory of prefetch destinations included: same peak). */
static void offload_agrees(void **state)
{
	(void)state;
	struct agreement a = {0};
	each_offload_plan(agree_offloading, &a);
	print_message("%d plans offload; %d valid and %d invalid agree\n", a.offloading, a.nvalid,
	              a.ninvalid);
	assert_true(a.offloading >= 30);
	assert_true(a.nvalid > 50);
	assert_true(a.ninvalid > 200);
}

/* Two regions A and B (100 bytes each) share a 64-byte chunk; C (150)
 * is allocated for op 2 (tu_shared_graph).  The runtime's check counts the
 * chunk until the last of A and B is evicted, and from the first one
 * mapped again: with only A out op 2 needs B, the chunk and C; with both
 * out, C alone. */
static void shared_chunk_counts_while_one_region_is_mapped(void **state)
{
	(void)state;
	struct pl_graph *g = tu_shared_graph();
	assert_non_null(g);
	struct remat_profile *prof = profile_of(g);
	char why[512];
	int64_t peak;
	/* only A out over op 2: 100 + 64 + 150 there; 264 at op 1 */
	struct pl_plan *pl = tu_shared_plan(0);
	pl->graph_hash = prof->graph_hash;
	assert_int_equal(replay_plan_validate(prof, pl, 314, &peak, why, sizeof(why)), 0);
	assert_int_equal(peak, 314);
	assert_int_equal(replay_plan_validate(prof, pl, 313, NULL, why, sizeof(why)), -1);
	pl_plan_free(pl);
	/* both out: the chunk goes, op 2 needs C alone; back before op 3 */
	pl = tu_shared_plan(1);
	pl->graph_hash = prof->graph_hash;
	if (replay_plan_validate(prof, pl, 264, &peak, why, sizeof(why)))
		fail_msg("%s", why);
	assert_int_equal(peak, 264);
	pl_plan_free(pl);
	profile_free(prof);
	pl_graph_free(g);
}

/* Parking (parked_on_host, tu_park_graph): the planner's plan parks 0; both checks take it with the
 * same peak, and both refuse it parking 1, 0 twice, or 0 without offload_gbps. */
static void parked_agrees(void **state)
{
	(void)state;
	char *dir = tu_tmpdir(), err[512];
	struct pl_graph *g = NULL;
	assert_non_null(dir);
	assert_int_equal(
	    pl_graph_load(tu_write(dir, "g.json", tu_park_graph), &g, err, sizeof(err)), 0);
	struct remat_profile *prof = profile_of(g);
	struct pl_options o;
	pl_options_default(&o);
	o.offload_gbps = 50;
	struct pl_plan *pl = NULL;
	struct pl_result res;
	if (pl_plan_make(g, 1000, &o, &pl, &res))
		fail_msg("%s", res.error);
	assert_int_equal(pl->nparked, 1);
	int nvalid = 0, ninvalid = 0;
	agree(g, prof, pl, &nvalid, &ninvalid);
	assert_int_equal(nvalid, 1);
	int32_t *parked = pl->parked, touched[] = {1}, twice[] = {0, 0};
	pl->parked = touched;
	agree(g, prof, pl, &nvalid, &ninvalid);
	pl->parked = twice;
	pl->nparked = 2;
	agree(g, prof, pl, &nvalid, &ninvalid);
	pl->parked = parked;
	pl->nparked = 1;
	pl->offload_gbps = 0;
	agree(g, prof, pl, &nvalid, &ninvalid);
	assert_int_equal(nvalid, 1);
	assert_int_equal(ninvalid, 3);
	pl_plan_free(pl);
	profile_free(prof);
	pl_graph_free(g);
	tu_rmdir(dir);
}

/* ---- the pinned pool's slots (replay/offload_slots.c) --------------------- */

/* Checks slots s of valid plan pl: two copies on the host at once (offload
 * to await, in plan order) never share a byte; each copy follows, for every
 * 4 KiB of its slot, the last copy before it (cyclically, itself last) that
 * used it, and only copies that share bytes with it; the pool is no more
 * than one slot per copy and no less than the bytes held at once. */
static void check_slots(const struct remat_profile *prof, const struct pl_plan *pl,
                        const struct replay_slots *s)
{
	uint32_t nsteps = pl->step_off[pl->nops];
	int32_t nc = s->ncopies;
	int64_t *from = calloc((size_t)nc + 1, sizeof(int64_t)),
	        *to = calloc((size_t)nc + 1, sizeof(int64_t));
	int32_t *open = malloc(prof->nbufs * sizeof(int32_t));
	assert_true(from && to && open);
	memset(open, 0xff, prof->nbufs * sizeof(int32_t));
	int32_t c = 0;
	uint64_t live = 0, peak = 0, sum = 0;
	for (uint32_t i = 0; i < nsteps; i++) {
		const struct pl_step *st = &pl->steps[i];
		if (st->kind == PL_STEP_OFFLOAD) {
			assert_int_equal(s->copy_of_step[i], c);
			assert_int_equal(s->buf[c], st->arg);
			assert_true(s->bytes[c] >= prof->bufs[st->arg].size &&
			            s->bytes[c] % 4096 == 0);
			assert_true(s->slot[c] + s->bytes[c] <= s->pool_bytes);
			from[c] = i;
			open[st->arg] = c++;
			live += s->bytes[c - 1];
			sum += s->bytes[c - 1];
			peak = live > peak ? live : peak;
		} else {
			assert_int_equal(s->copy_of_step[i], -1);
			if (st->kind == PL_STEP_AWAIT) {
				assert_true(open[st->arg] >= 0);
				to[open[st->arg]] = i;
				live -= s->bytes[open[st->arg]];
				open[st->arg] = -1;
			}
		}
	}
	assert_int_equal(c, nc);
	assert_int_equal(s->sum, sum);
	assert_int_equal(s->live_peak, peak);
	assert_true(s->pool_bytes >= peak && s->pool_bytes <= sum);
	for (int32_t i = 0; i < nc; i++)
		for (int32_t j = i + 1; j < nc; j++)
			if (from[j] < to[i] && from[i] < to[j]) /* on the host at once */
				assert_true(s->slot[i] + s->bytes[i] <= s->slot[j] ||
				            s->slot[j] + s->bytes[j] <= s->slot[i]);
	for (int32_t j = 0; j < nc; j++) {
		for (uint32_t k = s->after_off[j]; k < s->after_off[j + 1]; k++) {
			int32_t o = s->after[k];
			assert_true(o >= 0 && o < nc);
			assert_true(s->slot[o] < s->slot[j] + s->bytes[j] &&
			            s->slot[j] < s->slot[o] + s->bytes[o]);
		}
		for (uint64_t at = s->slot[j]; at < s->slot[j] + s->bytes[j]; at += 4096) {
			int32_t last = -1;
			for (int32_t back = 1; back <= nc && last < 0; back++) {
				int32_t o = (j - back + nc) % nc;
				if (s->slot[o] <= at && at < s->slot[o] + s->bytes[o])
					last = o;
			}
			int found = 0;
			for (uint32_t k = s->after_off[j]; k < s->after_off[j + 1]; k++)
				found |= s->after[k] == last;
			if (!found)
				fail_msg(
				    "copy %d does not follow copy %d, the last to use byte %llu of "
				    "its slot",
				    j, last, (unsigned long long)at);
		}
	}
	free(from);
	free(to);
	free(open);
}

/* Three copies of one size, each on the host from its offload to its
 * await: A (ops 1-4) and B (3-6) overlap, C (5-8) comes after A's await, so
 * C takes A's slot and the pool is two slots, not three.  C's copy out
 * follows A's copy back, A's (next iteration) C's, B's its own. */
static void slots_reused(void **state)
{
	(void)state;
	struct remat_profile prof = {.nbufs = 3, .nops = 10};
	struct prof_buf bufs[3] = {{.size = 10000}, {.size = 10000}, {.size = 12288}};
	prof.bufs = bufs;
	struct pl_plan_builder *b = pl_builder_new(10);
	const int32_t at[3][2] = {{1, 4}, {3, 6}, {5, 8}};
	for (int32_t k = 0; k < 3; k++) {
		assert_int_equal(pl_builder_step(b, at[k][0], PL_STEP_OFFLOAD, k), 0);
		assert_int_equal(pl_builder_step(b, at[k][1], PL_STEP_AWAIT, k), 0);
	}
	struct pl_plan *pl = pl_builder_finish(b);
	assert_non_null(pl);
	struct replay_slots s;
	assert_int_equal(replay_slots_plan(&prof, pl, &s), 0);
	check_slots(&prof, pl, &s);
	assert_int_equal(s.ncopies, 3);
	assert_int_equal(s.sum, 3 * 12288);
	assert_int_equal(s.pool_bytes, 2 * 12288);
	assert_int_equal(s.live_peak, 2 * 12288);
	assert_int_equal(s.slot[2], s.slot[0]);
	for (int32_t j = 0; j < 3; j++)
		assert_int_equal(s.after_off[j + 1] - s.after_off[j], 1);
	assert_int_equal(s.after[s.after_off[2]], 0);
	assert_int_equal(s.after[s.after_off[0]], 2);
	assert_int_equal(s.after[s.after_off[1]], 1);
	replay_slots_free(&s);
	pl_plan_free(pl);
}

struct slot_count {
	int plans, shared;
};

static void slots_of(const struct pl_graph *g, const struct remat_profile *prof,
                     const struct pl_plan *p, uint64_t *s, void *ctx)
{
	(void)g;
	(void)s;
	struct slot_count *n = ctx;
	char why[512];
	if (replay_plan_validate(prof, p, INT64_MAX, NULL, why, sizeof(why)))
		return;
	struct replay_slots sl;
	assert_int_equal(replay_slots_plan(prof, p, &sl), 0);
	check_slots(prof, p, &sl);
	n->plans += sl.ncopies > 0;
	n->shared += sl.pool_bytes < sl.sum;
	replay_slots_free(&sl);
}

/* The planner's offloading plans on random graphs (valid ones): slots
 * placed and ordered safely.  (Their copies are mostly on the host at once,
 * as a training iteration's are: out in the forward pass, back in the
 * backward pass, so few share.) */
static void slots_of_random_plans(void **state)
{
	(void)state;
	struct slot_count n = {0};
	each_offload_plan(slots_of, &n);
	print_message("%d valid plans offload, %d of them share slots\n", n.plans, n.shared);
	assert_true(n.plans >= 30);
}

/* Random schedules of host copies (buffers of random sizes, each offloaded
 * over a few gaps that do not overlap): copies that take turns share
 * slots, of all sizes, and every one is placed and ordered safely. */
static void slots_of_random_schedules(void **state)
{
	(void)state;
	uint64_t rng = 12345;
	int shared = 0;
	for (int trial = 0; trial < 300; trial++) {
		int32_t nops = 20 + (int32_t)(tu_rand(&rng) % 60),
		        nbufs = 1 + (int32_t)(tu_rand(&rng) % 12);
		struct prof_buf bufs[12];
		memset(bufs, 0, sizeof(bufs));
		struct remat_profile prof = {
		    .nbufs = (size_t)nbufs, .nops = (size_t)nops, .bufs = bufs};
		struct pl_plan_builder *b = pl_builder_new(nops);
		for (int32_t k = 0; k < nbufs; k++) {
			bufs[k].size = 1 + tu_rand(&rng) % (5 * 4096);
			for (int32_t at = (int32_t)(tu_rand(&rng) % 10);;) {
				int32_t until = at + 1 + (int32_t)(tu_rand(&rng) % 12);
				if (until >= nops)
					break;
				assert_int_equal(pl_builder_step(b, at, PL_STEP_OFFLOAD, k), 0);
				assert_int_equal(pl_builder_step(b, until, PL_STEP_AWAIT, k), 0);
				at = until + (int32_t)(tu_rand(&rng) % 6);
			}
		}
		struct pl_plan *pl = pl_builder_finish(b);
		assert_non_null(pl);
		struct replay_slots sl;
		assert_int_equal(replay_slots_plan(&prof, pl, &sl), 0);
		check_slots(&prof, pl, &sl);
		shared += sl.pool_bytes < sl.sum;
		replay_slots_free(&sl);
		pl_plan_free(pl);
	}
	print_message("%d of 300 schedules share slots\n", shared);
	assert_true(shared >= 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shared_chunk_counts_while_one_region_is_mapped),
	    cmocka_unit_test(parked_agrees),
	    cmocka_unit_test(runtime_agrees_with_evaluator),
	    cmocka_unit_test(offload_agrees),
	    cmocka_unit_test(slots_reused),
	    cmocka_unit_test(slots_of_random_plans),
	    cmocka_unit_test(slots_of_random_schedules)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
