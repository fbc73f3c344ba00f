/* Unit tests for remat-report's model, figures, chart and graph export,
 * on the mlp3 fixture (figures worked out in fixtures/mlp3.expected.md)
 * and on small synthetic traces.  Run from the repository root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/report/report.h"
#include "../../planner/planner.h"

#define FIX  "tests/report/fixtures/mlp3"
#define PLAN "tests/report/fixtures/mlp3-plan.json"
#define MiB  ((int64_t)1 << 20)

static void test_fmt(void **state)
{
	char b[32];
	(void)state;
	assert_string_equal(rr_bytes(0, b, sizeof(b)), "0 B");
	assert_string_equal(rr_bytes(1023, b, sizeof(b)), "1023 B");
	assert_string_equal(rr_bytes(1024, b, sizeof(b)), "1.0 KiB");
	assert_string_equal(rr_bytes(161480704, b, sizeof(b)), "154.0 MiB");
	assert_string_equal(rr_bytes((int64_t)12 << 30, b, sizeof(b)), "12.0 GiB");
	assert_string_equal(rr_ns(-1, b, sizeof(b)), "?");
	assert_string_equal(rr_ns(999, b, sizeof(b)), "999 ns");
	assert_string_equal(rr_ns(67000, b, sizeof(b)), "67.0 us");
	assert_string_equal(rr_ns(1579000, b, sizeof(b)), "1.579 ms");
	assert_string_equal(rr_ns(2500000000, b, sizeof(b)), "2.500 s");
}

static void test_mlp3_figures(void **state)
{
	struct rr_trace t;
	struct rr_stats s;
	char err[512], site[256];
	(void)state;

	assert_int_equal(rr_load_trace(FIX, &t, err, sizeof(err)), 0);
	rr_analyze(&t, &s);
	assert_int_equal(t.period, 26);
	assert_int_equal(t.nops, 26);
	assert_int_equal(t.nbufs, 27);
	assert_int_equal(t.duration_ns, 1579000);
	assert_string_equal(t.graph_hash, "0x11f75e8e87fd6149");
	/* kinds, copy directions, entry points */
	assert_int_equal(s.kinds[PL_KIND_KERNEL], 20);
	assert_int_equal(s.kinds[PL_KIND_MEMCPY], 3);
	assert_int_equal(s.kinds[PL_KIND_MEMSET], 2);
	assert_int_equal(s.kinds[PL_KIND_HOST_FUNC], 1);
	assert_int_equal(s.copies[0], 2); /* HtoD */
	assert_int_equal(s.copies[1], 1); /* DtoH */
	assert_int_equal(s.unknown_duration_ops, 1);
	assert_int_equal(s.copy_bytes[0], 8192000 + 16000);
	assert_int_equal(s.copy_bytes[1], 4);
	assert_int_equal(s.streams, 2);
	assert_int_equal(s.not_replayable, 3);
	assert_int_equal(s.nreasons, 2);
	assert_string_equal(s.reasons[0].why, "copy from host");
	assert_int_equal(s.reasons[0].count, 2);
	assert_string_equal(s.reasons[1].why, "host callback");
	assert_int_equal(s.nvias, 5);
	assert_string_equal(s.vias[0].via, "cudaLaunchKernel");
	assert_int_equal(s.vias[0].count, 12);
	assert_string_equal(s.vias[1].via, "cuLaunchKernel");
	assert_int_equal(s.vias[1].count, 8);
	/* kernels by total time */
	assert_int_equal(s.nkernels, 10);
	assert_string_equal(s.kernels[0].name, "sgemm_nn");
	assert_int_equal(s.kernels[0].count, 3);
	assert_int_equal(s.kernels[0].total_ns, 386000);
	assert_string_equal(s.kernels[1].name, "sgemm_tn");
	assert_int_equal(s.kernels[1].total_ns, 361000);
	/* memory: 96 MiB large persistent + 2 MiB pool; 56 MiB per iteration at op 12 */
	assert_int_equal(s.persistent_large, 96 * MiB);
	assert_int_equal(s.persistent_level, 98 * MiB);
	assert_int_equal(s.npersistent_large, 8);
	assert_int_equal(s.npersistent_small, 9);
	assert_int_equal(s.nperiter_small, 5);
	assert_int_equal(s.persistent_small_req, 393376);
	assert_int_equal(s.periter_small_req, 256004);
	assert_int_equal(s.peak, 161480704);
	assert_int_equal(s.peak_op, 12);
	static const int per_iter_mib[26] = {8,  8,  24, 24, 40, 40, 40, 40, 40, 40, 40, 40, 56,
	                                     56, 40, 40, 56, 40, 24, 24, 0,  0,  0,  0,  0,  0};
	for (int i = 0; i < 26; i++)
		assert_int_equal(t.mem[i], (98 + per_iter_mib[i]) * MiB);
	/* idle gaps: h1, h2, x */
	assert_int_equal(s.ngaps, 3);
	assert_int_equal(s.gaps[0].buf, 19);
	assert_int_equal(s.gaps[0].after_op, 4);
	assert_int_equal(s.gaps[0].before_op, 15);
	assert_int_equal(s.gaps[0].ops, 10);
	assert_int_equal(s.gaps[0].ns, 67000);
	assert_int_equal(s.gaps[0].producer, 3); /* bias_relu_fwd in place */
	assert_int_equal(s.gaps[1].buf, 20);
	assert_int_equal(s.gaps[1].ops, 3);
	assert_int_equal(s.gaps[1].ns, 9000);
	assert_int_equal(s.gaps[2].buf, 17);
	assert_int_equal(s.gaps[2].ops, 16);
	assert_int_equal(s.gaps[2].ns, 840000);
	assert_int_equal(s.gaps[2].producer, 0); /* the HtoD copy of the batch */
	assert_int_equal(s.site_skip, 0);        /* x (data.c) and h1 (mlp.c) share no frame */
	assert_string_equal(rr_site(&t.bufs[19], s.site_skip, 2, " < ", site, sizeof(site)),
	                    "mlp.c:88 (linear_forward) < mlp.c:142 (train_step)");
	/* trace fields beyond the model: raw durations and streams survive the
	 * graph's defaults */
	assert_int_equal(rr_op_ns(&t.ops[23]), -1);
	assert_string_equal(t.ops[23].via, "cudaLaunchHostFunc");
	assert_int_equal(t.ops[0].stream, 2);
	assert_string_equal(t.ops[0].copy, "HtoD");
	assert_int_equal(t.info->cupti_kernels, 20);
	assert_int_equal(t.info->cupti_launches, 20);
	assert_string_equal(t.info->device, "simcuda");
	rr_stats_free(&s);
	rr_trace_free(&t);
}

