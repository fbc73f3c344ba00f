/*
 * graph_json.c — the graph interchange file (docs/graph-format.md): load
 * and save.  networkx node-link files are recognised and handed to
 * checkmate_load.c; pl_graph_load tells a trace directory from a file.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int load(struct jctx *c, json_t *root, struct pl_graph *g, int *has_hash)
{
	int64_t ver;
	const char *name;
	int rc, end;
	if ((rc = pl_jint(pl_jo(c, root, "$"), "version", &ver, 1, 0)))
		return rc;
	if (ver != 1)
		return pl_jfail(c, "$.version",
		                "graph version %lld, this planner reads version 1 only",
		                (long long)ver);
	if ((rc = pl_jbool(pl_jo(c, root, "$"), "end", &end, 0, 1)))
		return rc;
	if (!end)
		return pl_jfail(c, "$.end", "must be true");
	if ((rc = pl_jhash(pl_jo(c, root, "$"), "graph_hash", &g->hash, has_hash)) ||
	    (rc = pl_jstr(pl_jo(c, root, "$"), "name", &name, 0, c->file)) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "granularity", &g->granularity,
	                     (struct jint){0, 1, 1, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "small_pool_bytes", &g->small_pool_bytes,
	                     (struct jint){0, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "const_bytes", &g->const_bytes,
	                     (struct jint){0, g->small_pool_bytes, 0, PL_MAX_AMOUNT})))
		return rc;
	g->name = strdup(name);
	if ((rc = pl_jdevice_copy(c, g, root)))
		return rc;
	json_t *bufs, *ops;
	if ((rc = pl_jarr(pl_jo(c, root, "$"), "buffers", &bufs, 1)) ||
	    (rc = pl_jarr(pl_jo(c, root, "$"), "ops", &ops, 1)))
		return rc;
	if ((rc = pl_jreserve(c, g, bufs, ops, "graph")))
		return rc;
	size_t k;
	json_t *v;
	char where[96];
	json_array_foreach(bufs, k, v)
	{
		snprintf(where, sizeof(where), "$.buffers[%zu]", k);
		struct pl_buffer *b = &g->bufs[k];
		int64_t id, a, f;
		int small, pers;
		const char *bn;
		/* (size is in range before it is rounded) */
		if ((rc = pl_jint(pl_jo(c, v, where), "id", &id, 1, 0)) ||
		    (rc = pl_jint_in(pl_jo(c, v, where), "size", &b->size,
		                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})) ||
		    (rc = pl_jbool(pl_jo(c, v, where), "small", &small, 0, 0)) ||
		    (rc = pl_jint_in(pl_jo(c, v, where), "rounded", &b->rounded,
		                     (struct jint){0,
		                                   small ? 0 : pl_round_up(b->size, g->granularity),
		                                   0, PL_MAX_AMOUNT})) ||
		    (rc = pl_jint(pl_jo(c, v, where), "alloc_at", &a, 1, 0)) ||
		    (rc = pl_jint(pl_jo(c, v, where), "free_at", &f, 1, 0)) ||
		    (rc = pl_jbool(pl_jo(c, v, where), "persistent", &pers, 0, 0)) ||
		    (rc = pl_jstr(pl_jo(c, v, where), "name", &bn, 0, "")))
			return rc;
		if ((rc = pl_jbuffer_set(pl_jo(c, v, where), g, k,
		                         &(struct jbuf){id, a, f, small, pers})))
			return rc;
		b->name = pl_graph_strdup(g, bn);
	}
	if ((rc = pl_jshared(c, g, root)))
		return rc;
	return pl_jops(c, g, ops, 0);
}

