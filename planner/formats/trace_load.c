/*
 * trace_load.c — reads a trace directory (docs/trace-format.md) into the
 * op-graph model.  Only what planning needs is kept; params.bin is
 * checked (size and FNV-1a 64) so a truncated trace is refused here too.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int check_params(struct jctx *c, json_t *root, const char *dir)
{
	json_t *files = json_object_get(root, "files");
	json_t *pb = files ? json_object_get(files, "params.bin") : NULL;
	if (!pb)
		return pl_jfail(c, "$.files", "missing member \"params.bin\"");
	int64_t size;
	uint64_t want;
	int present;
	int rc = pl_jint_in(pl_jo(c, pb, "$.files[\"params.bin\"]"), "size", &size,
	                    (struct jint){1, 0, 0, PL_MAX_AMOUNT});
	if (!rc)
		rc = pl_jhash(pl_jo(c, pb, "$.files[\"params.bin\"]"), "fnv1a64", &want, &present);
	if (rc)
		return rc;
	if (!present)
		return pl_jfail(c, "$.files[\"params.bin\"]", "missing member \"fnv1a64\"");
	char path[4096];
	snprintf(path, sizeof(path), "%s/params.bin", dir);
	FILE *f = fopen(path, "rb");
	if (!f)
		return pl_errf(c->err, c->errlen, PL_EINPUT, "%s: %s", path, strerror(errno));
	uint64_t h = PL_FNV_OFFSET;
	int64_t n = 0;
	unsigned char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
		h = pl_fnv(h, buf, got);
		n += (int64_t)got;
	}
	fclose(f);
	if (n != size)
		return pl_errf(c->err, c->errlen, PL_EINPUT,
		               "%s: %lld bytes, trace.json says %lld (truncated or replaced?)",
		               path, (long long)n, (long long)size);
	if (h != want)
		return pl_errf(c->err, c->errlen, PL_EINPUT,
		               "%s: FNV-1a 64 is 0x%016llx, trace.json says 0x%016llx", path,
		               (unsigned long long)h, (unsigned long long)want);
	return 0;
}

/* A call stack as one string, a frame per line (the arena keeps strings,
 * not arrays of them). */
static const char *site_lines(struct pl_graph *g, json_t *site)
{
	size_t n = 0, k;
	json_t *f;
	json_array_foreach(site, k, f) n +=
	    strlen(json_string_value(f) ? json_string_value(f) : "") + 1;
	char *buf = malloc(n + 1), *w = buf;
	if (!buf)
		return "";
	*w = '\0';
	json_array_foreach(site, k, f)
	{
		if (json_string_value(f))
			w += sprintf(w, "%s%s", w == buf ? "" : "\n", json_string_value(f));
	}
	const char *s = pl_graph_strdup(g, buf);
	free(buf);
	return s ? s : "";
}