static void test_mlp3_plan(void **state)
{
	struct rr_trace t;
	struct rr_plan p;
	char err[512];
	(void)state;

	assert_int_equal(rr_load_trace(FIX, &t, err, sizeof(err)), 0);
	assert_int_equal(rr_load_plan(PLAN, &t, &p, err, sizeof(err)), 0);
	assert_string_equal(p.planner, "hand");
	assert_int_equal(p.budget, 140 * MiB);
	assert_int_equal(p.peak_before, 154 * MiB);
	assert_int_equal(p.peak_after, 138 * MiB);
	assert_int_equal(p.recompute_ns, 270000);
	assert_int_equal(p.nevicts, 2);
	assert_int_equal(p.evicts[0].buf, 19);
	assert_int_equal(p.evicts[0].after_op, 4);
	assert_int_equal(p.evicts[0].before_op, 15);
	assert_int_equal(p.evicts[1].after_op, 15);
	assert_int_equal(p.evicts[1].before_op, 17);
	assert_int_equal(p.nrebuilds, 2);
	assert_int_equal(p.rebuilds[0].before_op, 15);
	assert_int_equal(p.rebuilds[0].nreplay, 2);
	assert_int_equal(p.rebuilds[0].replay[0], 2);
	assert_int_equal(p.rebuilds[0].replay[1], 3);
	assert_int_equal(p.rebuilds[0].cost_ns, 135000);
	assert_int_equal(p.rebuilds[1].before_op, 17);
	static const int per_iter_mib[26] = {8,  8,  24, 24, 40, 24, 24, 24, 24, 24, 24, 24, 40,
	                                     40, 24, 40, 40, 40, 24, 24, 0,  0,  0,  0,  0,  0};
	for (int i = 0; i < 26; i++)
		assert_int_equal(p.mem[i], (98 + per_iter_mib[i]) * MiB);
	rr_plan_free(&p);
	rr_trace_free(&t);
}