int pl_graph_load_json(const char *path, struct pl_graph **out, char *err, size_t errlen)
{
	*out = NULL;
	json_t *root = pl_json_load_file(path, err, errlen);
	if (!root)
		return PL_EINPUT;
	struct jctx c = {path, err, errlen};
	int rc;
	if (!json_is_object(root)) {
		rc = pl_jfail(&c, "$", "expected an object");
		json_decref(root);
		return rc;
	}
	const char *fmt = json_string_value(json_object_get(root, "format"));
	if (!fmt && json_object_get(root, "nodes") && json_object_get(root, "links")) {
		rc = pl_graph_load_nodelink(path, root, out, err, errlen);
		json_decref(root);
		return rc;
	}
	if (!fmt || strcmp(fmt, "remat-graph")) {
		rc = fmt && !strcmp(fmt, "remat-trace")
		         ? pl_jfail(&c, "$.format",
		                    "this is a trace.json; pass its directory instead")
		         : pl_jfail(&c, "$.format",
		                    "expected \"remat-graph\" (or a networkx node-link graph)");
		json_decref(root);
		return rc;
	}
	struct pl_graph *g = pl_graph_new();
	if (!g) {
		json_decref(root);
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	}
	int has_hash = 0;
	rc = load(&c, root, g, &has_hash);
	json_decref(root);
	if (!rc)
		rc = pl_graph_finish(g, has_hash, path, err, errlen);
	if (rc) {
		pl_graph_free(g);
		return rc;
	}
	*out = g;
	return PL_OK;
}

static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void put_list(FILE *f, const struct pl_graph *g, const struct pl_op *op, uint32_t mask,
                     uint32_t want)
{
	int first = 1;
	fputc('[', f);
	for (uint32_t k = 0; k < op->nrefs; k++) {
		const struct pl_ref *r = &g->refs[op->ref_off + k];
		if ((r->flags & mask) != want)
			continue;
		fprintf(f, first ? "%d" : ", %d", r->buf);
		first = 0;
	}
	fputc(']', f);
}

static const char *kind_name(int k)
{
	static const char *names[] = {"kernel", "memcpy", "memset", "host_func", "other"};
	return k >= 0 && k <= PL_KIND_OTHER ? names[k] : "other";
}

/* Written into const_bytes: a reader that ignores shared_chunks keeps them
 * mapped throughout, which is always valid. */
static int64_t shared_total(const struct pl_graph *g)
{
	int64_t t = 0;
	for (int32_t s = 0; s < g->nshared; s++)
		t += g->shared[s].bytes;
	return t;
}

/* Members at their default values are left out: a 100k-op graph
 * parses noticeably faster with fewer members. */
static void put_buffer(FILE *f, const struct pl_graph *g, int32_t b)
{
	const struct pl_buffer *bf = &g->bufs[b];
	fprintf(f, "    {\"id\": %d, \"size\": %lld", b, (long long)bf->size);
	if (bf->rounded != (bf->small ? 0 : pl_round_up(bf->size, g->granularity)))
		fprintf(f, ", \"rounded\": %lld", (long long)bf->rounded);
	if (bf->small)
		fprintf(f, ", \"small\": true");
	if (bf->persistent)
		fprintf(f, ", \"persistent\": true");
	if (bf->dead_across)
		fprintf(f, ", \"dead_across_boundary\": true");
	fprintf(f, ", \"alloc_at\": %d, \"free_at\": %d", bf->alloc_at, bf->free_at);
	if (bf->name && *bf->name) {
		fprintf(f, ", \"name\": ");
		put_str(f, bf->name);
	}
	fprintf(f, "}%s\n", b + 1 < g->nbufs ? "," : "");
}

static void put_shared(FILE *f, const struct pl_graph *g)
{
	if (!g->nshared)
		return;
	fprintf(f, "  \"shared_chunks\": [\n");
	for (int32_t s = 0; s < g->nshared; s++) {
		const struct pl_shared *sh = &g->shared[s];
		fprintf(f, "    {\"bytes\": %lld, \"buffers\": [", (long long)sh->bytes);
		for (uint32_t i = 0; i < sh->n; i++)
			fprintf(f, "%s%d", i ? ", " : "", g->shared_bufs[sh->off + i]);
		fprintf(f, "]}%s\n", s + 1 < g->nshared ? "," : "");
	}
	fprintf(f, "  ],\n");
}