/* The sections tools show beside the graph; what is missing stays unknown. */
static int trace_info(struct jctx *c, json_t *root, struct pl_graph *g)
{
	struct pl_trace_info *t = &g->trace;
	json_t *proc = json_object_get(root, "process"), *it = json_object_get(root, "iteration");
	json_t *mem = json_object_get(root, "memory"), *cu = json_object_get(root, "cupti");
	const char *device = "", *note = "";
	int64_t period, seen;
	int avail = 1, rc;
	if ((rc = pl_jstr(pl_jo(c, proc, "$.process"), "device", &device, 0, "")) ||
	    (rc = pl_jint_in(pl_jo(c, proc, "$.process"), "device_memory", &t->device_memory,
	                     (struct jint){0, 0, 0, PL_MAX_AMOUNT})) ||
	    (it && (rc = pl_jint_in(pl_jo(c, it, "$.iteration"), "period", &period,
	                            (struct jint){0, g->nops, 0, INT32_MAX}))) ||
	    (it && (rc = pl_jint_in(pl_jo(c, it, "$.iteration"), "iterations_seen", &seen,
	                            (struct jint){0, 0, 0, INT32_MAX}))) ||
	    (it && (rc = pl_jint_in(pl_jo(c, it, "$.iteration"), "duration_ns", &t->duration_ns,
	                            (struct jint){0, -1, -1, PL_MAX_AMOUNT}))) ||
	    (rc = pl_jint_in(pl_jo(c, mem, "$.memory"), "peak_bytes", &t->peak_bytes,
	                     (struct jint){0, -1, -1, PL_MAX_AMOUNT})) ||
	    (cu && (rc = pl_jbool(pl_jo(c, cu, "$.cupti"), "available", &avail, 0, 1))) ||
	    (cu && (rc = pl_jint_in(pl_jo(c, cu, "$.cupti"), "kernels", &t->cupti_kernels,
	                            (struct jint){0, -1, -1, PL_MAX_AMOUNT}))) ||
	    (cu && (rc = pl_jint_in(pl_jo(c, cu, "$.cupti"), "launches", &t->cupti_launches,
	                            (struct jint){0, -1, -1, PL_MAX_AMOUNT}))) ||
	    /* Negative where CUPTI delivered fewer kernel records than launches
	     * were intercepted (records lost, or not matched to their op). */
	    (cu && (rc = pl_jint_in(pl_jo(c, cu, "$.cupti"), "mismatch", &t->cupti_mismatch,
	                            (struct jint){0, 0, -PL_MAX_AMOUNT, PL_MAX_AMOUNT}))) ||
	    (cu && (rc = pl_jstr(pl_jo(c, cu, "$.cupti"), "note", &note, 0, ""))))
		return rc;
	t->is_trace = 1;
	t->device = pl_graph_strdup(g, device);
	t->cupti_note = pl_graph_strdup(g, note);
	t->cupti_available = avail;
	t->period = it ? (int32_t)period : g->nops;
	t->iterations_seen = it ? (int32_t)seen : 0;
	if (!it)
		t->duration_ns = -1;
	if (!cu)
		t->cupti_kernels = t->cupti_launches = -1;
	return 0;
}

/* Format, version, completeness, the graph hash, params.bin. */
static int load_header(struct jctx *c, json_t *root, const char *dir, struct pl_graph *g)
{
	const char *fmt;
	int64_t ver;
	int rc, present, end;
	if ((rc = pl_jstr(pl_jo(c, root, "$"), "format", &fmt, 1, NULL)))
		return rc;
	if (strcmp(fmt, "remat-trace"))
		return pl_jfail(c, "$.format", "\"%s\" is not a trace (expected \"remat-trace\")",
		                fmt);
	if ((rc = pl_jint(pl_jo(c, root, "$"), "version", &ver, 1, 0)))
		return rc;
	if (ver != 1)
		return pl_jfail(c, "$.version",
		                "trace version %lld, this planner reads version 1 only",
		                (long long)ver);
	if ((rc = pl_jbool(pl_jo(c, root, "$"), "end", &end, 0, 0)))
		return rc;
	if (!end)
		return pl_jfail(c, "$", "no \"end\": true member (truncated trace?)");
	if ((rc = pl_jhash(pl_jo(c, root, "$"), "graph_hash", &g->hash, &present)))
		return rc;
	if (!present)
		return pl_jfail(c, "$", "missing member \"graph_hash\"");
	return check_params(c, root, dir);
}

/* $.memory's figures, and the persistent buffers' bytes as listed. */
struct trace_mem {
	int64_t persistent, small_pool, edge, listed;
};

/* The process (granularity, command line), the memory figures, the
 * device's copy model. */
static int load_process(struct jctx *c, json_t *root, struct pl_graph *g, struct trace_mem *m)
{
	json_t *proc = json_object_get(root, "process"), *mem = json_object_get(root, "memory");
	int rc;
	/* Granularity 0: no managed allocation happened, so nothing was
	 * rounded to chunks (docs/trace-format.md); as 1 for the planner. */
	if ((rc = pl_jint_in(pl_jo(c, proc, "$.process"), "granularity", &g->granularity,
	                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, mem, "$.memory"), "persistent_bytes", &m->persistent,
	                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, mem, "$.memory"), "small_pool_bytes", &m->small_pool,
	                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, mem, "$.memory"), "edge_bytes", &m->edge,
	                     (struct jint){0, 0, 0, PL_MAX_AMOUNT})))
		return rc;
	if (g->granularity == 0)
		g->granularity = 1;
	g->small_pool_bytes = m->small_pool;
	if ((rc = pl_jdevice_copy(c, g, root)))
		return rc;
	const char *cmd;
	if ((rc = pl_jstr(pl_jo(c, proc, "$.process"), "cmdline", &cmd, 0, "trace")))
		return rc;
	g->name = strdup(cmd);
	return 0;
}

