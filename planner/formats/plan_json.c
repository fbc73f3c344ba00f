/*
 * plan_json.c — the plan file (docs/plan-format.md): load and save.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Version 2 adds stashes and buffers unmapped at the boundary, version 3
 * offload to host memory; a plan is written with the lowest version that
 * has what it uses, which older readers take. */
static int plan_version(const struct pl_plan *p)
{
	if (p->nparked)
		return 3;
	int v = p->nboundary ? 2 : 1;
	for (uint32_t k = 0; k < p->step_off[p->nops]; k++) {
		if (PL_STEP_IS_OFFLOAD(p->steps[k].kind))
			return 3;
		if (p->steps[k].kind == PL_STEP_STASH || p->steps[k].kind == PL_STEP_UNSTASH)
			v = 2;
	}
	return v;
}

/* The file up to its checksum member (docs/plan-format.md). */
static void put_body(const struct pl_plan *p, FILE *f)
{
	char hs[20];
	fprintf(f,
	        "{\n  \"format\": \"remat-plan\",\n  \"version\": %d,\n  \"graph_hash\": \"%s\",\n"
	        "  \"nops\": %d,\n  \"budget\": %lld,\n  \"planner\": \"%s\",\n"
	        "  \"baseline_peak\": %lld,\n  \"peak\": %lld,\n  \"recompute_ns\": %lld,\n",
	        plan_version(p), pl_hash_str(p->graph_hash, hs), p->nops, (long long)p->budget,
	        p->planner, (long long)p->baseline_peak, (long long)p->peak,
	        (long long)p->recompute_ns);
	if (plan_version(p) >= 3)
		fprintf(
		    f,
		    "  \"offload_gbps\": %.17g,\n  \"stall_ns\": %lld,\n  \"host_bytes\": %lld,\n",
		    p->offload_gbps, (long long)p->stall_ns, (long long)p->host_bytes);
	if (p->nboundary) {
		fprintf(f, "  \"unmapped_at_boundary\": [");
		for (int32_t i = 0; i < p->nboundary; i++)
			fprintf(f, "%s%d", i ? ", " : "", p->boundary[i]);
		fprintf(f, "],\n");
	}
	if (p->nparked) {
		fprintf(f, "  \"parked_on_host\": [");
		for (int32_t i = 0; i < p->nparked; i++)
			fprintf(f, "%s%d", i ? ", " : "", p->parked[i]);
		fprintf(f, "],\n");
	}
	fprintf(f, "  \"ops\": [");
	int first = 1;
	for (int32_t i = 0; i < p->nops; i++) {
		uint32_t s0 = p->step_off[i], s1 = p->step_off[i + 1];
		uint32_t e0 = p->evict_off[i], e1 = p->evict_off[i + 1];
		if (s0 == s1 && e0 == e1)
			continue;
		fprintf(f, "%s\n    {\"op\": %d", first ? "" : ",", i);
		first = 0;
		if (s0 != s1) {
			fprintf(f, ", \"before\": [");
			for (uint32_t k = s0; k < s1; k++)
				fprintf(f, "%s[\"%s\", %d]", k == s0 ? "" : ", ",
				        pl_step_names[p->steps[k].kind], p->steps[k].arg);
			fputc(']', f);
		}
		if (e0 != e1) {
			fprintf(f, ", \"evict_after\": [");
			for (uint32_t k = e0; k < e1; k++)
				fprintf(f, "%s%d", k == e0 ? "" : ", ", p->evict[k]);
			fputc(']', f);
		}
		fputc('}', f);
	}
	fprintf(f, "%s],\n  ", first ? "" : "\n  ");
}

/* Writes body (n bytes) and the checksum member that ends it to path. */
static int put_sealed(const char *body, size_t n, const char *path, char *err, size_t errlen)
{
	char tmp[4096], tail[PL_CHECKSUM_TAIL_MAX];
	int tn = pl_checksum_tail(pl_checksum_of(body, n), tail, sizeof(tail));
	FILE *f = pl_atomic_open(path, tmp, sizeof(tmp), err, errlen);
	if (!f)
		return PL_EINPUT;
	fwrite(body, 1, n, f);
	fwrite(tail, 1, (size_t)tn, f);
	return pl_atomic_commit(f, tmp, path, err, errlen);
}

int pl_plan_save_json(const struct pl_plan *p, const char *path, char *err, size_t errlen)
{
	char *body = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&body, &n);
	if (!m)
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	put_body(p, m);
	if (fclose(m) != 0) {
		free(body);
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	}
	int rc = put_sealed(body, n, path, err, errlen);
	free(body);
	return rc;
}

