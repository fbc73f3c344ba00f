/*
 * sweep_json.c — the file of remat-plan --sweep (search/sweep.c), read by
 * remat-report --sweep:
 *   {"format": "remat-sweep", "version": 1, "graph": "...", "graph_hash": "0x...",
 *    "baseline_peak": B, "min_peak": M, "peak_bound": L, "iteration_ns": T,
 *    "solve_s": S, "points": [{"budget": b, "peak": p, "recompute_ns": r,
 *    "bound_ns": l, "gap": g, "planner": "ilp", "solve_s": s}, ...], "end": true}
 * points by budget, descending; bound_ns and gap -1 when unknown.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void pl_sweep_free(struct pl_sweep *sw)
{
	free(sw->points);
	memset(sw, 0, sizeof(*sw));
}

int pl_sweep_save_json(const struct pl_graph *g, const struct pl_sweep *sw, const char *path,
                       char *err, size_t errlen)
{
	char tmp[4096], hs[20];
	FILE *f = pl_atomic_open(path, tmp, sizeof(tmp), err, errlen);
	if (!f)
		return PL_EINPUT;
	json_t *name = json_string(g->name ? g->name : "");
	char *ename = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
	fprintf(f,
	        "{\n  \"format\": \"remat-sweep\",\n  \"version\": 1,\n  \"graph\": %s,\n"
	        "  \"graph_hash\": \"%s\",\n  \"baseline_peak\": %lld,\n  \"min_peak\": %lld,\n"
	        "  \"peak_bound\": %lld,\n  \"iteration_ns\": %lld,\n  \"solve_s\": %.3f,\n"
	        "  \"points\": [",
	        ename ? ename : "\"\"", pl_hash_str(g->hash, hs), (long long)sw->baseline_peak,
	        (long long)sw->min_peak, (long long)sw->peak_bound, (long long)sw->iteration_ns,
	        sw->solve_s);
	free(ename);
	json_decref(name);
	for (int32_t k = 0; k < sw->npoints; k++) {
		const struct pl_sweep_point *pt = &sw->points[k];
		fprintf(
		    f,
		    "%s\n    {\"budget\": %lld, \"peak\": %lld, \"recompute_ns\": %lld, "
		    "\"bound_ns\": %lld, \"gap\": %.6f, \"planner\": \"%s\", \"solve_s\": %.3f}",
		    k ? "," : "", (long long)pt->budget, (long long)pt->peak,
		    (long long)pt->recompute_ns, (long long)pt->bound_ns, pt->gap, pt->planner,
		    pt->solve_s);
	}
	fprintf(f, "\n  ],\n  \"end\": true\n}\n");
	return pl_atomic_commit(f, tmp, path, err, errlen);
}

int pl_sweep_load_json(const char *path, struct pl_sweep *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	json_t *root = pl_json_load_file(path, err, errlen);
	if (!root)
		return PL_EINPUT;
	struct jctx c = {path, err, errlen};
	const char *fmt, *gname;
	int64_t ver, n = 0;
	json_t *pts;
	int present = 0, end = 0;
	int rc = pl_jstr(pl_jo(&c, root, "$"), "format", &fmt, 1, "");
	if (!rc && strcmp(fmt, "remat-sweep"))
		rc = pl_jfail(&c, "$.format", "\"%s\", expected \"remat-sweep\"", fmt);
	if (!rc && !(rc = pl_jint(pl_jo(&c, root, "$"), "version", &ver, 1, 0)) && ver != 1)
		rc = pl_jfail(&c, "$.version", "sweep version %lld, this reader reads version 1",
		              (long long)ver);
	if (!rc)
		rc = pl_jstr(pl_jo(&c, root, "$"), "graph", &gname, 0, "");
	if (!rc)
		snprintf(out->graph, sizeof(out->graph), "%s", gname);
	if (!rc)
		rc = pl_jhash(pl_jo(&c, root, "$"), "graph_hash", &out->graph_hash, &present);
	if (!rc)
		rc = pl_jint(pl_jo(&c, root, "$"), "baseline_peak", &out->baseline_peak, 1, 0);
	if (!rc)
		rc = pl_jint(pl_jo(&c, root, "$"), "min_peak", &out->min_peak, 1, 0);
	if (!rc)
		rc = pl_jint(pl_jo(&c, root, "$"), "peak_bound", &out->peak_bound, 0, -1);
	if (!rc)
		rc = pl_jint(pl_jo(&c, root, "$"), "iteration_ns", &out->iteration_ns, 1, 0);
	if (!rc)
		rc = pl_jbool(pl_jo(&c, root, "$"), "end", &end, 1, 0);
	if (!rc && !end)
		rc = pl_jfail(&c, "$.end", "not true: the file is truncated");
	if (!rc && out->baseline_peak <= 0)
		rc = pl_jfail(&c, "$.baseline_peak", "must be positive");
	if (!rc)
		rc = pl_jarr(pl_jo(&c, root, "$"), "points", &pts, 1);
	if (!rc) {
		n = (int64_t)json_array_size(pts);
		out->points = calloc(n ? (size_t)n : 1, sizeof(*out->points));
		if (!out->points)
			rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	}
	for (int64_t k = 0; !rc && k < n; k++) {
		char where[64];
		snprintf(where, sizeof(where), "$.points[%lld]", (long long)k);
		json_t *v = json_array_get(pts, (size_t)k);
		struct pl_sweep_point *pt = &out->points[k];
		const char *pn;
		json_t *gap = json_is_object(v) ? json_object_get(v, "gap") : NULL;
		if (!json_is_object(v))
			rc = pl_jfail(&c, where, "not an object");
		if (!rc)
			rc = pl_jint(pl_jo(&c, v, where), "budget", &pt->budget, 1, 0);
		if (!rc)
			rc = pl_jint(pl_jo(&c, v, where), "peak", &pt->peak, 1, 0);
		if (!rc)
			rc = pl_jint(pl_jo(&c, v, where), "recompute_ns", &pt->recompute_ns, 1, 0);
		if (!rc)
			rc = pl_jint(pl_jo(&c, v, where), "bound_ns", &pt->bound_ns, 0, -1);
		if (!rc)
			rc = pl_jstr(pl_jo(&c, v, where), "planner", &pn, 0, "");
		if (!rc) {
			snprintf(pt->planner, sizeof(pt->planner), "%s", pn);
			pt->gap = json_is_number(gap) ? json_number_value(gap) : -1;
		}
		if (!rc && (pt->budget <= 0 || (k > 0 && pt->budget > out->points[k - 1].budget)))
			rc = pl_jfail(&c, where, "budgets must be positive and descending");
		out->npoints = (int32_t)k + 1;
	}
	json_decref(root);
	if (rc)
		pl_sweep_free(out);
	return rc;
}