/* Whether any reference of op has one of the flags in mask set to want. */
static int any_ref(const struct pl_graph *g, const struct pl_op *op, uint32_t mask, uint32_t want)
{
	for (uint32_t k = 0; k < op->nrefs; k++)
		if ((g->refs[op->ref_off + k].flags & mask) == want)
			return 1;
	return 0;
}

static void put_op(FILE *f, const struct pl_graph *g, int32_t i)
{
	const struct pl_op *op = &g->ops[i];
	fprintf(f, "    {\"i\": %d", i);
	if (op->kind != PL_KIND_KERNEL)
		fprintf(f, ", \"kind\": \"%s\"", kind_name(op->kind));
	if (*op->name) {
		fprintf(f, ", \"name\": ");
		put_str(f, op->name);
	}
	fprintf(f, ", \"duration_ns\": %lld, \"reads\": ", (long long)op->duration_ns);
	put_list(f, g, op, PL_REF_READ, PL_REF_READ);
	fprintf(f, ", \"writes\": ");
	put_list(f, g, op, PL_REF_WRITE, PL_REF_WRITE);
	if (any_ref(g, op, PL_REF_READ | PL_REF_WRITE, 0)) {
		fprintf(f, ", \"refs\": ");
		put_list(f, g, op, PL_REF_READ | PL_REF_WRITE, 0);
	}
	if (any_ref(g, op, PL_REF_PARTIAL, PL_REF_PARTIAL)) {
		fprintf(f, ", \"partial\": ");
		put_list(f, g, op, PL_REF_PARTIAL, PL_REF_PARTIAL);
	}
	if (!op->replayable) {
		fprintf(f, ", \"replayable\": false, \"why_not\": ");
		put_str(f, op->why_not);
	}
	if (op->collective)
		fprintf(f, ", \"collective\": true");
	fprintf(f, "}%s\n", i + 1 < g->nops ? "," : "");
}

int pl_graph_save_json(const struct pl_graph *g, const char *path, char *err, size_t errlen)
{
	char tmp[4096], hs[20];
	FILE *f = pl_atomic_open(path, tmp, sizeof(tmp), err, errlen);
	if (!f)
		return PL_EINPUT;
	fprintf(f, "{\n  \"format\": \"remat-graph\",\n  \"version\": 1,\n  \"name\": ");
	put_str(f, g->name ? g->name : "");
	fprintf(f,
	        ",\n  \"graph_hash\": \"%s\",\n  \"granularity\": %lld,\n"
	        "  \"small_pool_bytes\": %lld,\n  \"const_bytes\": %lld,\n",
	        pl_hash_str(g->hash, hs), (long long)g->granularity, (long long)g->small_pool_bytes,
	        (long long)(g->const_bytes + shared_total(g)));
	if (g->copy_bytes_per_us > 0)
		fprintf(f, "  \"device_copy\": {\"fixed_ns\": %lld, \"bytes_per_us\": %lld},\n",
		        (long long)g->copy_fixed_ns, (long long)g->copy_bytes_per_us);
	fprintf(f, "  \"buffers\": [\n");
	for (int32_t b = 0; b < g->nbufs; b++)
		put_buffer(f, g, b);
	fprintf(f, "  ],\n");
	put_shared(f, g);
	fprintf(f, "  \"ops\": [\n");
	for (int32_t i = 0; i < g->nops; i++)
		put_op(f, g, i);
	fprintf(f, "  ],\n  \"end\": true\n}\n");
	return pl_atomic_commit(f, tmp, path, err, errlen);
}

int pl_graph_load(const char *path, struct pl_graph **out, char *err, size_t errlen)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return pl_errf(err, errlen, PL_EINPUT, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return pl_graph_load_trace(path, out, err, errlen);
	return pl_graph_load_json(path, out, err, errlen);
}