/* A plan file being read: its parsed JSON and its bytes (for the
 * checksum), the graph it must fit (NULL: none), and what its header
 * says. */
struct plan_in {
	struct jctx *c;
	json_t *root;
	const char *bytes;
	size_t n;
	const struct pl_graph *g;
	int64_t ver, nops;
	int32_t nbufs; /* of g, INT32_MAX without one */
	uint64_t hash;
};

/* A list of buffer ids, member `name` of the plan, which needs plan
 * version `since`, into *list (*n entries). */
static int load_ids(struct plan_in *in, const char *name, int64_t since, int32_t **list, int32_t *n)
{
	struct jctx *c = in->c;
	json_t *arr, *v;
	int rc;
	char where[96];
	if ((rc = pl_jarr(pl_jo(c, in->root, "$"), name, &arr, 0)) || !arr || !json_array_size(arr))
		return rc;
	snprintf(where, sizeof(where), "$.%s", name);
	if (in->ver < since)
		return pl_jfail(c, where, "needs plan version %lld", (long long)since);
	size_t k;
	if (!(*list = malloc(sizeof(int32_t) * json_array_size(arr))))
		return pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
	json_array_foreach(arr, k, v)
	{
		int64_t id = json_is_integer(v) ? json_integer_value(v) : -1;
		if (id < 0 || id >= in->nbufs) {
			snprintf(where, sizeof(where), "$.%s[%zu]", name, k);
			return pl_jfail(c, where, "not a buffer id");
		}
		(*list)[(*n)++] = (int32_t)id;
	}
	return 0;
}

/* A version 3 plan that offloads says for what bandwidth (the evaluator
 * times its copies with it). */
static int load_gbps(struct jctx *c, json_t *root, int64_t ver, struct pl_plan *p)
{
	json_t *v = json_object_get(root, "offload_gbps");
	int offloads = p->nparked > 0;
	for (uint32_t k = 0; k < p->step_off[p->nops]; k++)
		offloads |= PL_STEP_IS_OFFLOAD(p->steps[k].kind);
	if (!v && !offloads)
		return 0;
	if (ver < 3)
		return pl_jfail(c, "$.offload_gbps", "needs plan version 3");
	double gbps = json_is_number(v) ? json_number_value(v) : -1;
	if (!(gbps >= 0.001 && gbps <= 10000))
		return pl_jfail(c, "$.offload_gbps",
		                "%s: the copy engines' GB/s, a number from 0.001 to 10000",
		                v ? "out of range" : "missing in a plan that offloads");
	p->offload_gbps = gbps;
	return 0;
}

/* How to go on after a plan was changed since remat-plan wrote it. */
#define REMAKE_HINT "make the plan again with remat-plan, or after an edit on purpose run"

/* The checksum member that ends the file (docs/plan-format.md) must match
 * the bytes before it. */
static int check_sum(struct jctx *c, const char *bytes, size_t n)
{
	uint64_t stated;
	long at = pl_checksum_locate(bytes, n, &stated);
	if (at < 0)
		return pl_errf(c->err, c->errlen, PL_EINPUT,
		               "%s: no checksum (remat-plan ends a plan with \"checksum\" and "
		               "\"end\": true; this one is older or was edited): " REMAKE_HINT
		               " remat-plan --rehash %s",
		               c->file, c->file);
	uint64_t actual = pl_checksum_of(bytes, (size_t)at);
	if (actual != stated)
		return pl_errf(c->err, c->errlen, PL_EINPUT,
		               "%s: checksum does not match the content (0x%016llx in the file, "
		               "0x%016llx computed): the plan changed after remat-plan wrote it; "
		               "" REMAKE_HINT " remat-plan --rehash %s",
		               c->file, (unsigned long long)stated, (unsigned long long)actual,
		               c->file);
	return 0;
}

/* Format, version, completeness, checksum, and the graph it was made
 * for (the graph's, when one is given). */
