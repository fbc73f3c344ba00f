/* Fills the report's model from the planner library: the trace through
 * pl_graph_load_trace() (which also rejects corrupt or truncated traces),
 * a plan through pl_plan_load_json() and pl_evaluate(). */
#include "report.h"
#include "../../planner/planner.h"

#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static enum rr_kind kind_of(int pl_kind)
{
	switch (pl_kind) {
	case PL_KIND_MEMCPY:
		return RR_MEMCPY;
	case PL_KIND_MEMSET:
		return RR_MEMSET;
	case PL_KIND_HOST_FUNC:
		return RR_HOST_FUNC;
	default:
		return RR_KERNEL;
	}
}

/* Every buffer the op references counts as a use: the op touches it, so a
 * buffer evicted at that point would have to be there. */
static void copy_uses(const struct pl_graph *g, const struct pl_op *po, struct rr_op *o)
{
	o->uses = calloc(po->nrefs + 1, sizeof(*o->uses));
	for (uint32_t k = 0; k < po->nrefs; k++)
		o->uses[o->nuses++] = g->refs[po->ref_off + k].buf;
	qsort(o->uses, (size_t)o->nuses, sizeof(*o->uses), cmp_int);
	int n = 0;
	for (int k = 0; k < o->nuses; k++)
		if (n == 0 || o->uses[n - 1] != o->uses[k])
			o->uses[n++] = o->uses[k];
	o->nuses = n;
	o->writes = calloc(po->nrefs + 1, sizeof(*o->writes));
	for (uint32_t k = 0; k < po->nrefs; k++)
		if (g->refs[po->ref_off + k].flags & PL_REF_WRITE)
			o->writes[o->nwrites++] = g->refs[po->ref_off + k].buf;
}

static void from_graph(const struct pl_graph *g, struct rr_trace *t)
{
	pl_hash_str(g->hash, t->graph_hash);
	t->granularity = g->granularity;
	t->small_pool_bytes = g->small_pool_bytes;
	t->nops = g->nops;
	t->nbufs = g->nbufs;
	t->ops = calloc((size_t)g->nops + 1, sizeof(*t->ops));
	t->bufs = calloc((size_t)g->nbufs + 1, sizeof(*t->bufs));
	t->mem = calloc((size_t)g->nops + 1, sizeof(*t->mem));
	for (int i = 0; i < g->nops; i++) {
		const struct pl_op *po = &g->ops[i];
		struct rr_op *o = &t->ops[i];
		o->kind = kind_of(po->kind);
		o->name = strdup(po->name ? po->name : "?");
		o->replayable = po->replayable;
		o->why_not = strdup(po->why_not ? po->why_not : "");
		o->duration_ns = po->duration_ns;
		copy_uses(g, po, o);
		t->mem[i] = g->live[i];
	}
	for (int i = 0; i < g->nbufs; i++) {
		const struct pl_buffer *pb = &g->bufs[i];
		struct rr_buf *b = &t->bufs[i];
		b->size = pb->size;
		b->rounded = pb->rounded;
		b->small = pb->small;
		b->persistent = pb->persistent;
		b->alloc_at = pb->alloc_at;
		b->free_at = pb->free_at;
	}
}

int rr_load_trace(const char *dir, struct rr_trace *t, char *err, size_t errlen)
{
	struct pl_graph *g = NULL;

	memset(t, 0, sizeof(*t));
	if (pl_graph_load_trace(dir, &g, err, errlen) != PL_OK)
		return -1;
	t->dir = strdup(dir);
	from_graph(g, t);
	pl_graph_free(g);
	return rr_trace_extras(dir, t, err, errlen);
}

int rr_export_graph(const char *dir, const char *out, char *err, size_t errlen)
{
	struct pl_graph *g = NULL;
	char msg[768];
	int rc;

	if (pl_graph_load_trace(dir, &g, err, errlen) != PL_OK)
		return -1;
	rc = 0;
	if (pl_graph_save_json(g, out, msg, sizeof(msg)) != PL_OK) {
		snprintf(err, errlen, "cannot write the graph: %s", msg);
		rc = -1;
	}
	pl_graph_free(g);
	return rc;
}

