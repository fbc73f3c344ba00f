/*
 * test_plan_load.c — plan files as run mode reads them: a valid plan
 * becomes the right CSR arrays, and every kind of damage is refused with
 * one message naming the file and the problem.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "acq_testutil.h"
#include "internal.h"

#define HASH  0x2d9addb2c6334337ull
#define NOPS  10
#define BUDG  3211264
#define NBUFS 8

static char dir[4096], path[4200];

static int setup(void **state)
{
	(void)state;
	acq_mkdtemp(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.plan.json", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	acq_rmtree(dir);
	return 0;
}

/* A plan of the given format version as planner/formats/plan_json.c writes it,
 * with members replaceable, its checksum matching. */
static const char *plan_text_v(int version, const char *hash, const char *nops, const char *budget,
                               const char *ops, const char *extra)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
	         "{\n  \"format\": \"remat-plan\",\n  \"version\": %d,\n  \"graph_hash\": \"%s\",\n"
	         "  \"nops\": %s,\n  \"budget\": %s,\n  \"planner\": \"ilp\",\n"
	         "  \"baseline_peak\": 4587520,\n  \"peak\": 3145728,\n  \"recompute_ns\": 5000,\n"
	         "%s  \"ops\": %s,\n  \"end\": true\n}\n",
	         version, hash, nops, budget, extra, ops);
	return acq_seal(buf);
}

static const char *plan_text(const char *hash, const char *nops, const char *budget,
                             const char *ops, const char *extra)
{
	return plan_text_v(1, hash, nops, budget, ops, extra);
}

static const char *good_ops = "[\n    {\"op\": 1, \"evict_after\": [3, 4]},\n"
                              "    {\"op\": 5, \"before\": [[\"map\", 3], [\"replay\", 1], "
                              "[\"release\", 7]]},\n"
                              "    {\"op\": 9, \"before\": [[\"save\", 2], [\"restore\", 2]], "
                              "\"evict_after\": [0]}\n  ]";

static void test_valid_plan(void **state)
{
	(void)state;
	acq_write(path, 0644, "%s",
	          plan_text("0x2d9addb2c6334337", "10", "3211264", good_ops,
	                    "  \"iteration_ns\": 100000,\n"));
	struct pl_plan *p = NULL;
	char err[1024] = "";
	assert_int_equal(acq_plan_read(path, HASH, NOPS, BUDG, NBUFS, &p, err, sizeof(err)), 0);
	assert_non_null(p);
	assert_int_equal(p->nops, NOPS);
	assert_true(p->graph_hash == HASH);
	assert_int_equal(p->budget, BUDG);
	assert_int_equal(p->peak, 3145728);
	assert_int_equal(p->baseline_peak, 4587520);
	assert_int_equal(p->recompute_ns, 5000);
	assert_int_equal(p->iteration_ns, 100000);
	assert_string_equal(p->planner, "ilp");
	/* CSR: steps before op 5 are the three listed, before op 9 two; evictions
	 * after op 1 and op 9. */
	uint32_t so[NOPS + 1] = {0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 5};
	uint32_t eo[NOPS + 1] = {0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 3};
	for (int i = 0; i <= NOPS; i++) {
		assert_int_equal(p->step_off[i], so[i]);
		assert_int_equal(p->evict_off[i], eo[i]);
	}
	int kinds[5] = {PL_STEP_MAP, PL_STEP_REPLAY, PL_STEP_RELEASE, PL_STEP_SAVE,
	                PL_STEP_RESTORE};
	int args[5] = {3, 1, 7, 2, 2};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(p->steps[i].kind, kinds[i]);
		assert_int_equal(p->steps[i].arg, args[i]);
	}
	assert_int_equal(p->evict[0], 3);
	assert_int_equal(p->evict[1], 4);
	assert_int_equal(p->evict[2], 0);
	pl_plan_free(p);
}

static void test_empty_plan_and_unknown_nbufs(void **state)
{
	(void)state;
	acq_write(path, 0644, "%s", plan_text("0x2d9addb2c6334337", "10", "3211264", "[]", ""));
	struct pl_plan *p = NULL;
	char err[1024] = "";
	assert_int_equal(acq_plan_read(path, HASH, NOPS, BUDG, -1, &p, err, sizeof(err)), 0);
	for (int i = 0; i <= NOPS; i++)
		assert_int_equal(p->step_off[i] + p->evict_off[i], 0);
	assert_int_equal(p->iteration_ns, -1);
	pl_plan_free(p);
	/* Without a buffer count, a large id is accepted (the engine checks). */
	acq_write(path, 0644, "%s",
	          plan_text("0x2d9addb2c6334337", "10", "3211264",
	                    "[{\"op\": 0, \"evict_after\": [100]}]", ""));
	assert_int_equal(acq_plan_read(path, HASH, NOPS, BUDG, -1, &p, err, sizeof(err)), 0);
	assert_int_equal(p->evict[0], 100);
	pl_plan_free(p);
}

