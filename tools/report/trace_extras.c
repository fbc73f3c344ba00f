/* The few trace fields the planner's graph model does not keep but the
 * report shows: per op the entry point ("via"), stream, copy direction,
 * byte count and raw CUPTI duration; per buffer the allocating call stack;
 * the process, iteration, memory and cupti sections.
 *
 * Called only after pl_graph_load_trace() accepted the directory, so the
 * file is known to be complete and consistent; this reads, it does not
 * validate (a missing optional member just stays empty).
 */
#include "report.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return strdup(s ? s : dflt);
}

static int64_t get_int(json_t *o, const char *key, int64_t dflt)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static void read_op(json_t *jo, struct rr_op *o)
{
	const char *copy = json_string_value(json_object_get(jo, "copy"));
	o->via = dup_str(jo, "via", "?");
	o->stream = (int)get_int(jo, "stream", 0);
	o->bytes = get_int(jo, "bytes", 0);
	o->duration_ns = get_int(jo, "duration_ns", -1);
	snprintf(o->copy, sizeof(o->copy), "%s", copy ? copy : "");
}

static void read_site(json_t *jb, struct rr_buf *b)
{
	json_t *site = json_object_get(jb, "site");
	size_t n = json_is_array(site) ? json_array_size(site) : 0;

	b->site = calloc(n + 1, sizeof(*b->site));
	for (size_t i = 0; i < n; i++) {
		const char *frame = json_string_value(json_array_get(site, i));
		if (frame)
			b->site[b->nsite++] = strdup(frame);
	}
}

int rr_trace_extras(const char *dir, struct rr_trace *t, char *err, size_t errlen)
{
	char path[4096];
	json_error_t je;
	json_t *root, *ops, *bufs, *sec;

	snprintf(path, sizeof(path), "%s/trace.json", dir);
	root = json_load_file(path, 0, &je);
	if (!root) {
		snprintf(err, errlen, "%s: line %d: %s", path, je.line, je.text);
		return -1;
	}
	ops = json_object_get(root, "ops");
	bufs = json_object_get(root, "buffers");
	if (json_array_size(ops) != (size_t)t->nops || json_array_size(bufs) != (size_t)t->nbufs) {
		snprintf(err, errlen, "%s: %zu ops and %zu buffers, the graph loader saw %d and %d",
		         path, json_array_size(ops), json_array_size(bufs), t->nops, t->nbufs);
		json_decref(root);
		return -1;
	}
	for (int i = 0; i < t->nops; i++)
		read_op(json_array_get(ops, (size_t)i), &t->ops[i]);
	for (int i = 0; i < t->nbufs; i++)
		read_site(json_array_get(bufs, (size_t)i), &t->bufs[i]);

	sec = json_object_get(root, "process");
	t->cmdline = dup_str(sec, "cmdline", "");
	t->device = dup_str(sec, "device", "");
	t->device_memory = get_int(sec, "device_memory", 0);
	sec = json_object_get(root, "iteration");
	t->period = (int)get_int(sec, "period", t->nops);
	t->iterations_seen = (int)get_int(sec, "iterations_seen", 0);
	t->duration_ns = get_int(sec, "duration_ns", -1);
	sec = json_object_get(root, "memory");
	t->peak_bytes = get_int(sec, "peak_bytes", -1);
	sec = json_object_get(root, "cupti");
	t->cupti_kernels = get_int(sec, "kernels", -1);
	t->cupti_launches = get_int(sec, "launches", -1);
	t->cupti_mismatch = get_int(sec, "mismatch", 0);
	t->cupti_available = !json_is_false(json_object_get(sec, "available"));
	t->cupti_note = dup_str(sec, "note", "");
	json_decref(root);
	return 0;
}