/* The first position after `after` whose rebuild steps map buffer b again. */
static int rebuilt_before(const struct pl_plan *pp, int after, int b)
{
	for (int q = after + 1; q < pp->nops; q++)
		for (uint32_t s = pp->step_off[q]; s < pp->step_off[q + 1]; s++)
			if (pp->steps[s].kind == PL_STEP_MAP && pp->steps[s].arg == b)
				return q;
	return -1;
}

static void from_plan(const struct pl_graph *g, const struct pl_plan *pp, const struct pl_eval *e,
                      struct rr_plan *p)
{
	p->planner = strdup(pp->planner);
	p->budget = pp->budget;
	p->peak_before = g->baseline_peak;
	p->peak_after = e->peak;
	p->recompute_ns = e->recompute_ns;
	p->mem = calloc((size_t)pp->nops + 1, sizeof(*p->mem));
	memcpy(p->mem, e->curve, (size_t)pp->nops * sizeof(*p->mem));

	p->evicts = calloc(pp->evict_off[pp->nops] + 1, sizeof(*p->evicts));
	for (int q = 0; q < pp->nops; q++)
		for (uint32_t k = pp->evict_off[q]; k < pp->evict_off[q + 1]; k++)
			p->evicts[p->nevicts++] =
			    (struct rr_evict){pp->evict[k], q, rebuilt_before(pp, q, pp->evict[k])};

	p->rebuilds = calloc((size_t)pp->nops + 1, sizeof(*p->rebuilds));
	for (int q = 0; q < pp->nops; q++) {
		struct rr_rebuild *r = &p->rebuilds[p->nrebuilds];
		uint32_t n = pp->step_off[q + 1] - pp->step_off[q];
		if (n == 0)
			continue;
		r->before_op = q;
		r->replay = calloc(n, sizeof(*r->replay));
		for (uint32_t s = pp->step_off[q]; s < pp->step_off[q + 1]; s++) {
			const struct pl_step *st = &pp->steps[s];
			if (st->kind != PL_STEP_REPLAY)
				continue;
			r->replay[r->nreplay++] = st->arg;
			r->cost_ns += g->ops[st->arg].duration_ns;
		}
		p->nrebuilds++;
	}
}

int rr_load_plan(const char *path, const struct rr_trace *t, struct rr_plan *p, char *err,
                 size_t errlen)
{
	struct pl_graph *g = NULL;
	struct pl_plan *pp = NULL;
	struct pl_eval e;
	int rc = -1;

	memset(p, 0, sizeof(*p));
	memset(&e, 0, sizeof(e));
	/* The planner checks a plan against its own graph, so load it again. */
	if (pl_graph_load_trace(t->dir, &g, err, errlen) != PL_OK)
		return -1;
	if (pl_plan_load_json(path, g, &pp, err, errlen) != PL_OK)
		goto out;
	if (pl_evaluate(g, pp, &e) != PL_OK) {
		snprintf(err, errlen, "%s: out of memory evaluating the plan", path);
		goto out;
	}
	if (!e.valid) {
		snprintf(err, errlen, "%s: the plan does not fit this trace: %s", path, e.error);
		goto out;
	}
	p->path = strdup(path);
	from_plan(g, pp, &e, p);
	rc = 0;
out:
	pl_eval_free(&e);
	pl_plan_free(pp);
	pl_graph_free(g);
	return rc;
}

void rr_trace_free(struct rr_trace *t)
{
	for (int i = 0; i < t->nops; i++) {
		free(t->ops[i].name);
		free(t->ops[i].via);
		free(t->ops[i].why_not);
		free(t->ops[i].uses);
		free(t->ops[i].writes);
	}
	for (int i = 0; i < t->nbufs; i++) {
		for (int k = 0; k < t->bufs[i].nsite; k++)
			free(t->bufs[i].site[k]);
		free(t->bufs[i].site);
	}
	free(t->ops);
	free(t->bufs);
	free(t->mem);
	free(t->dir);
	free(t->cmdline);
	free(t->device);
	free(t->cupti_note);
	memset(t, 0, sizeof(*t));
}

void rr_plan_free(struct rr_plan *p)
{
	for (int i = 0; i < p->nrebuilds; i++)
		free(p->rebuilds[i].replay);
	free(p->rebuilds);
	free(p->evicts);
	free(p->mem);
	free(p->path);
	free(p->planner);
	memset(p, 0, sizeof(*p));
}
