/*
 * plan_read.c — reading plan files (docs/plan-format.md) and the few trace
 * figures run mode needs, with a jansson found at run time.
 *
 * libremat.so links only libc, libdl, libpthread and libunwind: a process
 * that never plans must not need jansson.  So jansson's header gives the
 * types and the type-test macros (a field read), and every function is
 * resolved with dlsym from libjansson.so.4 the first time a plan is read.
 * Nothing here may call a jansson inline helper that references a symbol
 * (json_decref, json_array_foreach): the link would then need -ljansson.
 */
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct {
	json_t *(*loadb)(const char *, size_t, size_t, json_error_t *);
	json_t *(*object_get)(const json_t *, const char *);
	size_t (*array_size)(const json_t *);
	json_t *(*array_get)(const json_t *, size_t);
	const char *(*string_value)(const json_t *);
	json_int_t (*integer_value)(const json_t *);
	double (*number_value)(const json_t *);
	void (*delete_)(json_t *);
	int state; /* 0 not tried, 1 usable, -1 missing */
	pthread_mutex_t lock;
	const char *soname;
} jansson = {.lock = PTHREAD_MUTEX_INITIALIZER, .soname = "libjansson.so.4"};

void acq_json_soname(const char *soname)
{
	jansson.soname = soname;
}

int acq_json_ready(char *err, size_t errlen)
{
	pthread_mutex_lock(&jansson.lock);
	if (jansson.state == 0) {
		/* Kept open for the life of the process: plans may be read again. */
		void *h = dlopen(jansson.soname, RTLD_NOW | RTLD_LOCAL);
		int ok = h != NULL;
#define SYM(field, name)                                                                           \
	do {                                                                                       \
		if (ok && !(*(void **)&jansson.field = dlsym(h, name)))                            \
			ok = 0;                                                                    \
	} while (0)
		SYM(loadb, "json_loadb");
		SYM(object_get, "json_object_get");
		SYM(array_size, "json_array_size");
		SYM(array_get, "json_array_get");
		SYM(string_value, "json_string_value");
		SYM(integer_value, "json_integer_value");
		SYM(number_value, "json_number_value");
		SYM(delete_, "json_delete");
#undef SYM
		jansson.state = ok ? 1 : -1;
	}
	int st = jansson.state;
	pthread_mutex_unlock(&jansson.lock);
	if (st < 0)
		snprintf(err, errlen,
		         "run mode needs %s (Debian: libjansson4) to read plans; running "
		         "unmodified",
		         jansson.soname);
	return st > 0 ? 0 : -1;
}

/* The document root came from json_load_file, so nothing else holds a
 * reference: deleting it is what json_decref would do. */
static void drop(json_t *root)
{
	if (root)
		jansson.delete_(root);
}

static json_t *load(const char *path, const char *bytes, size_t n, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = jansson.loadb(bytes, n, 0, &je);
	if (!root) {
		snprintf(err, errlen, "%s: not valid JSON (line %d, column %d: %s)", path, je.line,
		         je.column, je.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "%s: expected a JSON object", path);
		drop(root);
		return NULL;
	}
	return root;
}

/* The largest size or duration a trace or plan may state: the planner's
 * limit (PL_MAX_AMOUNT, planner/model/model.h), exact in a double. */
#define MAX_AMOUNT (INT64_C(1) << 53)

struct ctx {
	const char *path;
	char *err;
	size_t errlen;
	/* A plan: what it must have been made for, and its version once read. */
	uint64_t hash;
	int32_t nops, nbufs;
	int64_t budget, version;
};

