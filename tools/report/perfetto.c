/* The iteration as a Chrome trace-event file (JSON), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: one track per stream with
 * every op, the plan's rebuilds and evictions as slices of their own, and
 * the memory curve without and with the plan as counter tracks.
 *
 * The profiled iteration ran its ops one after another (the profiler
 * synchronises around each op), so op i starts where op i-1 ended.  With a
 * plan, a rebuild's replays run before the op that needs them, on that op's
 * stream, and push everything after them later by their cost: the timeline
 * is the iteration as the plan runs it.  Times are microseconds, as the
 * format wants.
 */
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#define PID 1 /* one process: the iteration */

static const char *kind_name(const struct pl_op *o)
{
	static const char *names[] = {"kernel", "memcpy", "memset", "host_func", "other"};
	return o->kind <= PL_KIND_OTHER ? names[o->kind] : "other";
}

static double us(int64_t ns)
{
	return (double)ns / 1000.0;
}

/* Streams are small ids; tid 0 means "no thread" to some viewers. */
static int tid_of(const struct pl_op *o)
{
	return o->stream + 1;
}

static json_t *event(const char *ph, const char *name, const char *cat, int tid, double ts)
{
	json_t *e = json_pack("{s:s, s:s, s:i, s:i, s:f}", "ph", ph, "name", name, "pid", PID,
	                      "tid", tid, "ts", ts);
	if (e && cat)
		json_object_set_new(e, "cat", json_string(cat));
	return e;
}

static void slice(json_t *events, const char *name, const char *cat, int tid, double ts, double dur,
                  json_t *args)
{
	json_t *e = event("X", name, cat, tid, ts);
	json_object_set_new(e, "dur", json_real(dur));
	json_object_set_new(e, "args", args ? args : json_object());
	json_array_append_new(events, e);
}

static void counter(json_t *events, const char *name, double ts, int64_t bytes)
{
	json_t *e = event("C", name, NULL, 0, ts);
	json_object_set_new(e, "args", json_pack("{s:I}", "bytes", (json_int_t)bytes));
	json_array_append_new(events, e);
}

static void metadata(json_t *events, const char *what, int tid, const char *key, json_t *value)
{
	json_t *e = event("M", what, NULL, tid, 0);
	json_object_set_new(e, "args", json_pack("{s:o}", key, value));
	json_array_append_new(events, e);
}

/* What the viewer shows when an op is selected: its buffers above all. */
static json_t *op_args(const struct rr_trace *t, int i)
{
	const struct pl_op *o = &t->ops[i];
	json_t *reads = json_array(), *writes = json_array();
	for (uint32_t k = 0; k < o->nrefs; k++)
		json_array_append_new(rr_ref_writes(t, o, k) ? writes : reads,
		                      json_integer(rr_ref_buf(t, o, k)));
	json_t *a = json_pack("{s:i, s:s, s:i, s:o, s:o}", "op", i, "kind", kind_name(o), "stream",
	                      o->stream, "reads", reads, "writes", writes);
	if (*o->via)
		json_object_set_new(a, "via", json_string(o->via));
	if (o->kind == PL_KIND_MEMCPY || o->kind == PL_KIND_MEMSET)
		json_object_set_new(a, "bytes", json_integer(o->bytes));
	if (*o->copy)
		json_object_set_new(a, "copy", json_string(o->copy));
	if (!o->measured)
		json_object_set_new(a, "duration",
		                    json_string("not measured: the mean of the others"));
	if (!o->replayable)
		json_object_set_new(a, "never_replayed", json_string(o->why_not));
	return a;
}

/* The rebuild before op q, or NULL. */
static const struct rr_rebuild *rebuild_at(const struct rr_plan *p, int q)
{
	for (int i = 0; p && i < p->nrebuilds; i++)
		if (p->rebuilds[i].before_op == q)
			return &p->rebuilds[i];
	return NULL;
}