/* text refused with a message naming the file and containing expect;
 * want_rc -1 for any refusal, -2 for "changed since written". */
static void expect_refusal(const char *text, int want_rc, const char *expect)
{
	acq_write(path, 0644, "%s", text);
	struct pl_plan *p = (struct pl_plan *)1;
	char err[1024] = "";
	int rc = acq_plan_read(path, HASH, NOPS, BUDG, NBUFS, &p, err, sizeof(err));
	if (rc == 0 || (want_rc == -2 && rc != -2) || !strstr(err, expect) ||
	    strncmp(err, path, strlen(path)))
		fail_msg("expected rc %d and '%s', got rc %d: '%s'", want_rc, expect, rc, err);
	assert_null(p);
}

static void expect_rejected(const char *text, const char *expect)
{
	expect_refusal(text, -1, expect);
}

static void test_invalid_plans(void **state)
{
	(void)state;
	const char *H = "0x2d9addb2c6334337";
	expect_rejected("{\"format\": \"remat-plan\", ", "not valid JSON");
	expect_rejected("[1, 2]", "expected a JSON object");
	expect_rejected("{\"format\": \"remat-trace\", \"end\": true}", "not a plan");
#define BAD(hash, nops, budget, ops, extra, expect)                                                \
	expect_rejected(plan_text(hash, nops, budget, ops, extra), expect)
	BAD("1234", "10", "3211264", "[]", "", "must be a hex string");
	BAD("0x12zz", "10", "3211264", "[]", "", "bad hex string");
	BAD("0x1234", "10", "3211264", "[]", "",
	    "plan made for graph 0x0000000000001234, this graph is 0x2d9addb2c6334337");
	BAD(H, "11", "3211264", "[]", "", "plan has 11 ops, this iteration 10");
	BAD(H, "\"10\"", "3211264", "[]", "", "member \"nops\" must be an integer");
	BAD(H, "10", "1000000", "[]", "",
	    "plan made for a budget of 1000000 bytes, this run has 3211264");
	BAD(H, "10", "3211264", "{}", "", "missing member \"ops\"");
	BAD(H, "10", "3211264", "[{\"op\": 10}]", "", "$.ops[0]: op 10 out of range (0..9)");
	BAD(H, "10", "3211264", "[{\"op\": -1}]", "", "out of range");
	BAD(H, "10", "3211264", "[{\"op\": 4}, {\"op\": 4}]", "",
	    "$.ops[1]: op 4 after op 4: positions must increase");
	BAD(H, "10", "3211264", "[{\"before\": []}]", "", "missing member \"op\"");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"jump\", 1]]}]", "",
	    "$.ops[0].before[0]: expected [\"map\"");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"map\", 1, 2]]}]", "",
	    "expected [\"map\"");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"map\", \"1\"]]}]", "",
	    "expected [\"map\"");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"replay\", 2]]}]", "",
	    "replay 2: not an earlier op than 2");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"map\", 8]]}]", "",
	    "map 8: no such buffer (the trace has 8)");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"restore\", -1]]}]", "",
	    "no such buffer");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"evict_after\": [9]}]", "",
	    "$.ops[0].evict_after[0]: not a buffer id");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"evict_after\": [\"x\"]}]", "", "not a buffer id");
	BAD(H, "10", "3211264", "[{\"op\": 2, \"before\": 3}]", "",
	    "member \"before\" must be an array");
	BAD(H, "10", "3211264", "[]", "  \"iteration_ns\": -5,\n",
	    "member \"iteration_ns\" is -5, outside -1..9007199254740992");
	/* sizes and times past the planner's 2^53 */
	BAD(H, "10", "3211264", "[]", "  \"iteration_ns\": 9007199254740993,\n",
	    "member \"iteration_ns\" is 9007199254740993, outside -1..9007199254740992");
	BAD(H, "10", "3211264", "[]", "  \"baseline_peak\": 9223372036854775807,\n",
	    "member \"baseline_peak\" is 9223372036854775807");
#undef BAD
}

/* Version, end marker, peak over budget: the good text edited (and sealed
 * again: the edit is what is refused, not the checksum). */