static void test_export_roundtrip(void **state)
{
	char out[] = "/tmp/rr-graph-XXXXXX", err[512];
	struct pl_graph *a = NULL, *b = NULL;
	struct rr_trace t;
	int fd = mkstemp(out);
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rr_load_trace(FIX, &t, err, sizeof(err)), 0);
	assert_int_equal(rr_export_graph(&t, out, err, sizeof(err)), 0);
	rr_trace_free(&t);
	assert_int_equal(pl_graph_load_trace(FIX, &a, err, sizeof(err)), PL_OK);
	assert_int_equal(pl_graph_load_json(out, &b, err, sizeof(err)), PL_OK);
	unlink(out);
	assert_int_equal(b->nops, a->nops);
	assert_int_equal(b->nbufs, a->nbufs);
	assert_int_equal(b->nrefs, a->nrefs);
	assert_true(b->hash == a->hash);
	assert_int_equal(b->baseline_peak, a->baseline_peak);
	for (int i = 0; i < a->nops; i++) {
		assert_string_equal(b->ops[i].name, a->ops[i].name);
		assert_int_equal(b->ops[i].duration_ns, a->ops[i].duration_ns);
		assert_int_equal(b->ops[i].replayable, a->ops[i].replayable);
		assert_int_equal(b->ops[i].nrefs, a->ops[i].nrefs);
		assert_int_equal(b->live[i], a->live[i]);
	}
	for (uint32_t r = 0; r < a->nrefs; r++) {
		assert_int_equal(b->refs[r].buf, a->refs[r].buf);
		assert_int_equal(b->refs[r].ver, a->refs[r].ver);
		assert_int_equal(b->refs[r].flags, a->refs[r].flags);
	}
	for (int i = 0; i < a->nbufs; i++) {
		assert_int_equal(b->bufs[i].size, a->bufs[i].size);
		assert_int_equal(b->bufs[i].rounded, a->bufs[i].rounded);
		assert_int_equal(b->bufs[i].alloc_at, a->bufs[i].alloc_at);
		assert_int_equal(b->bufs[i].free_at, a->bufs[i].free_at);
		assert_int_equal(b->bufs[i].persistent, a->bufs[i].persistent);
		assert_int_equal(b->bufs[i].small, a->bufs[i].small);
	}
	pl_graph_free(a);
	pl_graph_free(b);
}

/* A plan the planner itself makes for mlp3 (greedy, 140 MiB) reads back
 * into the report consistently: it fits, evicts something, and the
 * rebuild costs add up to the evaluator's recompute time. */
