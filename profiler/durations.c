/*
 * durations.c — each op's duration in the profiled iteration from CUPTI's
 * records, matched to the op by the correlation id of the API call that
 * issued it, and CUPTI's count of kernels against the launches libremat
 * saw (a launch that went around the interposition shows there).
 * libremat's own work inside an op's call (host copies, the proofs'
 * second launches: delta.c; swap copies) carries the op's id too, and is
 * told apart here.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/log.h"
#include "internal.h"

struct corr_idx {
	uint32_t corr;
	uint32_t op;
};

static int cmp_corr(const void *a, const void *b)
{
	uint32_t x = ((const struct corr_idx *)a)->corr, y = ((const struct corr_idx *)b)->corr;
	return x < y ? -1 : x > y;
}

static uint64_t corr_of(const void *ix, size_t i)
{
	return ((const struct corr_idx *)ix)[i].corr;
}

/* A CUPTI record matched to the op it belongs to. */
struct match {
	uint32_t op;
	uint64_t start;
	int64_t dur;
};

static int cmp_match(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->op != y->op)
		return x->op < y->op ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int kind_of_op(int kind)
{
	return kind == REMAT_OP_KERNEL   ? 0
	       : kind == REMAT_OP_MEMCPY ? 1
	       : kind == REMAT_OP_MEMSET ? 2
	                                 : -1;
}

/* One matching of the records: the ops' ids and what became of each
 * record. */
struct matching {
	struct remat_profile *p;
	uint32_t corr_min, corr_max; /* the ops' ids */
	struct corr_idx *ix;         /* the ops' ids, sorted; NULL when out of memory */
	size_t nix;
	struct match *mt; /* the matched records; NULL when out of memory */
	size_t nmt;
	uint64_t kernels, outside, internal, unmatched[3];
	uint32_t rec_min, rec_max;
	uint64_t busy[3]; /* device time of the records in the ops' ids, by kind */
};

static void index_ops(struct matching *g)
{
	const struct remat_profile *p = g->p;
	g->ix = malloc(2 * p->nops * sizeof(*g->ix) + 1);
	for (size_t i = 0; g->ix && i < p->nops; i++) {
		if (p->ops[i].corr_driver)
			g->ix[g->nix++] = (struct corr_idx){p->ops[i].corr_driver, (uint32_t)i};
		if (p->ops[i].corr_runtime)
			g->ix[g->nix++] = (struct corr_idx){p->ops[i].corr_runtime, (uint32_t)i};
	}
	if (g->ix)
		qsort(g->ix, g->nix, sizeof(*g->ix), cmp_corr);
}

static void match_one(struct matching *g, const struct prof_activity *r)
{
	uint32_t c = r->corr;
	g->rec_min = c < g->rec_min ? c : g->rec_min;
	g->rec_max = c > g->rec_max ? c : g->rec_max;
	if (c < g->corr_min || c > g->corr_max) {
		g->outside++;
		return;
	}
	if (r->kind >= 0 && r->kind < 3 && r->duration_ns > 0)
		g->busy[r->kind] += (uint64_t)r->duration_ns;
	if (prof_cupti_is_internal(c)) {
		g->internal++;
		return;
	}
	if (r->kind == 0)
		g->kernels++;
	size_t i = g->ix ? remat_search_key(g->ix, g->nix, corr_of, c) : g->nix;
	const struct corr_idx *hit = i < g->nix ? &g->ix[i] : NULL;
	/* Our own host copies and second launches (delta.c) run inside the
	 * app's call and carry its id: only records of the op's own kind
	 * count (all of a graph's: its nodes' kinds vary). */
	const struct prof_op *o = hit ? &g->p->ops[hit->op] : NULL;
	if (!o || (o->kind != REMAT_OP_GRAPH && kind_of_op(o->kind) != r->kind)) {
		g->unmatched[r->kind]++;
		return;
	}
	if (g->mt)
		g->mt[g->nmt++] = (struct match){hit->op, r->start, r->duration_ns};
}

/* The duration of op o from its records mt[j, k) in start order; the
 * kernels among them that are not the program's (delta.c's second runs). */