static double put_rebuild(json_t *events, const struct rr_trace *t, const struct rr_rebuild *r,
                          int tid, double ts)
{
	char name[96];
	double start = ts;
	json_t *replayed = json_array();
	for (int k = 0; k < r->nreplay; k++)
		json_array_append_new(replayed, json_integer(r->replay[k]));
	snprintf(name, sizeof(name), "rebuild before op %d", r->before_op);
	/* The enclosing slice first: viewers nest what starts inside it. */
	slice(events, name, "rebuild", tid, ts, us(r->cost_ns),
	      json_pack("{s:i, s:o, s:I}", "before_op", r->before_op, "replayed", replayed,
	                "cost_ns", (json_int_t)r->cost_ns));
	/* Replays take their op's time; the other steps (map, save, restore,
	 * release: memory moves the model does not time) are instants. */
	for (int k = 0; k < r->nsteps; k++) {
		const struct pl_step *st = &r->steps[k];
		if (st->kind == PL_STEP_REPLAY) {
			const struct pl_op *o = &t->ops[st->arg];
			snprintf(name, sizeof(name), "replay %d: %.60s", st->arg, o->name);
			slice(events, name, "replay", tid, ts, us(o->duration_ns),
			      op_args(t, st->arg));
			ts += us(o->duration_ns);
			continue;
		}
		const char *kind =
		    st->kind >= 0 && st->kind < PL_STEP_KINDS ? pl_step_names[st->kind] : "step";
		snprintf(name, sizeof(name), "%s #%d", kind, st->arg);
		slice(events, name, kind, tid, ts, 0,
		      json_pack("{s:i, s:I}", "buffer", st->arg, "bytes",
		                (json_int_t)t->bufs[st->arg].rounded));
	}
	return ts > start + us(r->cost_ns) ? ts : start + us(r->cost_ns);
}

static void put_evictions(json_t *events, const struct rr_trace *t, const struct rr_plan *p, int q,
                          int tid, double ts)
{
	char name[64];
	for (int i = 0; p && i < p->nevicts; i++) {
		const struct rr_evict *e = &p->evicts[i];
		if (e->after_op != q)
			continue;
		snprintf(name, sizeof(name), "evict #%d", e->buf);
		slice(events, name, "evict", tid, ts, 0,
		      json_pack("{s:i, s:I, s:i, s:i}", "buffer", e->buf, "bytes",
		                (json_int_t)t->bufs[e->buf].rounded, "after_op", e->after_op,
		                "rebuilt_before_op", e->before_op));
	}
}

static void put_tracks(json_t *events, const struct rr_trace *t)
{
	char name[160];
	snprintf(name, sizeof(name), "iteration %s%s%.100s", t->graph_hash, *t->g->name ? ": " : "",
	         t->g->name);
	metadata(events, "process_name", 0, "name", json_string(name));
	for (int i = 0; i < t->nops; i++) {
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = t->ops[j].stream == t->ops[i].stream;
		if (seen)
			continue;
		snprintf(name, sizeof(name), "stream %d", t->ops[i].stream);
		metadata(events, "thread_name", tid_of(&t->ops[i]), "name", json_string(name));
		metadata(events, "thread_sort_index", tid_of(&t->ops[i]), "sort_index",
		         json_integer(t->ops[i].stream));
	}
}

json_t *rr_perfetto_events(const struct rr_trace *t, const struct rr_plan *p)
{
	json_t *events = json_array();
	double ts = 0;
	put_tracks(events, t);
	for (int q = 0; q < t->nops; q++) {
		const struct pl_op *o = &t->ops[q];
		const struct rr_rebuild *r = rebuild_at(p, q);
		if (r)
			ts = put_rebuild(events, t, r, tid_of(o), ts);
		counter(events, RR_COUNTER_BASE, ts, t->mem[q]);
		if (p)
			counter(events, RR_COUNTER_PLAN, ts, p->mem[q]);
		slice(events, o->name, kind_name(o), tid_of(o), ts, us(o->duration_ns),
		      op_args(t, q));
		ts += us(o->duration_ns);
		put_evictions(events, t, p, q, tid_of(o), ts);
	}
	/* The curves end with the iteration, at its last level. */
	counter(events, RR_COUNTER_BASE, ts, t->mem[t->nops - 1]);
	if (p)
		counter(events, RR_COUNTER_PLAN, ts, p->mem[t->nops - 1]);
	return events;
}

int rr_write_perfetto(const char *path, const struct rr_trace *t, const struct rr_plan *p,
                      char *err, size_t errlen)
{
	json_t *root = json_pack("{s:o, s:s}", "traceEvents", rr_perfetto_events(t, p),
	                         "displayTimeUnit", "ns");
	int rc = root ? json_dump_file(root, path, JSON_COMPACT) : -1;
	if (rc)
		snprintf(err, errlen, "%s: cannot write the timeline: %s", path,
		         root ? strerror(errno) : "out of memory");
	json_decref(root);
	return rc ? -1 : 0;
}