static void test_planner_made_plan(void **state)
{
	char out[] = "/tmp/rr-plan-XXXXXX", err[512];
	struct pl_graph *g = NULL;
	struct pl_plan *pp = NULL;
	struct pl_options o;
	struct pl_result res;
	struct rr_trace t;
	struct rr_plan p;
	int fd = mkstemp(out);
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pl_graph_load_trace(FIX, &g, err, sizeof(err)), PL_OK);
	pl_options_default(&o);
	o.planner = PL_PLANNER_GREEDY;
	assert_int_equal(pl_plan_make(g, 140 * MiB, &o, &pp, &res), PL_OK);
	assert_int_equal(pl_plan_save_json(pp, out, err, sizeof(err)), PL_OK);
	assert_int_equal(rr_load_trace(FIX, &t, err, sizeof(err)), 0);
	assert_int_equal(rr_load_plan(out, &t, &p, err, sizeof(err)), 0);
	unlink(out);
	assert_true(p.peak_after <= 140 * MiB);
	assert_int_equal(p.peak_before, 154 * MiB);
	assert_true(p.nevicts > 0);
	int64_t cost = 0;
	for (int i = 0; i < p.nrebuilds; i++)
		cost += p.rebuilds[i].cost_ns;
	assert_int_equal(cost, p.recompute_ns);
	for (int i = 0; i < p.nevicts; i++) {
		assert_false(t.bufs[p.evicts[i].buf].small);
		assert_true(p.evicts[i].before_op < 0 ||
		            p.evicts[i].before_op > p.evicts[i].after_op);
	}
	rr_plan_free(&p);
	rr_trace_free(&t);
	pl_plan_free(pp);
	pl_graph_free(g);
}

/* A graph file (the report reads one as it reads a trace): one 4 MiB
 * persistent buffer, one 4 MiB activation used at ops 0, 3, 4 and 9
 * (gaps of 2 and 4 ops), 10 ops of 1 us each except op 6 (unknown). */
static void synthetic(struct rr_trace *t)
{
	char path[] = "/tmp/rr-synth-XXXXXX", err[512];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	assert_non_null(f);
	fprintf(f, "{\"format\": \"remat-graph\", \"version\": 1, \"name\": \"synthetic\", "
	           "\"granularity\": 2097152,\n"
	           " \"buffers\": [{\"id\": 0, \"size\": 4194304, \"persistent\": true,"
	           " \"alloc_at\": -1, \"free_at\": -1},\n"
	           "  {\"id\": 1, \"size\": 4194304, \"alloc_at\": 0, \"free_at\": -1}],\n"
	           " \"ops\": [");
	for (int i = 0; i < 10; i++) {
		bool act = i == 0 || i == 3 || i == 4 || i == 9;
		fprintf(f,
		        "%s{\"i\": %d, \"name\": \"k\", \"duration_ns\": %d, \"reads\": [%d],"
		        " \"writes\": [%s]}",
		        i ? ",\n  " : "", i, i == 6 ? -1 : 1000, act, i == 0 ? "1" : "");
	}
	fprintf(f, "]}\n");
	fclose(f);
	int rc = rr_load_trace(path, t, err, sizeof(err));
	unlink(path);
	if (rc)
		fail_msg("%s", err);
	assert_false(t->info->is_trace);
	assert_int_equal(t->period, 10);
	assert_int_equal(t->duration_ns, 9000);
}

/* A model built by hand around a given memory curve (no loader). */
static void hand_trace(struct rr_trace *t, struct pl_graph *g, struct pl_op *ops, int nops,
                       struct pl_buffer *bufs, int nbufs, int64_t *mem)
{
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < nops; i++)
		ops[i] = (struct pl_op){.name = "k",
		                        .via = "v",
		                        .copy = "",
		                        .why_not = "",
		                        .kind = PL_KIND_KERNEL,
		                        .replayable = 1};
	g->ops = ops;
	g->nops = nops;
	g->bufs = bufs;
	g->nbufs = nbufs;
	g->live = mem;
	*t = (struct rr_trace){.g = g,
	                       .info = &g->trace,
	                       .ops = ops,
	                       .nops = nops,
	                       .bufs = bufs,
	                       .nbufs = nbufs,
	                       .mem = mem,
	                       .period = nops};
}