static void test_invalid_versions(void **state)
{
	(void)state;
	const char *H = "0x2d9addb2c6334337";
	char t[4096];
	snprintf(t, sizeof(t), "%s", plan_text(H, "10", "3211264", "[]", ""));
	char *v = strstr(t, "\"version\": 1");
	v[11] = '4';
	expect_rejected(t, "plan version 4, this reader knows versions 1 to 3");
	/* What version 2 adds, in a version 1 file: not remat-plan's. */
	snprintf(t, sizeof(t), "%s",
	         plan_text(H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"stash\", 1]]}]", ""));
	expect_rejected(
	    t, "$.ops[0].before[0]: step \"stash\" in a version 1 plan (it needs version 2)");
	/* Offload (version 3): this runtime does not carry it out. */
	snprintf(t, sizeof(t), "%s",
	         plan_text_v(2, H, "10", "3211264", "[{\"op\": 2, \"before\": [[\"offload\", 1]]}]",
	                     ""));
	expect_rejected(t, "$.ops[0].before[0]: step \"offload\" in a version 2 plan (offload "
	                   "needs version 3)");
	snprintf(t, sizeof(t), "%s",
	         plan_text(H, "10", "3211264", "[]", "  \"unmapped_at_boundary\": [1],\n"));
	expect_rejected(t, "$.unmapped_at_boundary: in a version 1 plan (it needs version 2)");
	snprintf(t, sizeof(t), "%s",
	         plan_text_v(2, H, "10", "3211264", "[]", "  \"unmapped_at_boundary\": [1, 8],\n"));
	expect_rejected(t, "$.unmapped_at_boundary: entry 1: not a buffer id");
	/* Parking (version 3) in an older file, or naming no buffer. */
	snprintf(t, sizeof(t), "%s",
	         plan_text_v(2, H, "10", "3211264", "[]", "  \"parked_on_host\": [1],\n"));
	expect_rejected(t, "$.parked_on_host: in a version 2 plan (it needs version 3)");
	snprintf(t, sizeof(t), "%s",
	         plan_text_v(3, H, "10", "3211264", "[]", "  \"parked_on_host\": [8],\n"));
	expect_rejected(t, "$.parked_on_host: entry 0: not a buffer id");
	snprintf(t, sizeof(t), "%s", plan_text(H, "10", "3211264", "[]", ""));
	memcpy(strstr(t, "\"end\": true"), "\"end\": 0   ", 11);
	expect_rejected(t, "no \"end\": true member (truncated plan?)");
	snprintf(t, sizeof(t), "%s", plan_text(H, "10", "3000000", "[]", ""));
	/* peak 3145728 > budget 3000000 */
	acq_write(path, 0644, "%s", t);
	struct pl_plan *p;
	char err[1024];
	assert_int_equal(acq_plan_read(path, HASH, NOPS, 3000000, NBUFS, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "planned peak 3145728 bytes is over the budget of 3000000"));
}

/* Version 2: stashes and the boundary list are read. */
static void test_version2(void **state)
{
	(void)state;
	char t[4096];
	snprintf(t, sizeof(t), "%s",
	         plan_text_v(2, "0x2d9addb2c6334337", "10", "3211264",
	                     "[{\"op\": 2, \"before\": [[\"stash\", 1]]}, {\"op\": 6, \"before\": "
	                     "[[\"unstash\", 1], [\"replay\", 2]]}]",
	                     "  \"unmapped_at_boundary\": [5, 6],\n"));
	acq_write(path, 0644, "%s", t);
	struct pl_plan *p = NULL;
	char err[1024] = "";
	assert_int_equal(acq_plan_read(path, HASH, NOPS, BUDG, NBUFS, &p, err, sizeof(err)), 0);
	assert_int_equal(p->steps[p->step_off[2]].kind, PL_STEP_STASH);
	assert_int_equal(p->steps[p->step_off[6]].kind, PL_STEP_UNSTASH);
	assert_int_equal(p->nboundary, 2);
	assert_int_equal(p->boundary[0], 5);
	assert_int_equal(p->boundary[1], 6);
	pl_plan_free(p);
	/* version 3: the parked list is read */
	snprintf(t, sizeof(t), "%s",
	         plan_text_v(3, "0x2d9addb2c6334337", "10", "3211264", "[]",
	                     "  \"offload_gbps\": 52,\n  \"parked_on_host\": [4, 7],\n"));
	acq_write(path, 0644, "%s", t);
	assert_int_equal(acq_plan_read(path, HASH, NOPS, BUDG, NBUFS, &p, err, sizeof(err)), 0);
	assert_int_equal(p->nparked, 2);
	assert_int_equal(p->parked[0], 4);
	assert_int_equal(p->parked[1], 7);
	pl_plan_free(p);
}

/* The checksum (docs/plan-format.md): a changed byte, a missing member, a
 * member in another place; -2 says "changed since written". */