__attribute__((format(printf, 3, 4))) static int fail(struct ctx *c, const char *where,
                                                      const char *fmt, ...)
{
	int n = snprintf(c->err, c->errlen, "%s: %s: ", c->path, where);
	if (n < 0 || (size_t)n >= c->errlen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Integer member; absent -> *present = 0 (an error when required). */
static int get_int(struct ctx *c, json_t *obj, const char *where, const char *key, int required,
                   int64_t *out)
{
	json_t *v = jansson.object_get(obj, key);
	if (!v) {
		if (required)
			return fail(c, where, "missing member \"%s\"", key);
		return 1;
	}
	if (!json_is_integer(v))
		return fail(c, where, "member \"%s\" must be an integer", key);
	*out = (int64_t)jansson.integer_value(v);
	return 0;
}

static int get_hash(struct ctx *c, json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = jansson.object_get(obj, key);
	const char *s = json_is_string(v) ? jansson.string_value(v) : NULL;
	if (!s)
		return fail(c, "$", "missing member \"%s\" (a hex string like 0x1234abcd)", key);
	char *end;
	errno = 0;
	if (strncmp(s, "0x", 2) != 0 || !s[2])
		return fail(c, "$", "member \"%s\" must be a hex string like 0x1234abcd", key);
	*out = strtoull(s + 2, &end, 16);
	if (*end || errno)
		return fail(c, "$", "member \"%s\": bad hex string \"%s\"", key, s);
	return 0;
}

/* One step of op `op`'s "before" list. */
static int check_step(struct ctx *c, json_t *st, int64_t op, const char *where)
{
	json_t *kn = json_is_array(st) ? jansson.array_get(st, 0) : NULL;
	json_t *av = json_is_array(st) ? jansson.array_get(st, 1) : NULL;
	const char *name = json_is_string(kn) ? jansson.string_value(kn) : NULL;
	int kind = -1;
	for (int t = 0; name && t < PL_STEP_KINDS; t++)
		if (!strcmp(name, pl_step_names[t]))
			kind = t;
	/* Stashes came with version 2, offload with version 3: an older file
	 * naming one was not written by remat-plan. */
	if (c->version < 3 && PL_STEP_IS_OFFLOAD(kind))
		return fail(c, where,
		            "step \"%s\" in a version %lld plan (offload needs version 3)", name,
		            (long long)c->version);
	if (c->version < 2 && (kind == PL_STEP_STASH || kind == PL_STEP_UNSTASH))
		return fail(c, where, "step \"%s\" in a version %lld plan (it needs version 2)",
		            name, (long long)c->version);
	if (!json_is_array(st) || jansson.array_size(st) != 2 || kind < 0 || !json_is_integer(av))
		return fail(c, where,
		            "expected [\"map\"|\"save\"|\"replay\"|\"restore\"|"
		            "\"release\"|\"stash\"|\"unstash\"|\"offload\"|"
		            "\"prefetch\"|\"await\", integer]");
	int64_t arg = (int64_t)jansson.integer_value(av);
	if (kind == PL_STEP_REPLAY && (arg < 0 || arg >= op))
		return fail(c, where, "replay %lld: not an earlier op than %lld", (long long)arg,
		            (long long)op);
	if (kind != PL_STEP_REPLAY && (arg < 0 || arg >= (c->nbufs >= 0 ? c->nbufs : INT32_MAX)))
		return fail(c, where, "%s %lld: no such buffer (the trace has %d)", name,
		            (long long)arg, c->nbufs);
	return 0;
}

/* Entry k of "ops": its position (after *last) and its lists, whose
 * lengths are added to counts (steps, evictions). */
static int check_op(struct ctx *c, json_t *e, size_t k, int64_t *last, uint64_t counts[2])
{
	char where[96];
	snprintf(where, sizeof(where), "$.ops[%zu]", k);
	if (!json_is_object(e))
		return fail(c, where, "expected an object");
	int64_t op;
	if (get_int(c, e, where, "op", 1, &op) < 0)
		return -1;
	if (op < 0 || op >= c->nops)
		return fail(c, where, "op %lld out of range (0..%d)", (long long)op, c->nops - 1);
	if (op <= *last)
		return fail(c, where, "op %lld after op %lld: positions must increase",
		            (long long)op, (long long)*last);
	*last = op;
	json_t *before = jansson.object_get(e, "before"),
	       *evict = jansson.object_get(e, "evict_after");
	if (before && !json_is_array(before))
		return fail(c, where, "member \"before\" must be an array");
	if (evict && !json_is_array(evict))
		return fail(c, where, "member \"evict_after\" must be an array");
	size_t nb = before ? jansson.array_size(before) : 0;
	for (size_t j = 0; j < nb; j++) {
		snprintf(where, sizeof(where), "$.ops[%zu].before[%zu]", k, j);
		if (check_step(c, jansson.array_get(before, j), op, where) < 0)
			return -1;
	}
	size_t nv = evict ? jansson.array_size(evict) : 0;
	for (size_t j = 0; j < nv; j++) {
		json_t *b = jansson.array_get(evict, j);
		int64_t arg = json_is_integer(b) ? (int64_t)jansson.integer_value(b) : -1;
		if (arg < 0 || arg >= (c->nbufs >= 0 ? c->nbufs : INT32_MAX)) {
			snprintf(where, sizeof(where), "$.ops[%zu].evict_after[%zu]", k, j);
			return fail(c, where, "not a buffer id (the trace has %d buffers)",
			            c->nbufs);
		}
	}
	counts[0] += nb;
	counts[1] += nv;
	return 0;
}

/* First pass over "ops": checks everything and counts steps and evictions,
 * so the second pass fills arrays of the right size. */
static int check_ops(struct ctx *c, json_t *ops, uint32_t *nsteps, uint32_t *nevict)
{
	int64_t last = -1;
	uint64_t counts[2] = {0, 0}; /* steps, evictions */
	size_t n = jansson.array_size(ops);
	for (size_t k = 0; k < n; k++) {
		if (check_op(c, jansson.array_get(ops, k), k, &last, counts) < 0)
			return -1;
		if (counts[0] > UINT32_MAX / 2 || counts[1] > UINT32_MAX / 2)
			return fail(c, "$.ops", "too many steps");
	}
	*nsteps = (uint32_t)counts[0];
	*nevict = (uint32_t)counts[1];
	return 0;
}

/* Member `name`, a list of buffer ids that needs plan version `since`:
 * *out the array (NULL when absent); -1 with the message when wrong. */
static int id_list(struct ctx *c, json_t *root, const char *name, int64_t since, json_t **out)
{
	int64_t ver = c->version;
	int32_t nbufs = c->nbufs;
	char where[64];
	snprintf(where, sizeof(where), "$.%s", name);
	json_t *arr = *out = jansson.object_get(root, name);
	if (arr && ver < since)
		return fail(c, where, "in a version %lld plan (it needs version %lld)",
		            (long long)ver, (long long)since);
	if (arr && !json_is_array(arr))
		return fail(c, where, "must be an array of buffer ids");
	size_t n = arr ? jansson.array_size(arr) : 0;
	for (size_t j = 0; j < n; j++) {
		json_t *e = jansson.array_get(arr, j);
		int64_t id = json_is_integer(e) ? (int64_t)jansson.integer_value(e) : -1;
		if (id < 0 || id >= (nbufs >= 0 ? nbufs : INT32_MAX))
			return fail(c, where, "entry %zu: not a buffer id", j);
	}
	return 0;
}

/* Second pass: the CSR arrays.  Positions are known to increase, so each
 * list is appended in order and the offsets come out monotonic. */
static void fill_ops(json_t *ops, struct pl_plan *p)
{
	uint32_t s = 0, v = 0;
	int32_t pos = 0;
	size_t n = jansson.array_size(ops);
	for (size_t k = 0; k < n; k++) {
		json_t *e = jansson.array_get(ops, k);
		int32_t op = (int32_t)jansson.integer_value(jansson.object_get(e, "op"));
		for (; pos <= op; pos++) {
			p->step_off[pos] = s;
			p->evict_off[pos] = v;
		}
		json_t *before = jansson.object_get(e, "before"),
		       *evict = jansson.object_get(e, "evict_after");
		size_t nb = before ? jansson.array_size(before) : 0,
		       nv = evict ? jansson.array_size(evict) : 0;
		for (size_t j = 0; j < nb; j++) {
			json_t *st = jansson.array_get(before, j);
			const char *name = jansson.string_value(jansson.array_get(st, 0));
			int kind = 0;
			while (strcmp(name, pl_step_names[kind]))
				kind++;
			p->steps[s].kind = kind;
			p->steps[s].arg = (int32_t)jansson.integer_value(jansson.array_get(st, 1));
			s++;
		}
		for (size_t j = 0; j < nv; j++)
			p->evict[v++] = (int32_t)jansson.integer_value(jansson.array_get(evict, j));
	}
	for (; pos <= p->nops; pos++) {
		p->step_off[pos] = s;
		p->evict_off[pos] = v;
	}
}

/* The checksum member that ends the file must match the bytes before it
 * (docs/plan-format.md); -2 when it does not, or is missing. */
static int check_sum(struct ctx *c, const char *bytes, size_t n)
{
	uint64_t stated;
	long at = pl_checksum_locate(bytes, n, &stated);
	if (at < 0) {
		snprintf(c->err, c->errlen,
		         "%s: no checksum (remat-plan ends a plan with \"checksum\" and \"end\": "
		         "true; this one is older or was edited)",
		         c->path);
		return -2;
	}
	uint64_t actual = pl_checksum_of(bytes, (size_t)at);
	if (actual != stated) {
		snprintf(
		    c->err, c->errlen,
		    "%s: checksum does not match the content (0x%016llx in the file, 0x%016llx "
		    "computed): the plan changed after remat-plan wrote it",
		    c->path, (unsigned long long)stated, (unsigned long long)actual);
		return -2;
	}
	return 0;
}

/* Format, version, end, checksum, and what the plan was made for. */
static int check_header(struct ctx *c, json_t *root, const char *bytes, size_t len)
{
	json_t *v = jansson.object_get(root, "format");
	const char *fmt = json_is_string(v) ? jansson.string_value(v) : NULL;
	if (!fmt || strcmp(fmt, "remat-plan"))
		return fail(c, "$.format", "not a plan (expected \"remat-plan\")");
	int64_t ver, n, b;
	if (get_int(c, root, "$", "version", 1, &ver) < 0)
		return -1;
	if (ver < 1 || ver > 3)
		return fail(c, "$.version", "plan version %lld, this reader knows versions 1 to 3",
		            (long long)ver);
	c->version = ver;
	v = jansson.object_get(root, "end");
	if (!v || json_typeof(v) != JSON_TRUE)
		return fail(c, "$", "no \"end\": true member (truncated plan?)");
	int rc = check_sum(c, bytes, len);
	if (rc)
		return rc;
	uint64_t h;
	if (get_hash(c, root, "graph_hash", &h) < 0)
		return -1;
	if (h != c->hash)
		return fail(c, "$.graph_hash",
		            "plan made for graph 0x%016llx, this graph is 0x%016llx",
		            (unsigned long long)h, (unsigned long long)c->hash);
	if (get_int(c, root, "$", "nops", 1, &n) < 0)
		return -1;
	if (n != c->nops)
		return fail(c, "$.nops", "plan has %lld ops, this iteration %d", (long long)n,
		            c->nops);
	if (get_int(c, root, "$", "budget", 1, &b) < 0)
		return -1;
	if (b != c->budget)
		return fail(c, "$.budget",
		            "plan made for a budget of %lld bytes, this run has %lld", (long long)b,
		            (long long)c->budget);
	return 0;
}

/* Informational figures, -1 when unknown; bytes and times within the
 * planner's 2^53 (a recompute sum may count an op many times). */
static int read_figures(struct ctx *c, json_t *root, int64_t fig[4])
{
	static const char *const figs[4] = {"baseline_peak", "peak", "recompute_ns",
	                                    "iteration_ns"};
	for (int i = 0; i < 4; i++) {
		int64_t max = i == 2 ? INT64_MAX : MAX_AMOUNT;
		fig[i] = -1;
		if (get_int(c, root, "$", figs[i], 0, &fig[i]) < 0)
			return -1;
		if (fig[i] < -1 || fig[i] > max)
			return fail(c, "$", "member \"%s\" is %lld, outside -1..%lld", figs[i],
			            (long long)fig[i], (long long)max);
	}
	/* The planner checked its plan against the budget; a file saying
	 * otherwise was not written by it. */
	if (fig[1] > c->budget)
		return fail(c, "$.peak", "planned peak %lld bytes is over the budget of %lld",
		            (long long)fig[1], (long long)c->budget);
	json_t *v = jansson.object_get(root, "planner");
	if (v && !json_is_string(v))
		return fail(c, "$", "member \"planner\" must be a string");
	return 0;
}

/* The plan's arrays from its checked "ops" and buffer lists; NULL out of
 * memory (the message in c). */
static struct pl_plan *plan_make(struct ctx *c, json_t *ops, const uint32_t counts[2], json_t *bl,
                                 json_t *pk)
{
	size_t nbl = bl ? jansson.array_size(bl) : 0, npk = pk ? jansson.array_size(pk) : 0;
	struct pl_plan *p = pl_plan_alloc(c->nops, counts[0], counts[1]);
	if (p && ((nbl && !(p->boundary = malloc(nbl * sizeof(*p->boundary)))) ||
	          (npk && !(p->parked = malloc(npk * sizeof(*p->parked)))))) {
		pl_plan_free(p);
		p = NULL;
	}
	if (!p) {
		snprintf(c->err, c->errlen, "%s: out of memory", c->path);
		return NULL;
	}
	fill_ops(ops, p);
	for (size_t j = 0; j < nbl; j++)
		p->boundary[j] = (int32_t)jansson.integer_value(jansson.array_get(bl, j));
	p->nboundary = (int32_t)nbl;
	for (size_t j = 0; j < npk; j++)
		p->parked[j] = (int32_t)jansson.integer_value(jansson.array_get(pk, j));
	p->nparked = (int32_t)npk;
	return p;
}

/* Offload (version 3): the bandwidth it was planned for, required when it
 * offloads (the validator checks that). */
static int read_offload(struct ctx *c, json_t *root, struct pl_plan *p)
{
	json_t *v = jansson.object_get(root, "offload_gbps");
	if (!v)
		return 0;
	double g = json_is_number(v) ? jansson.number_value(v) : -1;
	if (c->version < 3 || !(g >= 0.001 && g <= 10000))
		return fail(c, "$.offload_gbps",
		            c->version < 3 ? "in a version %lld plan (it needs version 3)"
		                           : "must be GB/s from 0.001 to 10000",
		            (long long)c->version);
	p->offload_gbps = g;
	return 0;
}

static int parse_plan(struct ctx *c, json_t *root, const char *bytes, size_t len,
                      struct pl_plan **out)
{
	int rc = check_header(c, root, bytes, len);
	if (rc)
		return rc;
	int64_t fig[4];
	if (read_figures(c, root, fig) < 0)
		return -1;
	json_t *ops = jansson.object_get(root, "ops");
	if (!json_is_array(ops))
		return fail(c, "$", "missing member \"ops\" (an array)");
	uint32_t counts[2] = {0, 0};
	json_t *bl, *pk;
	if (check_ops(c, ops, &counts[0], &counts[1]) < 0 ||
	    id_list(c, root, "unmapped_at_boundary", 2, &bl) < 0 ||
	    id_list(c, root, "parked_on_host", 3, &pk) < 0)
		return -1;
	struct pl_plan *p = plan_make(c, ops, counts, bl, pk);
	if (!p)
		return -1;
	p->graph_hash = c->hash;
	p->budget = c->budget;
	p->baseline_peak = fig[0];
	p->peak = fig[1];
	p->recompute_ns = fig[2];
	p->iteration_ns = fig[3];
	if (read_offload(c, root, p) < 0) {
		pl_plan_free(p);
		return -1;
	}
	json_t *v = jansson.object_get(root, "planner");
	snprintf(p->planner, sizeof(p->planner), "%s", v ? jansson.string_value(v) : "");
	*out = p;
	return 0;
}

int acq_plan_read(const char *path, uint64_t graph_hash, int32_t nops, int64_t budget,
                  int32_t nbufs, struct pl_plan **out, char *err, size_t errlen)
{
	*out = NULL;
	if (acq_json_ready(err, errlen))
		return -1;
	size_t n;
	char *bytes = pl_file_read(path, &n, err, errlen);
	if (!bytes)
		return -1;
	json_t *root = load(path, bytes, n, err, errlen);
	int rc = -1;
	if (root) {
		struct ctx c = {path,
		                err,
		                errlen,
		                .hash = graph_hash,
		                .nops = nops,
		                .nbufs = nbufs,
		                .budget = budget};
		rc = parse_plan(&c, root, bytes, n, out);
		drop(root);
	}
	free(bytes);
	return rc;
}

int acq_trace_peek(const char *trace_dir, struct acq_trace_info *ti, char *err, size_t errlen)
{
	if (acq_json_ready(err, errlen))
		return -1;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/trace.json", trace_dir);
	size_t n;
	char *bytes = pl_file_read(path, &n, err, errlen);
	if (!bytes)
		return -1;
	json_t *root = load(path, bytes, n, err, errlen);
	free(bytes);
	if (!root)
		return -1;
	struct ctx c = {.path = path, .err = err, .errlen = errlen};
	json_t *fmt = jansson.object_get(root, "format"),
	       *bufs = jansson.object_get(root, "buffers");
	json_t *it = jansson.object_get(root, "iteration");
	int rc = -1;
	if (!json_is_string(fmt) || strcmp(jansson.string_value(fmt), "remat-trace"))
		fail(&c, "$.format", "not a trace (expected \"remat-trace\")");
	else if (get_hash(&c, root, "graph_hash", &ti->graph_hash) == 0) {
		if (!json_is_array(bufs))
			fail(&c, "$", "missing member \"buffers\" (an array)");
		else if (jansson.array_size(bufs) > INT32_MAX)
			fail(&c, "$.buffers", "more than %d buffers", INT32_MAX);
		else {
			ti->nbufs = (int32_t)jansson.array_size(bufs);
			ti->duration_ns = -1;
			/* (an unusable figure stays unknown: the planner says what is wrong) */
			if (json_is_object(it) &&
			    (get_int(&c, it, "$.iteration", "duration_ns", 0, &ti->duration_ns) <
			         0 ||
			     ti->duration_ns < -1 || ti->duration_ns > MAX_AMOUNT))
				ti->duration_ns = -1;
			rc = 0;
		}
	}
	drop(root);
	return rc;
}