static void test_gap_longest(void **state)
{
	struct rr_trace t;
	struct rr_stats s;
	(void)state;

	synthetic(&t);
	rr_analyze(&t, &s);
	assert_int_equal(s.ngaps, 1);
	assert_int_equal(s.gaps[0].buf, 1);
	assert_int_equal(s.gaps[0].after_op, 4);
	assert_int_equal(s.gaps[0].before_op, 9);
	assert_int_equal(s.gaps[0].ops, 4);
	assert_int_equal(s.gaps[0].ns, 3000); /* ops 5..8, op 6 unknown */
	assert_int_equal(s.kernels[0].total_ns, 9000);
	assert_int_equal(s.unknown_duration_ops, 1);
	rr_stats_free(&s);
	rr_trace_free(&t);
}

/* Draws the 20 x 4 chart of a 4-op trace holding one 4 MiB persistent
 * buffer, whose memory curve is mem; returns the text (free it). */
static char *draw_chart(const int64_t mem[4], bool unicode)
{
	static struct pl_op ops[4];
	static struct pl_buffer bufs[1] = {
	    {.size = 4 * MiB, .rounded = 4 * MiB, .persistent = 1, .alloc_at = -1, .free_at = -1}};
	int64_t m[4] = {mem[0], mem[1], mem[2], mem[3]};
	struct pl_graph g;
	struct rr_trace t;
	struct rr_stats s;
	struct rr_style st = {.color = false, .unicode = unicode, .width = 20, .height = 4};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	hand_trace(&t, &g, ops, 4, bufs, 1, m);
	rr_analyze(&t, &s);
	rr_print_chart(f, &t, &s, NULL, &st);
	fclose(f);
	rr_stats_free(&s);
	return text;
}

/* The ASCII chart drawn by hand: 4 MiB persistent, ops 1 and 2 at
 * 8 MiB; 4 rows of 2 MiB, 20 columns (5 per op). */
static void test_chart_ascii(void **state)
{
	const int64_t mem[4] = {4 * MiB, 8 * MiB, 8 * MiB, 4 * MiB};
	(void)state;

	char *text = draw_chart(mem, false);
	const char *want = "             # per-iteration  = persistent\n"
	                   "     8.0 MiB +     ##########     \n"
	                   "             |     ##########     \n"
	                   "     4.0 MiB +====================\n"
	                   "             |====================\n"
	                   "         0 B +--------------------\n"
	                   "             op 0      2         3\n";
	assert_string_equal(text, want);
	free(text);
}

/* The Unicode chart draws the top of the per-iteration layer in eighths:
 * op 1 at 7 MiB fills half of the 6-8 MiB row. */
static void test_chart_unicode(void **state)
{
	const int64_t mem[4] = {4 * MiB, 7 * MiB, 8 * MiB, 4 * MiB};
	(void)state;

	char *text = draw_chart(mem, true);
	const char *want = "             \u2588 per-iteration  \u2592 persistent\n"
	                   "     8.0 MiB \u2524     \u2584\u2584\u2584\u2584\u2584"
	                   "\u2588\u2588\u2588\u2588\u2588     \n"
	                   "             \u2502     \u2588\u2588\u2588\u2588\u2588"
	                   "\u2588\u2588\u2588\u2588\u2588     \n"
	                   "     4.0 MiB \u2524\u2592\u2592\u2592\u2592\u2592\u2592\u2592"
	                   "\u2592\u2592\u2592\u2592\u2592\u2592\u2592\u2592\u2592\u2592"
	                   "\u2592\u2592\u2592\n"
	                   "             \u2502\u2592\u2592\u2592\u2592\u2592\u2592\u2592"
	                   "\u2592\u2592\u2592\u2592\u2592\u2592\u2592\u2592\u2592\u2592"
	                   "\u2592\u2592\u2592\n"
	                   "         0 B \u2514\u2500\u2500\u2500\u2500\u2500\u2500\u2500"
	                   "\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500"
	                   "\u2500\u2500\u2500\n"
	                   "             op 0      2         3\n";
	assert_string_equal(text, want);
	free(text);
}

/* The allocator wrapper every activation goes through is not worth a
 * column: the tables start at the first frame that tells buffers apart. */
