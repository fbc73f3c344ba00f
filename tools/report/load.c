/* Loads through the planner library: a trace directory or a graph file
 * through pl_graph_load() (which also rejects corrupt or truncated
 * traces), a plan through pl_plan_load_json() and pl_evaluate() on that
 * same graph. */
#include "report.h"
#include "../../planner/planner.h"

#include <stdlib.h>
#include <string.h>

int rr_load_trace(const char *path, struct rr_trace *t, char *err, size_t errlen)
{
	struct pl_graph *g = NULL;

	memset(t, 0, sizeof(*t));
	if (pl_graph_load(path, &g, err, errlen) != PL_OK)
		return -1;
	t->path = strdup(path);
	t->g = g;
	t->info = &g->trace;
	t->ops = g->ops;
	t->nops = g->nops;
	t->bufs = g->bufs;
	t->nbufs = g->nbufs;
	t->mem = g->live;
	pl_hash_str(g->hash, t->graph_hash);
	t->period = g->trace.is_trace ? g->trace.period : g->nops;
	t->duration_ns = g->trace.duration_ns >= 0 ? g->trace.duration_ns : g->iteration_ns;
	return 0;
}

int rr_export_graph(const struct rr_trace *t, const char *out, char *err, size_t errlen)
{
	char msg[768];

	if (pl_graph_save_json(t->g, out, msg, sizeof(msg)) != PL_OK) {
		snprintf(err, errlen, "cannot write the graph: %s", msg);
		return -1;
	}
	return 0;
}

/* The first position after `after` whose rebuild steps map buffer b again. */
static int rebuilt_before(const struct pl_plan *pp, int after, int b)
{
	for (int q = after + 1; q < pp->nops; q++)
		for (uint32_t s = pp->step_off[q]; s < pp->step_off[q + 1]; s++)
			if ((pp->steps[s].kind == PL_STEP_MAP ||
			     pp->steps[s].kind == PL_STEP_PREFETCH) &&
			    pp->steps[s].arg == b)
				return q;
	return -1;
}

/* The first position at or after `from` with a step of this kind for b. */
static int step_at(const struct pl_plan *pp, int from, int kind, int b)
{
	for (int q = from; q < pp->nops; q++)
		for (uint32_t s = pp->step_off[q]; s < pp->step_off[q + 1]; s++)
			if (pp->steps[s].kind == kind && pp->steps[s].arg == b)
				return q;
	return -1;
}

static void offloads_of(const struct pl_graph *g, const struct pl_plan *pp, const struct pl_eval *e,
                        struct rr_plan *p)
{
	p->gbps = pp->offload_gbps;
	p->stall_ns = e->stall_ns;
	p->host_peak = e->host_peak;
	p->nparked = pp->nparked;
	for (int32_t i = 0; i < pp->nparked; i++)
		p->parked_bytes += g->bufs[pp->parked[i]].size;
	if (e->offloads == 0)
		return;
	p->offloads = calloc((size_t)e->offloads, sizeof(*p->offloads));
	p->host = calloc((size_t)pp->nops + 1, sizeof(*p->host));
	if (!p->offloads || !p->host)
		return;
	for (int q = 0; q < pp->nops; q++)
		for (uint32_t s = pp->step_off[q]; s < pp->step_off[q + 1]; s++) {
			const struct pl_step *st = &pp->steps[s];
			if (st->kind != PL_STEP_OFFLOAD || p->noffloads >= e->offloads)
				continue;
			struct rr_offload *o = &p->offloads[p->noffloads++];
			o->buf = st->arg;
			o->out_at = q;
			o->evict_after = -1;
			for (int k = q; k < pp->nops && o->evict_after < 0; k++)
				for (uint32_t v = pp->evict_off[k]; v < pp->evict_off[k + 1]; v++)
					if (pp->evict[v] == st->arg)
						o->evict_after = k;
			o->fetch_at = step_at(pp, q, PL_STEP_PREFETCH, st->arg);
			o->await_at =
			    step_at(pp, o->fetch_at < 0 ? q : o->fetch_at, PL_STEP_AWAIT, st->arg);
			/* the host copy lives from the copy out to the await (a valid
			 * plan has both) */
			for (int k = q; k < (o->await_at >= 0 ? o->await_at : pp->nops); k++)
				p->host[k] += g->bufs[st->arg].size;
		}
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

	offloads_of(g, pp, e, p);
	p->rebuilds = calloc((size_t)pp->nops + 1, sizeof(*p->rebuilds));
	for (int q = 0; q < pp->nops; q++) {
		struct rr_rebuild *r = &p->rebuilds[p->nrebuilds];
		uint32_t n = pp->step_off[q + 1] - pp->step_off[q];
		/* (offload steps are the offload table's) */
		int rebuilds = 0;
		for (uint32_t s = pp->step_off[q]; s < pp->step_off[q + 1]; s++)
			rebuilds |= !PL_STEP_IS_OFFLOAD(pp->steps[s].kind);
		if (n == 0 || !rebuilds)
			continue;
		r->before_op = q;
		r->replay = calloc(n, sizeof(*r->replay));
		r->steps = calloc(n, sizeof(*r->steps));
		memcpy(r->steps, &pp->steps[pp->step_off[q]], n * sizeof(*r->steps));
		r->nsteps = (int)n;
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
	struct pl_plan *pp = NULL;
	struct pl_eval e;
	int rc = -1;

	memset(p, 0, sizeof(*p));
	memset(&e, 0, sizeof(e));
	if (pl_plan_load_json(path, t->g, &pp, err, errlen) != PL_OK)
		goto out;
	if (pl_evaluate(t->g, pp, &e) != PL_OK) {
		snprintf(err, errlen, "%s: out of memory evaluating the plan", path);
		goto out;
	}
	if (!e.valid) {
		snprintf(err, errlen, "%s: the plan does not fit this trace: %s", path, e.error);
		goto out;
	}
	p->path = strdup(path);
	from_plan(t->g, pp, &e, p);
	rc = 0;
out:
	pl_eval_free(&e);
	pl_plan_free(pp);
	return rc;
}

void rr_trace_free(struct rr_trace *t)
{
	pl_graph_free(t->g);
	free(t->path);
	memset(t, 0, sizeof(*t));
}
void rr_plan_free(struct rr_plan *p)
{
	for (int i = 0; i < p->nrebuilds; i++)
		free(p->rebuilds[i].replay), free(p->rebuilds[i].steps);
	free(p->rebuilds);
	free(p->evicts);
	free(p->offloads);
	free(p->host);
	free(p->mem);
	free(p->path);
	free(p->planner);
	memset(p, 0, sizeof(*p));
}
