/*
 * test_io.c — budget strings, the trace loader (hand-written fixture and
 * broken copies of it), the graph file (round trip, errors), networkx
 * node-link graphs, and plan files (round trip, errors).  Every bad input
 * must name the problem and where it is.
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#define FIXTURE "tests/planner/fixtures/trace-small"
#define MiB     1048576

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc(n + 1);
	assert_int_equal(fread(s, 1, n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

/* text with the first `from` replaced by `to` (must occur). */
static char *replace(const char *text, const char *from, const char *to)
{
	char *s = tu_replace(text, from, to);
	assert_non_null(s);
	return s;
}

static void expect_error(int rc, int want, const char *err, const char *msg)
{
	assert_int_equal(rc, want);
	if (!strstr(err, msg))
		fail_msg("'%s' does not say '%s'", err, msg);
}

static void budget_strings(void **state)
{
	(void)state;
	char err[256];
	int64_t v;
	struct {
		const char *s;
		int64_t want;
	} good[] = {{"4096", 4096},     {"12G", 12LL << 30}, {"1536M", 1536LL << 20},
	            {"64k", 64 << 10},  {"1T", 1LL << 40},   {"1.5G", 3LL << 29},
	            {"50%", 500},       {"100%", 1000},      {"12GiB", 12LL << 30},
	            {"7MB", 7LL << 20}, {"2.5%", 25}};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(pl_parse_budget(good[i].s, 1000, &v, err, sizeof(err)), 0);
		assert_int_equal(v, good[i].want);
	}
	struct {
		const char *s, *msg;
	} bad[] = {{"", "empty"},
	           {"abc", "not a positive number"},
	           {"12X", "unknown suffix 'X'"},
	           {"-5G", "not a positive number"},
	           {" 5G", "not a positive number"},
	           {"0%", "percentage must be in (0, 100]"},
	           {"150%", "percentage must be in (0, 100]"},
	           {"50%x", "junk after"},
	           {"1.5", "whole number"},
	           {"0", "not a positive size"},
	           {"0x10", "not a plain decimal"},
	           {"1e3", "not a plain decimal"},
	           {"0.01%", "rounds to 0"},
	           {"99999999999T", "too large"},
	           {"8388608T", "too large"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(pl_parse_budget(bad[i].s, 1000, &v, err, sizeof(err)), PL_EINPUT, err,
		             bad[i].msg);
}

static const struct pl_ref *find_ref(const struct pl_graph *g, int32_t op, int32_t buf)
{
	for (uint32_t k = 0; k < g->ops[op].nrefs; k++)
		if (g->refs[g->ops[op].ref_off + k].buf == buf)
			return &g->refs[g->ops[op].ref_off + k];
	fail_msg("op %d does not reference buffer %d", op, buf);
	return NULL;
}

static void trace_loads(void **state)
{
	(void)state;
	struct pl_graph *g;
	char err[512];
	assert_int_equal(pl_graph_load(FIXTURE, &g, err, sizeof(err)), 0);
	assert_int_equal(g->nops, 9);
	assert_int_equal(g->nbufs, 9);
	assert_int_equal(g->granularity, MiB);
	assert_int_equal(g->const_bytes, MiB); /* persistent_bytes minus the weights */
	assert_true(g->hash == 0x00c0ffee12345678ull);
	assert_int_equal(g->baseline_peak, 12 * MiB);
	assert_int_equal(g->live[0], 4 * MiB);
	assert_int_equal(g->live[5], 12 * MiB);
	assert_int_equal(g->live[8], 4 * MiB);
	assert_int_equal(g->iteration_ns, 1180); /* measured ops only */
	assert_int_equal(g->ops[8].duration_ns, 1180 / 8);
	assert_false(g->ops[0].replayable);
	assert_string_equal(g->ops[0].why_not, "copy from host");
	assert_int_equal(g->ops[0].kind, PL_KIND_MEMCPY);
	assert_int_equal(g->ops[8].kind, PL_KIND_HOST_FUNC);
	assert_true(g->bufs[1].small);
	assert_int_equal(g->bufs[1].rounded, 0);
	assert_true(g->bufs[0].persistent);
	/* A fresh output is referenced, not read. */
	assert_int_equal(find_ref(g, 1, 3)->flags, PL_REF_WRITE);
	assert_int_equal(find_ref(g, 1, 2)->flags, PL_REF_READ);
	assert_int_equal(find_ref(g, 1, 2)->ver, 0);
	assert_int_equal(find_ref(g, 2, 1)->flags, PL_REF_READ | PL_REF_WRITE);
	assert_int_equal(find_ref(g, 2, 1)->ver, PL_VER_PRE);
	assert_int_equal(find_ref(g, 6, 1)->ver, 2); /* after the statistics update */
	assert_int_equal(find_ref(g, 6, 3)->ver, 1);

	/* y (4 MiB) can be rebuilt at op 6 by replaying conv (op 1), which also
	 * writes the workspace: so the workspace must stay mapped then. */
	struct pl_options o;
	pl_options_default(&o);
	struct pl_cands cs;
	assert_int_equal(pl_cands_build(g, &o, &cs, NULL, 0), 0);
	int found = 0;
	for (int32_t j = 0; j < cs.ncands; j++) {
		const struct pl_cand *x = &cs.c[j];
		if (x->at != 6)
			continue;
		found = 1;
		assert_int_equal(x->nsteps, 2);
		assert_int_equal(cs.steps[x->step_off].kind, PL_STEP_MAP);
		assert_int_equal(cs.steps[x->step_off].arg, 3);
		assert_int_equal(cs.steps[x->step_off + 1].kind, PL_STEP_REPLAY);
		assert_int_equal(cs.steps[x->step_off + 1].arg, 1);
		assert_int_equal(x->cost, 200);
		int ws = 0;
		for (uint32_t k = 0; k < x->nforbid; k++)
			ws |= cs.gaps[cs.forbid_list[x->forbid_off + k]].buf == 4;
		assert_true(ws);
	}
	assert_true(found);
	pl_cands_free(&cs);

	struct pl_plan *p;
	struct pl_result res;
	assert_int_equal(pl_plan_make(g, 11 * MiB, &o, &p, &res), 0);
	assert_int_equal(res.peak, 11 * MiB);
	assert_int_equal(res.recompute_ns, 0); /* dropping the idle workspace is free */
	assert_true(p->graph_hash == g->hash);
	pl_plan_free(p);
	expect_error(pl_plan_make(g, 10 * MiB, &o, &p, &res), PL_EBUDGET, res.error,
	             "the smallest budget it meets is 11534336 bytes");
	assert_int_equal(res.min_peak, 11 * MiB);
	pl_graph_free(g);
}

/* A copy of the fixture with trace.json (or params.bin) replaced; the
 * graph in *out when out is given. */
static int load_variant_graph(const char *json, const char *params, struct pl_graph **out,
                              char *err, size_t errlen)
{
	char *dir = tu_tmpdir();
	char cmd[4200];
	tu_write(dir, "trace.json", json);
	if (params) {
		tu_write(dir, "params.bin", params);
	} else {
		/* binary: copy it as it is */
		snprintf(cmd, sizeof(cmd), "cp " FIXTURE "/params.bin '%s/'", dir);
		assert_int_equal(system(cmd), 0);
	}
	struct pl_graph *g = NULL;
	int rc = pl_graph_load(dir, &g, err, errlen);
	if (out)
		*out = g;
	else
		pl_graph_free(g);
	tu_rmdir(dir);
	return rc;
}

static int load_variant(const char *json, const char *params, char *err, size_t errlen)
{
	return load_variant_graph(json, params, NULL, err, errlen);
}

/* What the profiler will say of regions inside long-lived allocations:
 * a buffer dead across the boundary, a partial write. */
static void trace_value_lifetimes(void **state)
{
	(void)state;
	char err[512];
	char *good = slurp(FIXTURE "/trace.json");
	const char *stats = "\"persistent\": true, \"site\": [\"bn.c:9";
	char *t = replace(good, stats,
	                  "\"persistent\": true, \"dead_across_boundary\": true, \"site\": "
	                  "[\"bn.c:9");
	struct pl_graph *g;
	if (load_variant_graph(t, NULL, &g, err, sizeof(err)))
		fail_msg("%s", err);
	assert_true(g->bufs[1].dead_across);
	assert_false(g->bufs[0].dead_across);
	/* its first access overwrites it: the conservative read is dropped */
	assert_int_equal(find_ref(g, 2, 1)->flags, PL_REF_WRITE);
	assert_int_equal(find_ref(g, 2, 1)->ver, PL_VER_FRESH);
	pl_graph_free(g);
	/* ... unless that write is partial */
	char *t2 = replace(t, "\"writes\": [5, 1],", "\"writes\": [5, 1], \"partial\": [1],");
	expect_error(load_variant(t2, NULL, err, sizeof(err)), PL_EINPUT, err,
	             "buffer 1 is dead across the boundary, but op 2 reads it before writing all");
	free(t2);
	free(t);
	t = replace(good, "\"writes\": [5, 1],", "\"writes\": [5, 1], \"partial\": [5],");
	if (load_variant_graph(t, NULL, &g, err, sizeof(err)))
		fail_msg("%s", err);
	/* (of a buffer allocated for it: nothing before it to keep) */
	assert_int_equal(find_ref(g, 2, 5)->flags, PL_REF_WRITE | PL_REF_PARTIAL);
	pl_graph_free(g);
	free(t);
	free(good);
}

static void trace_errors(void **state)
{
	(void)state;
	char err[512];
	char *good = slurp(FIXTURE "/trace.json");
	char *t;
	struct {
		const char *from, *to, *msg;
	} cases[] = {
	    {"\"version\": 1", "\"version\": 2", "trace version 2, this planner reads version 1"},
	    {"\"end\": true", "\"end\": false", "no \"end\": true member"},
	    {"\"format\": \"remat-trace\"", "\"format\": \"other\"", "is not a trace"},
	    {"\"reads\": [2, 0, 3, 4]", "\"reads\": [2, 0, 99, 4]",
	     "$.ops[1].reads: element 2: buffer 99 does not exist"},
	    {"\"reads\": [8, 2, 0]", "\"reads\": [8, 2, 0, 5]",
	     "op 7 references buffer 5 outside its lifetime"},
	    {"\"i\": 3,", "\"i\": 4,", "$.ops[3]: \"i\" is 4, expected 3"},
	    {"\"size\": 120", "\"size\": 121", "120 bytes, trace.json says 121"},
	    {"0x0962feeef4c7ab2d", "0x0962feeef4c7ab2e", "FNV-1a 64 is 0x0962feeef4c7ab2d"},
	    {"\"free_at\": 7, \"alloc_seq\": 1", "\"free_at\": 0, \"alloc_seq\": 1",
	     "$.buffers[3]: bad lifetime"},
	    {"\"granularity\": 1048576", "\"granularity\": \"big\"",
	     "$.process: member \"granularity\" must be an integer"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = replace(good, cases[i].from, cases[i].to);
		expect_error(load_variant(t, NULL, err, sizeof(err)), PL_EINPUT, err, cases[i].msg);
		free(t);
	}
	/* truncated: jansson's line and column */
	good[strlen(good) / 2] = 0;
	expect_error(load_variant(good, NULL, err, sizeof(err)), PL_EINPUT, err, "invalid JSON");
	assert_non_null(strstr(err, "trace.json:"));
	free(good);
	good = slurp(FIXTURE "/trace.json");
	expect_error(load_variant(good, "short", err, sizeof(err)), PL_EINPUT, err,
	             "5 bytes, trace.json says 120");
	free(good);
	struct pl_graph *g;
	expect_error(pl_graph_load("/nonexistent/trace", &g, err, sizeof(err)), PL_EINPUT, err,
	             "No such file");
}

/* Absurd sizes and times (issue 11): each refused with the file and the
 * member, never summed into a nonsense curve or budget. */
static void trace_overflow(void **state)
{
	(void)state;
	char err[512];
	char *good = slurp(FIXTURE "/trace.json");
	struct {
		const char *from, *to, *msg;
	} cases[] = {
	    /* a buffer of 2^61 bytes (UBSan: trace_load.c summing the persistent ones) */
	    {"\"size\": 2097152, \"rounded\": 2097152",
	     "\"size\": 2097152, \"rounded\": 2305843009213693952",
	     "$.buffers[0]: member \"rounded\" is 2305843009213693952, outside 0..2^53"},
	    {"\"size\": 4000000", "\"size\": 2305843009213693952",
	     "$.buffers[3]: member \"size\" is 2305843009213693952, outside 0..2^53"},
	    /* a duration of 2^62 ns (UBSan: graph.c summing the durations) */
	    {"\"duration_ns\": 200", "\"duration_ns\": 4611686018427387904",
	     "$.ops[1]: member \"duration_ns\" is 4611686018427387904, outside -1..2^53"},
	    {"\"duration_ns\": 200", "\"duration_ns\": -2", "outside -1..2^53"},
	    /* each in range, their sums not */
	    {"\"size\": 4000000, \"rounded\": 4194304",
	     "\"size\": 4000000, \"rounded\": 9007199254740992",
	     "$.buffers[3]: the buffers' \"rounded\" sizes and const_bytes add up to more than "
	     "2^53 bytes"},
	    {"\"duration_ns\": 200", "\"duration_ns\": 9007199254740992",
	     "$.ops[1]: the ops' \"duration_ns\" add up to more than 2^53 ns"},
	    {"\"persistent_bytes\": 3145728", "\"persistent_bytes\": 9223372036854775807",
	     "$.memory: member \"persistent_bytes\" is 9223372036854775807, outside 0..2^53"},
	    {"\"granularity\": 1048576", "\"granularity\": -1",
	     "$.process: member \"granularity\" is -1, outside 0..2^53"},
	    {"\"period\": 9", "\"period\": 4294967305",
	     "$.iteration: member \"period\" is 4294967305, outside 0..2147483647"},
	    {"\"stream\": 1,", "\"stream\": -1,", "$.ops[0]: member \"stream\" is -1"},
	    {"\"size\": 120", "\"size\": 1e300", "member \"size\" must be an integer"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = replace(good, cases[i].from, cases[i].to);
		expect_error(load_variant(t, NULL, err, sizeof(err)), PL_EINPUT, err, cases[i].msg);
		assert_non_null(strstr(err, "trace.json: "));
		free(t);
	}
	free(good);
}

/* A trace written when no managed allocation happened has granularity 0
 * (the allocator never had a chunk size): nothing was rounded, it plans
 * as granularity 1 instead of being refused. */
static void trace_granularity_zero(void **state)
{
	(void)state;
	char err[512];
	char *good = slurp(FIXTURE "/trace.json");
	char *t = replace(good, "\"granularity\": 1048576", "\"granularity\": 0");
	struct pl_graph *g;
	if (load_variant_graph(t, NULL, &g, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(g->granularity, 1);
	assert_int_equal(g->baseline_peak, 12 * MiB);
	int64_t budget;
	assert_int_equal(pl_parse_budget("100%", g->baseline_peak, &budget, err, sizeof(err)), 0);
	assert_int_equal(budget, 12 * MiB);
	pl_graph_free(g);
	free(t);
	free(good);
}

static void graph_file_round_trip(void **state)
{
	(void)state;
	char err[512];
	struct pl_graph *g, *h;
	char *dir = tu_tmpdir();
	char path[4096];
	snprintf(path, sizeof(path), "%s/g.json", dir);
	assert_int_equal(pl_graph_load(FIXTURE, &g, err, sizeof(err)), 0);
	assert_int_equal(pl_graph_save_json(g, path, err, sizeof(err)), 0);
	assert_int_equal(pl_graph_load(path, &h, err, sizeof(err)), 0);
	assert_true(g->hash == h->hash);
	assert_int_equal(g->nops, h->nops);
	assert_int_equal(g->nrefs, h->nrefs);
	assert_int_equal(g->baseline_peak, h->baseline_peak);
	assert_int_equal(g->const_bytes, h->const_bytes);
	for (uint32_t k = 0; k < g->nrefs; k++) {
		assert_int_equal(g->refs[k].buf, h->refs[k].buf);
		assert_int_equal(g->refs[k].flags, h->refs[k].flags);
		assert_int_equal(g->refs[k].ver, h->refs[k].ver);
	}
	for (int32_t i = 0; i < g->nops; i++) {
		assert_string_equal(g->ops[i].name, h->ops[i].name);
		assert_int_equal(g->ops[i].replayable, h->ops[i].replayable);
		assert_int_equal(g->ops[i].duration_ns, h->ops[i].duration_ns);
	}
	pl_graph_free(h);

	/* Bad graph files. */
	char *good = slurp(path);
	struct {
		const char *from, *to, *msg;
	} cases[] = {
	    {"\"version\": 1", "\"version\": 7", "graph version 7, this planner reads version 1"},
	    {"\"format\": \"remat-graph\"", "\"format\": \"remat-trace\"", "pass its directory"},
	    {"\"format\": \"remat-graph\"", "\"format\": \"x\"", "expected \"remat-graph\""},
	    {"\"writes\": [3, 4]", "\"writes\": [3, -4]", "$.ops[1].writes: element 1"},
	    {"\"duration_ns\": 200", "\"duration_ns\": 2.5",
	     "$.ops[1]: member \"duration_ns\" must be an integer"},
	    {"\"id\": 2,", "\"id\": 5,", "$.buffers[2]: id is 5, expected 2"},
	    {"\"alloc_at\": 2", "\"alloc_at\": 99", "$.buffers[5]: bad lifetime"},
	    {"\"graph_hash\": \"0x", "\"graph_hash\": \"1x", "must be a hex string"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = replace(good, cases[i].from, cases[i].to);
		tu_write(dir, "bad.json", t);
		snprintf(path, sizeof(path), "%s/bad.json", dir);
		expect_error(pl_graph_load(path, &h, err, sizeof(err)), PL_EINPUT, err,
		             cases[i].msg);
		assert_non_null(strstr(err, "bad.json"));
		free(t);
	}
	good[strlen(good) - 40] = 0;
	tu_write(dir, "cut.json", good);
	snprintf(path, sizeof(path), "%s/cut.json", dir);
	expect_error(pl_graph_load(path, &h, err, sizeof(err)), PL_EINPUT, err, "cut.json:");
	assert_non_null(strstr(err, "invalid JSON"));
	free(good);
	/* Without a hash member the content is hashed: stable across loads. */
	tu_write(dir, "nohash.json",
	         "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": [{\"id\": 0, "
	         "\"size\": 10, \"alloc_at\": 0, \"free_at\": -1}], \"ops\": [{\"i\": 0, "
	         "\"duration_ns\": 5, \"reads\": [], \"writes\": [0]}]}");
	snprintf(path, sizeof(path), "%s/nohash.json", dir);
	assert_int_equal(pl_graph_load(path, &h, err, sizeof(err)), 0);
	struct pl_graph *h2;
	assert_int_equal(pl_graph_load(path, &h2, err, sizeof(err)), 0);
	assert_true(h->hash == h2->hash && h->hash != 0);
	assert_int_equal(h->baseline_peak, 10);
	pl_graph_free(h);
	pl_graph_free(h2);
	pl_graph_free(g);
	tu_rmdir(dir);
}

/* Graph files and node-link graphs with absurd numbers. */
static void graph_overflow(void **state)
{
	(void)state;
	char err[512];
	char *dir = tu_tmpdir();
	struct pl_graph *g;
	struct {
		const char *text, *msg;
	} cases[] = {
	    /* granularity 3, a size near INT64_MAX (UBSan: pl_round_up) */
	    {"{\"format\": \"remat-graph\", \"version\": 1, \"granularity\": 3, \"buffers\": "
	     "[{\"id\": 0, \"size\": 9223372036854775806, \"alloc_at\": 0, \"free_at\": 1}], "
	     "\"ops\": [{\"i\": 0, \"duration_ns\": 1, \"reads\": [], \"writes\": [0]}]}",
	     "g.json: $.buffers[0]: member \"size\" is 9223372036854775806, outside 0..2^53"},
	    /* five buffers of 2^61 bytes: the baseline curve (UBSan: graph.c) */
	    {"{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": [{\"id\": 0, \"size\": "
	     "2305843009213693952, \"alloc_at\": 0, \"free_at\": 1}], \"ops\": [{\"i\": 0, "
	     "\"duration_ns\": 1, \"reads\": [], \"writes\": [0]}]}",
	     "g.json: $.buffers[0]: member \"size\" is 2305843009213693952, outside 0..2^53"},
	    {"{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": [{\"id\": 0, \"size\": "
	     "9007199254740992, \"alloc_at\": 0, \"free_at\": 1}, {\"id\": 1, \"size\": 1, "
	     "\"alloc_at\": 0, \"free_at\": 1}], \"ops\": [{\"i\": 0, \"duration_ns\": 1, "
	     "\"reads\": [], \"writes\": [0, 1]}]}",
	     "g.json: $.buffers[1]: the buffers' \"rounded\" sizes and const_bytes add up"},
	    {"{\"format\": \"remat-graph\", \"version\": 1, \"const_bytes\": 9007199254740993, "
	     "\"buffers\": [], \"ops\": [{\"i\": 0, \"duration_ns\": 1, \"reads\": [], "
	     "\"writes\": []}]}",
	     "g.json: $: member \"const_bytes\" is 9007199254740993, outside 0..2^53"},
	    {"{\"format\": \"remat-graph\", \"version\": 1, \"granularity\": 0, \"buffers\": [], "
	     "\"ops\": [{\"i\": 0, \"duration_ns\": 1, \"reads\": [], \"writes\": []}]}",
	     "g.json: $: member \"granularity\" is 0, outside 1..2^53"},
	    /* durations of 2^62 ns */
	    {"{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": [], \"ops\": [{\"i\": "
	     "0, \"duration_ns\": 4611686018427387904, \"reads\": [], \"writes\": []}]}",
	     "g.json: $.ops[0]: member \"duration_ns\" is 4611686018427387904, outside -1..2^53"},
	    /* a whole real out of int64_t's range (undefined to convert) */
	    {"{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": [], \"ops\": [{\"i\": "
	     "0, \"duration_ns\": 1e300, \"reads\": [], \"writes\": []}]}",
	     "g.json: $.ops[0]: member \"duration_ns\" must be an integer"},
	    /* node-link costs near INT64_MAX (UBSan: checkmate_load.c, graph.c) */
	    {"{\"nodes\": [{\"id\": 0, \"cost_cpu\": 1, \"cost_ram\": 1, \"param_cost\": "
	     "9223372036854775807}], \"links\": []}",
	     "g.json: $.nodes[0]: member \"param_cost\" is 9223372036854775807, outside 0..2^53"},
	    {"{\"nodes\": [{\"id\": 0, \"cost_cpu\": 9223372036854775807, \"cost_ram\": 1}], "
	     "\"links\": []}",
	     "g.json: $.nodes[0]: member \"cost_cpu\" is 9223372036854775807, outside -1..2^53"},
	    {"{\"nodes\": [{\"id\": 0, \"cost_cpu\": 1, \"cost_ram\": 9223372036854775807}], "
	     "\"links\": []}",
	     "g.json: $.nodes[0]: member \"cost_ram\" is 9223372036854775807, outside 0..2^53"},
	    {"{\"nodes\": [{\"id\": 0, \"cost_cpu\": 1, \"cost_ram\": 9007199254740992}, "
	     "{\"id\": 1, \"cost_cpu\": 1, \"cost_ram\": 1, \"param_cost\": 1}], \"links\": []}",
	     "g.json: $.nodes[1]: the nodes' \"cost_ram\" and \"param_cost\" add up to more than "
	     "2^53"},
	    {"{\"nodes\": [{\"id\": 0, \"duration\": 9007199254740992, \"out_cost\": 1}, "
	     "{\"id\": 1, \"duration\": 1, \"out_cost\": 1}], \"links\": []}",
	     "g.json: $.nodes[1]: the nodes' \"duration\" add up to more than 2^53"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = tu_write(dir, "g.json", cases[i].text);
		expect_error(pl_graph_load(path, &g, err, sizeof(err)), PL_EINPUT, err,
		             cases[i].msg);
	}
	/* at the limit: accepted, and every figure exact */
	const char *path =
	    tu_write(dir, "g.json",
	             "{\"format\": \"remat-graph\", \"version\": 1, \"granularity\": 3, "
	             "\"buffers\": [{\"id\": "
	             "0, \"size\": 9007199254740989, \"alloc_at\": 0, \"free_at\": 1}], \"ops\": "
	             "[{\"i\": 0, "
	             "\"duration_ns\": 9007199254740992, \"reads\": [], \"writes\": [0]}]}");
	if (pl_graph_load(path, &g, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(g->bufs[0].rounded, 9007199254740990);
	assert_int_equal(g->baseline_peak, 9007199254740990);
	assert_int_equal(g->iteration_ns, 9007199254740992);
	pl_graph_free(g);
	tu_rmdir(dir);
}

static void node_link_graphs(void **state)
{
	(void)state;
	char err[512];
	char *dir = tu_tmpdir();
	struct pl_graph *g;
	/* Checkmate style: 0 -> 1 -> 2 -> 3 (loss) with backward reading 1 */
	const char *cm =
	    "{\"directed\": true, \"graph\": {\"name\": \"tiny\"}, \"nodes\": ["
	    "{\"name\": \"a\", \"cost_cpu\": 5, \"cost_ram\": 100, \"id\": 0},"
	    "{\"name\": \"b\", \"cost_cpu\": 6, \"cost_ram\": 200, \"id\": 1},"
	    "{\"name\": \"c\", \"cost_cpu\": 7, \"cost_ram\": 300, \"id\": 2},"
	    "{\"name\": \"d\", \"cost_cpu\": 8, \"cost_ram\": 10, \"id\": 3}],"
	    "\"links\": [{\"source\": 0, \"target\": 1}, {\"source\": 1, \"target\": 2},"
	    "{\"source\": 2, \"target\": 3}, {\"source\": 1, \"target\": 3}]}";
	const char *path = tu_write(dir, "cm.json", cm);
	assert_int_equal(pl_graph_load(path, &g, err, sizeof(err)), 0);
	assert_int_equal(g->nops, 4);
	assert_string_equal(g->name, "tiny");
	assert_int_equal(g->bufs[1].size, 200);
	assert_int_equal(g->bufs[1].free_at, 4); /* after its last reader, op 3 */
	assert_int_equal(g->bufs[0].free_at, 2);
	assert_int_equal(g->ops[3].nrefs, 3);
	assert_int_equal(g->ops[2].duration_ns, 7);
	assert_int_equal(g->baseline_peak, 200 + 300 + 10);
	pl_graph_free(g);
	/* Random layered style: "0"/"1" link keys and graph.order */
	const char *rl = "{\"graph\": {\"name\": \"rl\", \"order\": [0, 2, 1]}, \"nodes\": ["
	                 "{\"out_cost\": 10, \"param_cost\": 5, \"duration\": 1, \"name\": 0},"
	                 "{\"out_cost\": 20, \"param_cost\": 0, \"duration\": 2, \"name\": 1},"
	                 "{\"out_cost\": 30, \"param_cost\": 0, \"duration\": 3, \"name\": 2}],"
	                 "\"links\": [{\"0\": 0, \"1\": 2}, {\"0\": 2, \"1\": 1}]}";
	path = tu_write(dir, "rl.json", rl);
	assert_int_equal(pl_graph_load(path, &g, err, sizeof(err)), 0);
	assert_int_equal(g->const_bytes, 5);
	assert_string_equal(g->ops[1].name, "2"); /* node 2 runs second */
	assert_int_equal(g->ops[1].duration_ns, 3);
	pl_graph_free(g);
	path = tu_write(dir, "bad1.json",
	                "{\"nodes\": [{\"id\": 0, \"cost_cpu\": 1, \"cost_ram\": 1}], "
	                "\"links\": [{\"source\": 0, \"target\": 9}]}");
	expect_error(pl_graph_load(path, &g, err, sizeof(err)), PL_EINPUT, err,
	             "$.links[0]: node 9 does not exist");
	path = tu_write(
	    dir, "bad2.json",
	    "{\"nodes\": [{\"id\": 0, \"cost_cpu\": 1, \"cost_ram\": 1}, {\"id\": 1, "
	    "\"cost_cpu\": 1, \"cost_ram\": 1}], \"links\": [{\"source\": 1, \"target\": 0}]}");
	expect_error(pl_graph_load(path, &g, err, sizeof(err)), PL_EINPUT, err,
	             "goes against the execution order");
	path = tu_write(dir, "bad3.json",
	                "{\"nodes\": [{\"id\": 0, \"cost_ram\": 1}], \"links\": []}");
	expect_error(pl_graph_load(path, &g, err, sizeof(err)), PL_EINPUT, err,
	             "$.nodes[0]: missing member \"duration\"");
	tu_rmdir(dir);
}

/* Gives text (a plan file) the checksum of its content, in place. */
static void reseal(char *text)
{
	uint64_t stated;
	long at = pl_checksum_locate(text, strlen(text), &stated);
	assert_true(at > 0);
	char tail[PL_CHECKSUM_TAIL_MAX];
	assert_true(pl_checksum_tail(pl_checksum_of(text, (size_t)at), tail, sizeof(tail)) > 0);
	assert_int_equal(strlen(text + at), strlen(tail));
	memcpy(text + at, tail, strlen(tail));
}

/* The checksum (docs/plan-format.md): what it covers, in versions 1 and 2,
 * and remat-plan --rehash after an edit by hand.  good: p as saved. */
static void plan_checksums(const struct pl_graph *g, const struct pl_plan *p, const char *dir,
                           const char *good)
{
	char err[1024];
	struct pl_plan *q;
	/* FNV-1a 64 of the bytes before "checksum", as the format says */
	const char *at = strstr(good, "  \"checksum\": \"0x");
	assert_non_null(at);
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *c = good; c < at + 2; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	char want[40];
	snprintf(want, sizeof(want), "\"checksum\": \"0x%016llx\"", (unsigned long long)h);
	assert_non_null(strstr(good, want));
	/* one changed byte anywhere before it, even where nothing reads it */
	char *t = replace(good, "\"planner\": \"hand\"", "\"planner\": \"hanD\"");
	const char *path = tu_write(dir, "edit.json", t);
	expect_error(pl_plan_load_json(path, g, &q, err, sizeof(err)), PL_EINPUT, err,
	             "edit.json: checksum does not match the content");
	/* the message says how to go on; --rehash does it */
	assert_non_null(strstr(err, "remat-plan --rehash"));
	assert_int_equal(pl_plan_rehash(path, err, sizeof(err)), 0);
	assert_int_equal(pl_plan_load_json(path, g, &q, err, sizeof(err)), 0);
	assert_string_equal(q->planner, "hanD");
	pl_plan_free(q);
	free(t);
	/* without the member (an older file, or one written by hand) */
	t = strdup(good);
	char *cs = strstr(t, "  \"checksum\"");
	memmove(cs, strstr(cs, "  \"end\""), strlen(strstr(cs, "  \"end\"")) + 1);
	path = tu_write(dir, "old.json", t);
	expect_error(pl_plan_load_json(path, g, &q, err, sizeof(err)), PL_EINPUT, err,
	             "old.json: no checksum");
	assert_int_equal(pl_plan_rehash(path, err, sizeof(err)), 0);
	assert_int_equal(pl_plan_load_json(path, g, &q, err, sizeof(err)), 0);
	pl_plan_free(q);
	free(t);
	/* --rehash seals plans only, and leaves anything else as it was */
	t = replace(good, "[\"map\", 3]", "[\"mop\", 3]");
	path = tu_write(dir, "notplan.json", t);
	expect_error(pl_plan_rehash(path, err, sizeof(err)), PL_EINPUT, err,
	             "notplan.json: $.ops[1].before[0]: expected");
	char *back = slurp(path);
	assert_string_equal(back, t);
	free(back);
	free(t);
	/* version 2 carries it too */
	struct pl_plan_builder *b = pl_builder_new(g->nops);
	pl_builder_step(b, 2, PL_STEP_STASH, 1);
	pl_builder_step(b, 6, PL_STEP_UNSTASH, 1);
	struct pl_plan *v2 = pl_builder_finish(b);
	v2->graph_hash = p->graph_hash;
	char v2path[4096];
	snprintf(v2path, sizeof(v2path), "%s/v2.json", dir);
	assert_int_equal(pl_plan_save_json(v2, v2path, err, sizeof(err)), 0);
	pl_plan_free(v2);
	char *text = slurp(v2path);
	assert_non_null(strstr(text, "\"version\": 2"));
	assert_int_equal(pl_plan_load_json(v2path, g, &q, err, sizeof(err)), 0);
	pl_plan_free(q);
	t = replace(text, "[\"unstash\", 1]", "[\"unstash\", 0]");
	path = tu_write(dir, "v2edit.json", t);
	expect_error(pl_plan_load_json(path, g, &q, err, sizeof(err)), PL_EINPUT, err,
	             "v2edit.json: checksum does not match the content");
	free(t);
	free(text);
}

static void plan_files(void **state)
{
	(void)state;
	char err[512];
	struct pl_graph *g;
	assert_int_equal(pl_graph_load(FIXTURE, &g, err, sizeof(err)), 0);
	struct pl_plan_builder *b = pl_builder_new(g->nops);
	pl_builder_evict(b, 2, 3);
	pl_builder_step(b, 6, PL_STEP_MAP, 3);
	pl_builder_step(b, 6, PL_STEP_REPLAY, 1);
	struct pl_plan *p = pl_builder_finish(b), *q;
	p->graph_hash = g->hash;
	p->budget = 11 * MiB;
	snprintf(p->planner, sizeof(p->planner), "hand");
	char *dir = tu_tmpdir();
	char path[4096];
	snprintf(path, sizeof(path), "%s/plan.json", dir);
	assert_int_equal(pl_plan_save_json(p, path, err, sizeof(err)), 0);
	assert_int_equal(pl_plan_load_json(path, g, &q, err, sizeof(err)), 0);
	assert_int_equal(q->nops, p->nops);
	assert_int_equal(q->budget, p->budget);
	assert_string_equal(q->planner, "hand");
	for (int32_t i = 0; i <= p->nops; i++) {
		assert_int_equal(q->step_off[i], p->step_off[i]);
		assert_int_equal(q->evict_off[i], p->evict_off[i]);
	}
	assert_int_equal(q->steps[1].kind, PL_STEP_REPLAY);
	assert_int_equal(q->steps[1].arg, 1);
	assert_int_equal(q->evict[0], 3);
	struct pl_eval e;
	assert_int_equal(pl_evaluate(g, q, &e), 0);
	assert_true(e.valid);
	assert_int_equal(e.peak, 11 * MiB); /* op 6 runs with everything back */
	assert_int_equal(e.curve[5], 8 * MiB);
	pl_eval_free(&e);
	pl_plan_free(q);
	char *good = slurp(path);
	struct {
		const char *from, *to, *msg;
	} cases[] = {
	    {"0x00c0ffee12345678", "0x00c0ffee12345679",
	     "plan made for graph 0x00c0ffee12345679, this graph is 0x00c0ffee12345678"},
	    {"\"nops\": 9", "\"nops\": 10", "plan has 10 ops, the graph 9"},
	    {"[\"map\", 3]", "[\"prefetch\", 3]", "\"prefetch\" needs plan version 3"},
	    {"[\"replay\", 1]", "[\"replay\", 7]",
	     "$.ops[1].before[1]: replay 7: not an earlier op"},
	    {"[\"map\", 3]", "[\"mop\", 3]", "$.ops[1].before[0]: expected"},
	    {"[\"map\", 3]", "[\"map\", 30]", "map 30: no such buffer"},
	    {"\"op\": 6", "\"op\": 1", "$.ops[1]: op 1 out of order"},
	    {"\"version\": 1", "\"version\": 4",
	     "plan version 4, this reader knows versions 1 to 3"},
	    {"\"end\": true", "\"end\": false", "truncated plan"},
	    {"\"format\": \"remat-plan\"", "\"format\": \"remat-graph\"", "is not a plan"},
	};
	const size_t checked_before_sum = 7; /* from here: format, version, end marker */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *t = replace(good, cases[i].from, cases[i].to);
		const char *bad = tu_write(dir, "bad.json", t);
		if (i < checked_before_sum) {
			/* as written: the edit breaks the checksum */
			expect_error(pl_plan_load_json(bad, g, &q, err, sizeof(err)), PL_EINPUT,
			             err, "bad.json: checksum does not match the content (0x");
			/* with its checksum made again, the edit itself is refused */
			reseal(t);
			tu_write(dir, "bad.json", t);
		}
		expect_error(pl_plan_load_json(bad, g, &q, err, sizeof(err)), PL_EINPUT, err,
		             cases[i].msg);
		free(t);
	}
	plan_checksums(g, p, dir, good);
	good[strlen(good) / 2] = 0;
	const char *cut = tu_write(dir, "cut.json", good);
	expect_error(pl_plan_load_json(cut, g, &q, err, sizeof(err)), PL_EINPUT, err,
	             "invalid JSON");
	free(good);
	pl_plan_free(p);
	pl_graph_free(g);
	tu_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(budget_strings),   cmocka_unit_test(trace_loads),
	    cmocka_unit_test(trace_errors),     cmocka_unit_test(trace_value_lifetimes),
	    cmocka_unit_test(trace_overflow),   cmocka_unit_test(trace_granularity_zero),
	    cmocka_unit_test(graph_overflow),   cmocka_unit_test(graph_file_round_trip),
	    cmocka_unit_test(node_link_graphs), cmocka_unit_test(plan_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