static void test_site_skip(void **state)
{
#define ACT(stack)                                                                                 \
	{                                                                                          \
		.size = 4 * MiB, .rounded = 4 * MiB, .alloc_at = 0, .free_at = -1, .site = stack   \
	}
	static struct pl_op ops[1];
	struct pl_buffer bufs[3] = {
	    ACT("alloc_wrapper+0x22 (app)\nlayer1+0x10 (app)\nmain+0x5 (app)"),
	    ACT("alloc_wrapper+0x22 (app)\nlayer2+0x10 (app)\nmain+0x5 (app)"),
	    ACT("alloc_wrapper+0x22 (app)")};
	int64_t mem[1] = {12 * MiB};
	struct pl_graph g;
	struct rr_trace t;
	struct rr_stats s;
	char site[128];
	(void)state;

	hand_trace(&t, &g, ops, 1, bufs, 2, mem);
	rr_analyze(&t, &s);
	assert_int_equal(s.site_skip, 1);
	assert_string_equal(rr_site(&bufs[1], s.site_skip, 2, " < ", site, sizeof(site)),
	                    "layer2+0x10 (app) < main+0x5 (app)");
	rr_stats_free(&s);
	/* a buffer whose only frame is the wrapper keeps it: nothing is skipped */
	t.nbufs = 3;
	rr_analyze(&t, &s);
	assert_int_equal(s.site_skip, 0);
	assert_string_equal(rr_site(&bufs[2], 5, 2, " < ", site, sizeof(site)),
	                    "alloc_wrapper+0x22 (app)");
	rr_stats_free(&s);
	/* libc's start-up frames under main are left out */
	struct pl_buffer b = ACT("main+0x163a (gpt)\n__libc_init_first+0x8a (libc.so.6)\n"
	                         "__libc_start_main+0x85 (libc.so.6)\n_start+0x21 (gpt)");
	assert_string_equal(rr_site(&b, 0, 3, " < ", site, sizeof(site)), "main+0x163a (gpt)");
}

/* The timeline of mlp3 with its plan, read back with jansson and checked
 * against the trace: each op once, on its stream's track, in order and
 * for its duration; one thread name per stream; the memory counters equal
 * the trace's curve and the plan's; every eviction and rebuild a slice,
 * each replay inside its rebuild. */