static void expect_changed(const char *text, const char *expect)
{
	expect_refusal(text, -2, expect);
}

static void test_checksum(void **state)
{
	(void)state;
	const char *H = "0x2d9addb2c6334337";
	char t[8192];
	/* every single-digit edit of a step is caught */
	snprintf(t, sizeof(t), "%s", plan_text(H, "10", "3211264", good_ops, ""));
	char *d = strstr(t, "[\"replay\", 1]") + 11;
	*d = '0';
	expect_changed(t, "checksum does not match the content (0x");
	assert_non_null(strstr(t, "\"checksum\": \"0x"));
	/* ... so is a change where nothing reads it (the planner name) */
	snprintf(t, sizeof(t), "%s", plan_text(H, "10", "3211264", good_ops, ""));
	memcpy(strstr(t, "\"ilp\""), "\"ilq\"", 5);
	expect_changed(t, "the plan changed after remat-plan wrote it");
	/* and a changed checksum */
	snprintf(t, sizeof(t), "%s", plan_text(H, "10", "3211264", good_ops, ""));
	char *c = strstr(t, "\"checksum\": \"0x") + 15;
	*c = *c == '0' ? '1' : '0';
	expect_changed(t, "checksum does not match");
	/* a plan without one: older than checksums, or written by hand */
	char plain[1024];
	snprintf(plain, sizeof(plain),
	         "{\"format\": \"remat-plan\", \"version\": 1, \"graph_hash\": \"%s\", "
	         "\"nops\": 10, \"budget\": 3211264, \"ops\": [], \"end\": true}",
	         H);
	expect_changed(plain, "no checksum");
	/* the checksum must be the last member but "end" */
	snprintf(t, sizeof(t), "%s", acq_seal(plain));
	char *at = strstr(t, "\"checksum\"");
	char moved[8400];
	snprintf(moved, sizeof(moved), "%.*s\"end\": true, %.*s}", (int)(at - t), t, 32, at);
	expect_changed(moved, "no checksum");
	/* whitespace after the closing brace is not content */
	acq_write(path, 0644, "%s\n\n", acq_seal(plain));
	struct pl_plan *p;
	char err[1024];
	assert_int_equal(acq_plan_read(path, HASH, NOPS, BUDG, NBUFS, &p, err, sizeof(err)), 0);
	pl_plan_free(p);
}

static void test_missing_file(void **state)
{
	(void)state;
	struct pl_plan *p;
	char err[1024], nofile[4300];
	snprintf(nofile, sizeof(nofile), "%s/none.json", dir);
	assert_int_equal(acq_plan_read(nofile, HASH, NOPS, BUDG, NBUFS, &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "none.json: No such file or directory"));
}

static void test_trace_peek(void **state)
{
	(void)state;
	char tp[4300];
	snprintf(tp, sizeof(tp), "%s/trace.json", dir);
	acq_write(tp, 0644,
	          "{\"format\": \"remat-trace\", \"version\": 1, \"graph_hash\": "
	          "\"0x2d9addb2c6334337\", \"iteration\": {\"period\": 10, \"duration_ns\": 777}, "
	          "\"buffers\": [{}, {}, {}], \"ops\": [], \"end\": true}");
	struct acq_trace_info ti;
	char err[1024];
	assert_int_equal(acq_trace_peek(dir, &ti, err, sizeof(err)), 0);
	assert_true(ti.graph_hash == HASH);
	assert_int_equal(ti.nbufs, 3);
	assert_int_equal(ti.duration_ns, 777);
	acq_write(tp, 0644, "{\"format\": \"remat-plan\"}");
	assert_int_equal(acq_trace_peek(dir, &ti, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "trace.json: $.format: not a trace"));
}

/* dlopen's answer is kept for the process, so the missing-jansson path is
 * taken in a child that has not read JSON yet. */
static void test_jansson_missing(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		acq_json_soname("libjansson-not-there.so.4");
		struct pl_plan *p;
		char err[1024] = "";
		int rc = acq_plan_read(path, HASH, NOPS, BUDG, NBUFS, &p, err, sizeof(err));
		int ok =
		    rc == -1 && !strcmp(err, "run mode needs libjansson-not-there.so.4 (Debian: "
		                             "libjansson4) to read plans; running unmodified");
		if (!ok)
			fprintf(stderr, "child: rc %d err '%s'\n", rc, err);
		_exit(ok ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	/* First: a child forked after another test has loaded jansson would
	 * inherit it. */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_jansson_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_valid_plan, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_empty_plan_and_unknown_nbufs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_plans, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_versions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_version2, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_checksum, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trace_peek, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