static int load_header(struct plan_in *in)
{
	struct jctx *c = in->c;
	json_t *root = in->root;
	const char *fmt;
	int rc, end, present;
	if ((rc = pl_jstr(pl_jo(c, root, "$"), "format", &fmt, 1, NULL)))
		return rc;
	if (strcmp(fmt, "remat-plan"))
		return pl_jfail(c, "$.format", "\"%s\" is not a plan (expected \"remat-plan\")",
		                fmt);
	if ((rc = pl_jint(pl_jo(c, root, "$"), "version", &in->ver, 1, 0)))
		return rc;
	if (in->ver < 1 || in->ver > 3)
		return pl_jfail(c, "$.version",
		                "plan version %lld, this reader knows versions 1 to 3",
		                (long long)in->ver);
	if ((rc = pl_jbool(pl_jo(c, root, "$"), "end", &end, 0, 0)))
		return rc;
	if (!end)
		return pl_jfail(c, "$", "no \"end\": true member (truncated plan?)");
	if ((rc = check_sum(c, in->bytes, in->n)))
		return rc;
	if ((rc = pl_jhash(pl_jo(c, root, "$"), "graph_hash", &in->hash, &present)))
		return rc;
	if (!present)
		return pl_jfail(c, "$", "missing member \"graph_hash\"");
	if ((rc = pl_jint(pl_jo(c, root, "$"), "nops", &in->nops, 1, 0)))
		return rc;
	if (in->nops <= 0 || in->nops > INT32_MAX / 2)
		return pl_jfail(c, "$.nops", "bad op count %lld", (long long)in->nops);
	char hs[20], hg[20];
	if (in->g && in->hash != in->g->hash)
		return pl_jfail(c, "$.graph_hash", "plan made for graph %s, this graph is %s",
		                pl_hash_str(in->hash, hs), pl_hash_str(in->g->hash, hg));
	if (in->g && in->nops != in->g->nops)
		return pl_jfail(c, "$.nops", "plan has %lld ops, the graph %d", (long long)in->nops,
		                in->g->nops);
	return 0;
}

/* Step st of op's "before" list, at `where`. */
static int load_step(struct plan_in *in, struct pl_plan_builder *b, int64_t op, json_t *st,
                     const char *where)
{
	const char *kn = json_string_value(json_array_get(st, 0));
	json_t *argv = json_array_get(st, 1);
	int kind = -1;
	for (int t = 0; kn && t < PL_STEP_KINDS; t++)
		if (!strcmp(kn, pl_step_names[t]))
			kind = t;
	if (json_array_size(st) != 2 || kind < 0 || !json_is_integer(argv))
		return pl_jfail(in->c, where,
		                "expected [\"map\"|\"save\"|\"replay\"|\"restore\"|"
		                "\"release\"|\"stash\"|\"unstash\"|\"offload\"|"
		                "\"prefetch\"|\"await\", integer]");
	if (in->ver < 2 && (kind == PL_STEP_STASH || kind == PL_STEP_UNSTASH))
		return pl_jfail(in->c, where, "\"%s\" needs plan version 2", kn);
	if (in->ver < 3 && PL_STEP_IS_OFFLOAD(kind))
		return pl_jfail(in->c, where, "\"%s\" needs plan version 3", kn);
	int64_t arg = json_integer_value(argv);
	int64_t lim = kind == PL_STEP_REPLAY ? op : in->nbufs;
	if (arg < 0 || arg >= lim)
		return pl_jfail(in->c, where, "%s %lld: %s", kn, (long long)arg,
		                kind == PL_STEP_REPLAY ? "not an earlier op" : "no such buffer");
	pl_builder_step(b, (int32_t)op, kind, (int32_t)arg);
	return 0;
}

/* Entry k of $.ops: the op (after *last), its steps and evictions. */
static int load_op(struct plan_in *in, struct pl_plan_builder *b, size_t k, json_t *v,
                   int64_t *last)
{
	struct jctx *c = in->c;
	char where[128];
	snprintf(where, sizeof(where), "$.ops[%zu]", k);
	int64_t op;
	json_t *before, *evict, *st;
	int rc;
	if ((rc = pl_jint(pl_jo(c, v, where), "op", &op, 1, 0)) ||
	    (rc = pl_jarr(pl_jo(c, v, where), "before", &before, 0)) ||
	    (rc = pl_jarr(pl_jo(c, v, where), "evict_after", &evict, 0)))
		return rc;
	if (op <= *last || op >= in->nops)
		return pl_jfail(c, where, "op %lld out of order or out of range (0..%lld)",
		                (long long)op, (long long)in->nops - 1);
	*last = op;
	size_t j;
	json_array_foreach(before, j, st)
	{
		snprintf(where, sizeof(where), "$.ops[%zu].before[%zu]", k, j);
		if ((rc = load_step(in, b, op, st, where)))
			return rc;
	}
	json_array_foreach(evict, j, st)
	{
		int64_t arg = json_is_integer(st) ? json_integer_value(st) : -1;
		if (arg < 0 || arg >= in->nbufs) {
			snprintf(where, sizeof(where), "$.ops[%zu].evict_after[%zu]", k, j);
			return pl_jfail(c, where, "not a buffer id");
		}
		pl_builder_evict(b, (int32_t)op, (int32_t)arg);
	}
	return 0;
}

/* What follows the ops: the buffer lists and the informational figures
 * (-1 when unknown). */