static void test_perfetto(void **state)
{
	char out[] = "/tmp/rr-timeline-XXXXXX", err[512];
	struct rr_trace t;
	struct rr_plan p;
	json_error_t je;
	int fd = mkstemp(out);
	(void)state;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rr_load_trace(FIX, &t, err, sizeof(err)), 0);
	assert_int_equal(rr_load_plan(PLAN, &t, &p, err, sizeof(err)), 0);
	assert_int_equal(rr_write_perfetto(out, &t, &p, err, sizeof(err)), 0);
	json_t *root = json_load_file(out, 0, &je);
	unlink(out);
	assert_non_null(root);
	json_t *events = json_object_get(root, "traceEvents"), *e;
	assert_true(json_is_array(events));

	int seen_op[26] = {0}, named[8] = {0}, nbase = 0, nplan = 0, nevict = 0, nrebuild = 0;
	int nreplay = 0, nstep = 0, last_op = -1;
	double end_of_last = 0, rb_from = -1, rb_to = -1;
	size_t k;
	json_array_foreach(events, k, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *cat = json_string_value(json_object_get(e, "cat"));
		json_t *args = json_object_get(e, "args");
		int tid = (int)json_integer_value(json_object_get(e, "tid"));
		double ts = json_number_value(json_object_get(e, "ts"));
		double dur = json_number_value(json_object_get(e, "dur"));
		assert_non_null(ph);
		assert_int_equal(json_integer_value(json_object_get(e, "pid")), 1);
		if (!strcmp(ph, "M")) {
			if (!strcmp(name, "thread_name")) {
				char want[32];
				assert_true(tid > 0 && tid < 8);
				snprintf(want, sizeof(want), "stream %d", tid - 1);
				assert_string_equal(
				    json_string_value(json_object_get(args, "name")), want);
				named[tid]++;
			}
			continue;
		}
		if (!strcmp(ph, "C")) {
			int64_t v = json_integer_value(json_object_get(args, "bytes"));
			if (!strcmp(name, RR_COUNTER_BASE)) {
				assert_int_equal(v, t.mem[nbase < 26 ? nbase : 25]);
				nbase++;
			} else {
				assert_string_equal(name, RR_COUNTER_PLAN);
				assert_int_equal(v, p.mem[nplan < 26 ? nplan : 25]);
				nplan++;
			}
			continue;
		}
		assert_string_equal(ph, "X");
		if (!strcmp(cat, "evict")) {
			const struct rr_evict *ev = &p.evicts[nevict++];
			assert_int_equal(json_integer_value(json_object_get(args, "buffer")),
			                 ev->buf);
			assert_int_equal(json_integer_value(json_object_get(args, "after_op")),
			                 ev->after_op);
			assert_true(ts >= end_of_last - 1e-9 && dur == 0);
		} else if (!strcmp(cat, "rebuild")) {
			const struct rr_rebuild *rb = &p.rebuilds[nrebuild++];
			assert_int_equal(json_integer_value(json_object_get(args, "before_op")),
			                 rb->before_op);
			assert_true(dur * 1000 == (double)rb->cost_ns);
			rb_from = ts;
			rb_to = ts + dur;
		} else if (!json_object_get(args, "op")) {
			/* a rebuild's other steps (map, save, restore, release) */
			nstep++;
			assert_true(ts >= rb_from - 1e-9 && ts <= rb_to + 1e-9 && dur == 0);
			assert_true(json_is_integer(json_object_get(args, "buffer")));
		} else if (!strcmp(cat, "replay")) {
			nreplay++;
			assert_true(ts >= rb_from - 1e-9 && ts + dur <= rb_to + 1e-9);
		} else {
			int op = (int)json_integer_value(json_object_get(args, "op"));
			const struct pl_op *o = &t.ops[op];
			assert_int_equal(op, last_op + 1);
			last_op = op;
			seen_op[op]++;
			assert_string_equal(name, o->name);
			assert_int_equal(tid, o->stream + 1);
			assert_true(dur * 1000 == (double)o->duration_ns);
			assert_true(ts >= end_of_last - 1e-9);
			/* a rebuild runs right before the op that needs it */
			if (op == 15)
				assert_true(ts >= rb_to - 1e-9);
			end_of_last = ts + dur;
			assert_int_equal(json_array_size(json_object_get(args, "reads")) +
			                     json_array_size(json_object_get(args, "writes")),
			                 o->nrefs);
		}
	}
	for (int i = 0; i < 26; i++)
		assert_int_equal(seen_op[i], 1);
	assert_int_equal(named[2] + named[3], 2); /* streams 1 and 2, named once each */
	assert_int_equal(named[1] + named[4] + named[5], 0);
	assert_int_equal(nbase, 27); /* one sample per op and the end */
	assert_int_equal(nplan, 27);
	assert_int_equal(nevict, p.nevicts);
	assert_int_equal(nrebuild, p.nrebuilds);
	assert_int_equal(nreplay, 4);
	assert_int_equal(nstep, 2); /* each rebuild maps #19 first */
	/* the iteration with the plan lasts its duration plus the rebuilds */
	assert_true(end_of_last * 1000 >= (double)(t.g->iteration_ns + p.recompute_ns) - 1);
	json_decref(root);
	rr_plan_free(&p);
	rr_trace_free(&t);
}

/* A pool's picture: a long-lived region the profile proved dead across
 * the boundary is an activation (its idle gap listed, its bytes out of
 * the persistent level, with the chunk it shares only with activations);
 * a live-across region no op touches is the pool's free space; a chunk
 * shared with a live-across region stays persistent.  Buffers: 0 weights
 * (live, used at ops 0 and 5), 1 an activation region (dead across,
 * written at op 0, read at op 5), 2 another (op 1 and 2), 3 free space. */