static uint64_t op_duration(struct prof_op *o, const struct match *mt, size_t j, size_t k)
{
	if (o->kind != REMAT_OP_KERNEL && o->kind != REMAT_OP_GRAPH) {
		/* The swap copies libremat made for the op (done before it was
		 * issued), then the op's own. */
		o->duration_ns = 0;
		for (size_t q = j + o->swap_copies; q < k; q++)
			o->duration_ns += mt[q].dur;
		return 0;
	}
	/* The op's own kernel, or a graph's nodes from the first start to
	 * the last end.  Inside a runtime call our host copies (delta.c)
	 * carry its id: those before the graph, its nodes, those after it. */
	size_t first = j, last = j + 1;
	if (o->kind == REMAT_OP_GRAPH) {
		int ours = o->corr_runtime && k - j > o->own_copies[0] + o->own_copies[1];
		first = ours ? j + o->own_copies[0] : j;
		last = ours ? k - o->own_copies[1] : k;
	}
	o->duration_ns =
	    (int64_t)(mt[last - 1].start + (uint64_t)mt[last - 1].dur - mt[first].start);
	/* A kernel's other records are the write-set proof's second run. */
	return o->kind == REMAT_OP_KERNEL ? k - j - 1 : 0;
}

/* CUPTI's kernels (less ours) against the launches libremat saw. */
static void cross_check(struct remat_profile *p, uint64_t kernels)
{
	uint64_t launches = 0;
	for (size_t i = 0; i < p->nops; i++)
		launches += p->ops[i].kind == REMAT_OP_KERNEL ? 1 : p->ops[i].graph_kernels;
	p->cupti_kernels = kernels;
	p->cupti_launches = launches;
	p->cupti_mismatch = (int64_t)kernels - (int64_t)launches;
	if (p->cupti_mismatch > 0)
		remat_log(REMAT_LOG_ERROR,
		          "CUPTI saw %llu kernels in the profiled iteration, libremat intercepted "
		          "%llu launches: %lld launch(es) went around the interposition",
		          (unsigned long long)kernels, (unsigned long long)launches,
		          (long long)p->cupti_mismatch);
	else if (p->cupti_mismatch < 0)
		remat_log(REMAT_LOG_ERROR,
		          "CUPTI saw %llu kernels in the profiled iteration, libremat intercepted "
		          "%llu launches: %lld launch(es) have no CUPTI record (no measured "
		          "duration; REMAT_LOG=2 says more)",
		          (unsigned long long)kernels, (unsigned long long)launches,
		          (long long)-p->cupti_mismatch);
}

void prof_durations(struct remat_profile *p, uint32_t corr_min, uint32_t corr_max)
{
	struct prof_activity *rec;
	size_t n = prof_cupti_collect(&rec);
	struct matching g = {.p = p, .corr_min = corr_min, .corr_max = corr_max};
	g.rec_min = UINT32_MAX;
	index_ops(&g);
	g.mt = malloc(n * sizeof(*g.mt) + 1);
	for (size_t r = 0; r < n; r++)
		match_one(&g, &rec[r]);
	if (g.mt)
		qsort(g.mt, g.nmt, sizeof(*g.mt), cmp_match);
	uint64_t ours = 0;
	for (size_t j = 0, k; j < g.nmt; j = k) {
		for (k = j; k < g.nmt && g.mt[k].op == g.mt[j].op;)
			k++;
		ours += op_duration(&p->ops[g.mt[j].op], g.mt, j, k);
	}
	free(g.mt);
	free(g.ix);
	free(rec);
	memcpy(p->profiled_ns, g.busy, sizeof(g.busy));
	p->ops_ns = 0;
	for (size_t i = 0; i < p->nops; i++)
		p->ops_ns += p->ops[i].duration_ns > 0 ? (uint64_t)p->ops[i].duration_ns : 0;
	remat_log(REMAT_LOG_DEBUG,
	          "CUPTI: %zu records (correlation ids %u..%u, the ops' %u..%u): %llu outside the "
	          "ops' ids, %llu libremat's own; not matched to an op: %llu kernels, %llu copies, "
	          "%llu sets",
	          n, g.rec_min, g.rec_max, corr_min, corr_max, (unsigned long long)g.outside,
	          (unsigned long long)g.internal, (unsigned long long)g.unmatched[0],
	          (unsigned long long)g.unmatched[1], (unsigned long long)g.unmatched[2]);
	cross_check(p, g.kernels - (ours < g.kernels ? ours : g.kernels));
}