/* Buffer k ($.buffers[k], v). */
static int load_buffer(struct jctx *c, struct pl_graph *g, size_t k, json_t *v, struct trace_mem *m)
{
	char where[96];
	snprintf(where, sizeof(where), "$.buffers[%zu]", k);
	struct pl_buffer *b = &g->bufs[k];
	int64_t id, a, f;
	int small, pers, rc;
	if ((rc = pl_jint(pl_jo(c, v, where), "id", &id, 1, 0)) ||
	    (rc = pl_jint_in(pl_jo(c, v, where), "size", &b->size,
	                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, v, where), "rounded", &b->rounded,
	                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jbool(pl_jo(c, v, where), "small", &small, 1, 0)) ||
	    (rc = pl_jint(pl_jo(c, v, where), "alloc_at", &a, 1, 0)) ||
	    (rc = pl_jint(pl_jo(c, v, where), "free_at", &f, 1, 0)) ||
	    (rc = pl_jbool(pl_jo(c, v, where), "persistent", &pers, 1, 0)))
		return rc;
	if ((rc = pl_jbuffer_set(pl_jo(c, v, where), g, k, &(struct jbuf){id, a, f, small, pers})))
		return rc;
	json_t *site = json_object_get(v, "site");
	const char *s0 = json_string_value(json_array_get(site, 0));
	b->name = pl_graph_strdup(g, s0 ? s0 : "");
	b->site = site_lines(g, site);
	/* (each term is at most 2^53: the sum is checked as it grows) */
	if (pers && (m->listed += b->rounded) > PL_MAX_AMOUNT)
		return pl_jfail(c, "$.buffers",
		                "the persistent buffers' \"rounded\" add up to more than "
		                "2^53 bytes");
	return 0;
}

static int load(struct jctx *c, json_t *root, const char *dir, struct pl_graph *g)
{
	struct trace_mem m = {0};
	json_t *bufs, *ops, *v;
	int rc;
	if ((rc = load_header(c, root, dir, g)) || (rc = load_process(c, root, g, &m)) ||
	    (rc = pl_jarr(pl_jo(c, root, "$"), "buffers", &bufs, 1)) ||
	    (rc = pl_jarr(pl_jo(c, root, "$"), "ops", &ops, 1)) ||
	    (rc = pl_jreserve(c, g, bufs, ops, "trace")))
		return rc;
	size_t k;
	json_array_foreach(bufs, k, v)
	{
		if ((rc = load_buffer(c, g, k, v, &m)))
			return rc;
	}
	/* Whatever persistent_bytes holds beyond the listed persistent buffers
	 * is constant: the small-allocation chunks (which some traces count in
	 * it), and the chunks of split allocations no region holds whole. */
	g->const_bytes = m.persistent - m.listed - m.edge;
	if (g->const_bytes < m.small_pool)
		g->const_bytes = m.small_pool;
	g->const_bytes += m.edge;
	/* the chunks regions share, out of edge_bytes */
	if ((rc = pl_jshared(c, g, root)) || (rc = pl_jops(c, g, ops, 1)))
		return rc;
	return trace_info(c, root, g);
}

int pl_graph_load_trace(const char *dir, struct pl_graph **out, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	*out = NULL;
	json_t *root = pl_json_load_file(path, err, errlen);
	if (!root)
		return PL_EINPUT;
	struct pl_graph *g = pl_graph_new();
	if (!g) {
		json_decref(root);
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	}
	struct jctx c = {path, err, errlen};
	int rc = load(&c, root, dir, g);
	json_decref(root);
	if (!rc)
		rc = pl_graph_finish(g, 1, path, err, errlen);
	if (rc) {
		pl_graph_free(g);
		return rc;
	}
	*out = g;
	return PL_OK;
}