static int load_rest(struct plan_in *in, struct pl_plan *p)
{
	struct jctx *c = in->c;
	json_t *root = in->root;
	int rc;
	if ((rc = load_ids(in, "unmapped_at_boundary", 2, &p->boundary, &p->nboundary)) ||
	    (rc = load_ids(in, "parked_on_host", 3, &p->parked, &p->nparked)))
		return rc;
	if ((rc = pl_jint_in(pl_jo(c, root, "$"), "budget", &p->budget,
	                     (struct jint){0, -1, -1, INT64_MAX})) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "baseline_peak", &p->baseline_peak,
	                     (struct jint){0, -1, -1, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "peak", &p->peak,
	                     (struct jint){0, -1, -1, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "recompute_ns", &p->recompute_ns,
	                     (struct jint){0, -1, -1, INT64_MAX})) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "stall_ns", &p->stall_ns,
	                     (struct jint){0, -1, -1, INT64_MAX})) ||
	    (rc = pl_jint_in(pl_jo(c, root, "$"), "host_bytes", &p->host_bytes,
	                     (struct jint){0, -1, -1, INT64_MAX})))
		return rc;
	return load_gbps(c, root, in->ver, p);
}

static int load(struct plan_in *in, struct pl_plan **out)
{
	struct jctx *c = in->c;
	const char *planner;
	json_t *ops, *v;
	int rc;
	if ((rc = load_header(in)) || (rc = pl_jarr(pl_jo(c, in->root, "$"), "ops", &ops, 1)) ||
	    (rc = pl_jstr(pl_jo(c, in->root, "$"), "planner", &planner, 0, "")))
		return rc;
	struct pl_plan_builder *b = pl_builder_new((int32_t)in->nops);
	if (!b)
		return pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
	int64_t last = -1;
	size_t k;
	json_array_foreach(ops, k, v)
	{
		if ((rc = load_op(in, b, k, v, &last)))
			break;
	}
	struct pl_plan *p = pl_builder_finish(b);
	if (rc) {
		pl_plan_free(p);
		return rc;
	}
	if (!p)
		return pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
	p->graph_hash = in->hash;
	snprintf(p->planner, sizeof(p->planner), "%s", planner);
	if ((rc = load_rest(in, p))) {
		pl_plan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static int parse(struct jctx *c, const char *bytes, size_t n, const struct pl_graph *g,
                 struct pl_plan **out)
{
	*out = NULL;
	json_t *root = pl_json_load_bytes(c->file, bytes, n, c->err, c->errlen);
	if (!root)
		return PL_EINPUT;
	struct plan_in in = {.c = c, .root = root, .bytes = bytes, .n = n, .g = g};
	in.nbufs = g ? g->nbufs : INT32_MAX;
	int rc = json_is_object(root) ? load(&in, out) : pl_jfail(c, "$", "expected an object");
	json_decref(root);
	return rc;
}

int pl_plan_load_json(const char *path, const struct pl_graph *g, struct pl_plan **out, char *err,
                      size_t errlen)
{
	*out = NULL;
	size_t n;
	char *bytes = pl_file_read(path, &n, err, errlen);
	if (!bytes)
		return PL_EINPUT;
	struct jctx c = {path, err, errlen};
	int rc = parse(&c, bytes, n, g, out);
	free(bytes);
	return rc;
}

int pl_plan_rehash(const char *path, char *err, size_t errlen)
{
	size_t n;
	char *bytes = pl_file_read(path, &n, err, errlen);
	if (!bytes)
		return PL_EINPUT;
	struct jctx c = {path, err, errlen};
	uint64_t stated;
	long at = pl_checksum_locate(bytes, n, &stated);
	if (at < 0)
		at = pl_checksum_unsealed_end(bytes, n);
	int rc;
	if (at < 0) {
		rc = pl_errf(err, errlen, PL_EINPUT,
		             "%s: does not end with \"end\": true after a member, as a plan does",
		             path);
		goto out;
	}
	/* The plan as it will be written must read back as a plan. */
	char tail[PL_CHECKSUM_TAIL_MAX];
	int tn = pl_checksum_tail(pl_checksum_of(bytes, (size_t)at), tail, sizeof(tail));
	char *sealed = malloc((size_t)at + (size_t)tn);
	if (!sealed) {
		rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
		goto out;
	}
	memcpy(sealed, bytes, (size_t)at);
	memcpy(sealed + at, tail, (size_t)tn);
	struct pl_plan *p;
	rc = parse(&c, sealed, (size_t)at + (size_t)tn, NULL, &p);
	free(sealed);
	pl_plan_free(p);
	if (!rc)
		rc = put_sealed(bytes, (size_t)at, path, err, errlen);
out:
	free(bytes);
	return rc;
}