static void test_long_lived_regions(void **state)
{
	static struct pl_op ops[6];
	static struct pl_buffer bufs[4] = {
	    {.size = 4 * MiB, .rounded = 4 * MiB, .persistent = 1, .alloc_at = -1, .free_at = -1},
	    {.size = 8 * MiB,
	     .rounded = 6 * MiB,
	     .persistent = 1,
	     .dead_across = 1,
	     .alloc_at = -1,
	     .free_at = -1},
	    {.size = 2 * MiB,
	     .rounded = 2 * MiB,
	     .persistent = 1,
	     .dead_across = 1,
	     .alloc_at = -1,
	     .free_at = -1},
	    {.size = 3 * MiB, .rounded = 2 * MiB, .persistent = 1, .alloc_at = -1, .free_at = -1},
	};
	static struct pl_ref refs[] = {
	    {0, 0, PL_REF_READ}, {1, 0, PL_REF_WRITE}, {2, 0, PL_REF_WRITE},
	    {2, 0, PL_REF_READ}, {0, 0, PL_REF_READ},  {1, 0, PL_REF_READ},
	};
	static const int op_of[] = {0, 0, 1, 2, 5, 5};
	static struct pl_shared shared[2] = {{2 * MiB, 0, 2}, {1 * MiB, 2, 2}};
	static int32_t shared_bufs[4] = {1, 2, 3, 0};
	int64_t mem[6] = {19 * MiB, 19 * MiB, 19 * MiB, 19 * MiB, 19 * MiB, 19 * MiB};
	struct pl_graph g;
	struct rr_trace t;
	struct rr_stats s;
	(void)state;

	hand_trace(&t, &g, ops, 6, bufs, 4, mem);
	g.refs = refs;
	g.nrefs = 6;
	for (uint32_t r = 0; r < 6; r++) {
		struct pl_op *o = &ops[op_of[r]];
		if (!o->nrefs)
			o->ref_off = r;
		o->nrefs++;
	}
	g.shared = shared;
	g.nshared = 2;
	g.shared_bufs = shared_bufs;
	rr_analyze(&t, &s);
	assert_int_equal(s.nregions_dead, 2);
	assert_int_equal(s.regions_dead, 8 * MiB);
	assert_int_equal(s.npersistent_large, 2);
	assert_int_equal(s.persistent_large, 6 * MiB);
	assert_int_equal(s.nuntouched, 1);
	assert_int_equal(s.untouched, 3 * MiB);
	assert_int_equal(s.nshared_dead, 1);
	assert_int_equal(s.shared_dead, 2 * MiB);
	assert_int_equal(s.nshared_live, 1);
	assert_int_equal(s.persistent_level, 7 * MiB); /* 6 MiB of buffers, 1 shared */
	assert_int_equal(s.ngaps, 1); /* the weights' gap is not listed; 2 has none */
	assert_int_equal(s.gaps[0].buf, 1);
	assert_int_equal(s.gaps[0].after_op, 0);
	assert_int_equal(s.gaps[0].before_op, 5);
	assert_string_equal(rr_buf_role(&bufs[1]), "long-lived, dead across the boundary");
	rr_stats_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fmt),
	    cmocka_unit_test(test_mlp3_figures),
	    cmocka_unit_test(test_mlp3_plan),
	    cmocka_unit_test(test_export_roundtrip),
	    cmocka_unit_test(test_planner_made_plan),
	    cmocka_unit_test(test_gap_longest),
	    cmocka_unit_test(test_chart_ascii),
	    cmocka_unit_test(test_chart_unicode),
	    cmocka_unit_test(test_site_skip),
	    cmocka_unit_test(test_perfetto),
	    cmocka_unit_test(test_long_lived_regions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
