/*
 * test_acquire.c — acquire_begin/acquire_poll against fake planners
 * (shell scripts named by REMAT_PLANNER): a plan from the planner lands in
 * the cache and is found by the next acquisition without a planner run; a
 * damaged or mismatched cache entry is refused and re-planned; a planner
 * that crashes, says the budget is unreachable, hangs, fails or writes
 * garbage ends in ACQUIRE_FAILED with one message; the planner's
 * environment has no LD_PRELOAD and no REMAT_*.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <glob.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "acq_testutil.h"
#include "../../core/log.h"
#include "acquire.h"
#include "internal.h"

#define HASH 0x2d9addb2c6334337ull
#define NOPS 10
#define BUDG 3211264

static char dir[4096], trace[4200], cache[4200], planner[4200], entry[4400];

static void write_trace(uint64_t hash)
{
	char p[4400];
	snprintf(p, sizeof(p), "%s/trace.json", trace);
	acq_write(p, 0644,
	          "{\"format\": \"remat-trace\", \"version\": 1, \"graph_hash\": \"0x%016llx\", "
	          "\"iteration\": {\"period\": 10, \"duration_ns\": 100000}, "
	          "\"buffers\": [{}, {}, {}, {}, {}, {}, {}, {}], \"ops\": [], \"end\": true}",
	          (unsigned long long)hash);
}

/* A plan body for the fake planners and the cache. */
static const char *plan_json(uint64_t hash, int64_t budget, const char *budget_text)
{
	static char buf[1024];
	char b[32];
	snprintf(b, sizeof(b), "%lld", (long long)budget);
	snprintf(buf, sizeof(buf),
	         "{\"format\": \"remat-plan\", \"version\": 1, \"graph_hash\": \"0x%016llx\", "
	         "\"nops\": 10, \"budget\": %s, \"planner\": \"fake\", \"peak\": 3000000, "
	         "\"recompute_ns\": 5000, \"ops\": [{\"op\": 1, \"evict_after\": [3]}, "
	         "{\"op\": 5, \"before\": [[\"map\", 3], [\"replay\", 1]]}], \"end\": true}",
	         (unsigned long long)hash, budget_text ? budget_text : b);
	return acq_seal(buf);
}

/* Fake remat-plan: argv is TRACE --budget B --time-limit S -o OUT. */
static void fake_planner(const char *body)
{
	acq_write(planner, 0755,
	          "#!/bin/sh\n"
	          "trace=$1 budget=$3 limit=$5 out=$7\n"
	          "echo \"$*\" >> \"$trace/planner.args\"\n"
	          "%s\n",
	          body);
}

static void good_planner(void)
{
	char body[2048];
	snprintf(body, sizeof(body),
	         "env > \"$trace/child.env\"\n"
	         "echo 'planned peak: 2.86 MiB'\n"
	         "cat > \"$out\" <<'EOF'\n%s\nEOF\nexit 0",
	         plan_json(HASH, BUDG, NULL));
	fake_planner(body);
}

/* stderr into a file while f runs, returned (static buffer). */
static const char *stderr_of(int (*f)(void))
{
	static char buf[8192];
	char p[4400];
	snprintf(p, sizeof(p), "%s/stderr.txt", dir);
	fflush(stderr);
	int saved = dup(2), fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
	f();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	FILE *in = fopen(p, "r");
	size_t n = in ? fread(buf, 1, sizeof(buf) - 1, in) : 0;
	buf[n] = '\0';
	if (in)
		fclose(in);
	return buf;
}

/* What libremat asks for, from the profile the fake trace describes (8
 * buffers, 100 µs). */
static const struct acquire_request *request(int64_t budget)
{
	static struct acquire_request rq;
	rq = (struct acquire_request){HASH, NOPS, 8, 100000, budget};
	return &rq;
}

static int begin_default(void)
{
	return acquire_begin(trace, request(BUDG));
}

static int setup(void **state)
{
	(void)state;
	acq_mkdtemp(dir, sizeof(dir));
	snprintf(trace, sizeof(trace), "%s/trace", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	snprintf(planner, sizeof(planner), "%s/fake-remat-plan", dir);
	snprintf(entry, sizeof(entry), "%s/%016llx-%d.plan.json", cache, HASH, BUDG);
	mkdir(trace, 0755);
	write_trace(HASH);
	setenv("REMAT_CACHE_DIR", cache, 1);
	unsetenv("REMAT_PLAN_TIMEOUT");
	good_planner(); /* REMAT_PLANNER must name an executable */
	setenv("REMAT_PLANNER", planner, 1);
	char log[4400];
	snprintf(log, sizeof(log), "%s/libremat.log", dir);
	setenv("REMAT_LOG", "1", 1);
	setenv("REMAT_LOG_FILE", log, 1);
	acq_reload();
	remat_log_open();
	acquire_offload(52);    /* offload on, as by default */
	acquire_trace_ready(1); /* most tests: the trace is written */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	acquire_reset();
	acq_rmtree(dir);
	return 0;
}

/* Polls like libremat does at iteration boundaries, until not PENDING. */
static enum acquire_state wait_acquired(struct pl_plan **out, double *secs)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	enum acquire_state st;
	for (int i = 0; i < 3000; i++) {
		st = acquire_poll(out);
		if (st != ACQUIRE_PENDING)
			break;
		usleep(5000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (secs)
		*secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	return st;
}

/* Killed: no such process, or a zombie waiting for an init that may
 * never reap it (its parent, the wrapper, died with it). */
static int gone(int pid)
{
	char p[64], st[512];
	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	for (int i = 0; i < 200; i++) {
		FILE *f = fopen(p, "r");
		if (!f)
			return 1;
		size_t n = fread(st, 1, sizeof(st) - 1, f);
		fclose(f);
		st[n] = '\0';
		const char *r = strrchr(st, ')');
		if (r && r[1] == ' ' && (r[2] == 'Z' || r[2] == 'X'))
			return 1;
		usleep(5000);
	}
	return 0;
}

/* The first line of arguments the fake planner was run with. */
static void planner_args(char *line, size_t n)
{
	char p[4400];
	snprintf(p, sizeof(p), "%s/planner.args", trace);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, (int)n, f));
	fclose(f);
}

/* The last line acquisition wrote to the log (REMAT_LOG=1 into a file of
 * this test's, set up like a user would). */
static void expect_message(const char *needle)
{
	char p[4400], line[4096], last[4096] = "";
	snprintf(p, sizeof(p), "%s/libremat.log", dir);
	FILE *f = fopen(p, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "libremat: ", 10))
			snprintf(last, sizeof(last), "%s", line);
	if (f)
		fclose(f);
	if (!strstr(last, needle))
		fail_msg("expected a message containing '%s', got '%s'", needle, last);
}

static void test_plan_then_cache_hit(void **state)
{
	(void)state;
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	struct pl_plan *p = NULL;
	assert_int_equal(wait_acquired(&p, NULL), ACQUIRE_READY);
	assert_non_null(p);
	assert_int_equal(p->nops, NOPS);
	assert_int_equal(p->evict_off[2] - p->evict_off[1], 1);
	assert_int_equal(p->steps[1].kind, PL_STEP_REPLAY);
	/* No iteration_ns in the plan: the profile's. */
	assert_int_equal(p->iteration_ns, 100000);
	pl_plan_free(p);
	expect_message("new plan");
	assert_int_equal(acquire_poll(NULL), ACQUIRE_IDLE);
	assert_true(acq_exists(entry));
	/* The planner's log is in the trace directory. */
	char log[4400];
	snprintf(log, sizeof(log), "%s/plan.log", trace);
	assert_true(acq_exists(log));

	/* Second run of the same job: the planner would crash now, so READY
	 * at once proves it was not run. */
	fake_planner("kill -SEGV $$");
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(acquire_poll(&p), ACQUIRE_READY);
	assert_non_null(p);
	assert_int_equal(p->budget, BUDG);
	pl_plan_free(p);
	expect_message("cached plan");
}

static void test_child_environment(void **state)
{
	(void)state;
	setenv("LD_PRELOAD", "", 1);
	setenv("REMAT_SOMETHING", "1", 1);
	setenv("ACQ_TEST_MARK", "kept", 1);
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	unsetenv("LD_PRELOAD");
	unsetenv("REMAT_SOMETHING");
	unsetenv("ACQ_TEST_MARK");
	char p[4400], line[4096];
	snprintf(p, sizeof(p), "%s/child.env", trace);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	int mark = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "LD_PRELOAD=", 11) || !strncmp(line, "REMAT_", 6))
			fail_msg("planner environment has %s", line);
		mark |= !strcmp(line, "ACQ_TEST_MARK=kept\n");
	}
	fclose(f);
	assert_true(mark);
	/* The planner was asked for this budget and the default time limit. */
	planner_args(line, sizeof(line));
	char want[8800];
	snprintf(
	    want, sizeof(want),
	    "%s --budget %d --time-limit 60 -o %s --progress --plan-version 2 --offload-gbps 52\n",
	    trace, BUDG, entry);
	if (strncmp(line, want, strlen(want)))
		fail_msg("planner arguments '%s', expected '%s...'", line, want);
}

static void test_child_env_filter(void **state)
{
	(void)state;
	char *env[] = {"PATH=/bin", "LD_PRELOAD=x.so",    "REMAT_BUDGET=1G",
	               "REMATX=1",  "LD_LIBRARY_PATH=/l", NULL};
	char **out = acq_child_env(env);
	assert_non_null(out);
	assert_string_equal(out[0], "PATH=/bin");
	assert_string_equal(out[1], "REMATX=1");
	assert_string_equal(out[2], "LD_LIBRARY_PATH=/l");
	assert_null(out[3]);
	free(out);
}

static void test_corrupt_cache_entry(void **state)
{
	(void)state;
	mkdir(cache, 0700);
	acq_write(entry, 0644, "{\"format\": \"remat-plan\", \"version\": 1, \"gra");
	/* The one message about the entry, then a planner run. */
	const char *err = stderr_of(begin_default);
	char want[4600], moved[4700];
	snprintf(want, sizeof(want), "libremat: cached plan %s rejected: not valid JSON", entry);
	snprintf(moved, sizeof(moved),
	         "; moved it to %s.rejected and planning again (training runs unmodified "
	         "meanwhile)\n",
	         entry);
	if (strncmp(err, want, strlen(want)) || strchr(err, '\n') != err + strlen(err) - 1 ||
	    !strstr(err, moved) || strstr(err, "--rehash"))
		fail_msg("stderr '%s', expected one line '%s...%s'", err, want, moved);
	expect_message("planning for a budget");
	struct pl_plan *p = NULL;
	assert_int_equal(wait_acquired(&p, NULL), ACQUIRE_READY);
	assert_non_null(p);
	pl_plan_free(p);
	/* The entry is a good plan now. */
	assert_int_equal(acq_plan_read(entry, HASH, NOPS, BUDG, 8, &p, (char[256]){0}, 256), 0);
	pl_plan_free(p);
}

/* A cached plan edited after remat-plan wrote it (a digit changed): one
 * message saying so and how to apply an edit on purpose, the edit kept
 * aside rather than deleted, a new plan made. */
static void test_edited_cache_entry(void **state)
{
	(void)state;
	mkdir(cache, 0700);
	char edited[1200];
	snprintf(edited, sizeof(edited), "%s", plan_json(HASH, BUDG, NULL));
	char *d = strstr(edited, "[\"replay\", 1]") + 11;
	*d = '0';
	acq_write(entry, 0644, "%s", edited);
	/* last used long ago: set aside, it counts as refused now (pruning) */
	struct timeval long_ago[2] = {{1000000, 0}, {1000000, 0}};
	utimes(entry, long_ago);
	const char *err = stderr_of(begin_default);
	char want[9400], moved[4700];
	snprintf(want, sizeof(want),
	         "libremat: cached plan %s rejected: checksum does not match the content (0x",
	         entry);
	snprintf(moved, sizeof(moved),
	         "the plan changed after remat-plan wrote it; moved it to "
	         "%s.rejected and planning again",
	         entry);
	if (strncmp(err, want, strlen(want)) || strchr(err, '\n') != err + strlen(err) - 1 ||
	    !strstr(err, moved) || !strstr(err, "remat-plan --rehash FILE"))
		fail_msg("stderr '%s', expected one line '%s...'", err, want);
	expect_message("planning for a budget");
	struct pl_plan *p = NULL;
	assert_int_equal(wait_acquired(&p, NULL), ACQUIRE_READY);
	pl_plan_free(p);
	/* the edit is kept, byte for byte; the entry is a good plan again */
	char aside[4620];
	snprintf(aside, sizeof(aside), "%s.rejected", entry);
	FILE *f = fopen(aside, "r");
	assert_non_null(f);
	char back[1200] = "";
	assert_int_equal(fread(back, 1, sizeof(back) - 1, f), strlen(edited));
	fclose(f);
	assert_string_equal(back, edited);
	struct stat st;
	assert_int_equal(stat(aside, &st), 0);
	assert_true(st.st_mtime > time(NULL) - 600);
	assert_int_equal(acq_plan_read(entry, HASH, NOPS, BUDG, 8, &p, (char[256]){0}, 256), 0);
	pl_plan_free(p);
}

/* A cached plan that loads but fails validation (acquire_reject, called by
 * the replay engine) goes the same way as one that does not load: one
 * message, kept aside as .rejected, planned again.  A plan remat-plan has
 * just made is not planned again: asking would give the same plan. */
static int reject_cached(void)
{
	return acquire_reject("at op 4 the plan needs 5 bytes, over the budget of 4");
}

static void test_reject_cached_plan(void **state)
{
	(void)state;
	mkdir(cache, 0700);
	char text[1200];
	snprintf(text, sizeof(text), "%s", plan_json(HASH, BUDG, NULL));
	acq_write(entry, 0644, "%s", text);
	struct pl_plan *p = NULL;
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(acquire_poll(&p), ACQUIRE_READY);
	pl_plan_free(p);
	const char *err = stderr_of(reject_cached);
	char want[9400];
	snprintf(want, sizeof(want),
	         "libremat: cached plan %s rejected: at op 4 the plan needs 5 bytes, over the "
	         "budget of 4; moved it to %s.rejected and planning again (training runs "
	         "unmodified meanwhile)\n",
	         entry, entry);
	assert_string_equal(err, want);
	char aside[4620], back[1200] = "";
	snprintf(aside, sizeof(aside), "%s.rejected", entry);
	FILE *f = fopen(aside, "r");
	assert_non_null(f);
	assert_int_equal(fread(back, 1, sizeof(back) - 1, f), strlen(text));
	fclose(f);
	assert_string_equal(back, text);
	/* planned again: the fake planner's plan is the new entry */
	p = NULL;
	assert_int_equal(wait_acquired(&p, NULL), ACQUIRE_READY);
	assert_non_null(p);
	pl_plan_free(p);
	assert_true(acq_exists(entry));
	/* that plan, made just now, rejected: a bug report, no new planner */
	assert_int_equal(acquire_reject("step 1 is wrong"), -1);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_FAILED);
	expect_message("remat-plan and libremat disagree about it");
}

static void test_corrupt_cache_message(void **state)
{
	(void)state;
	mkdir(cache, 0700);
	acq_write(entry, 0644, "garbage");
	/* Checked at start, gone since. */
	snprintf(remat_cfg.planner, sizeof(remat_cfg.planner), "/nonexistent/remat-plan");
	assert_int_equal(acquire_begin(trace, request(BUDG)), -1);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_FAILED);
	expect_message("REMAT_PLANNER=\"/nonexistent/remat-plan\" is not an executable file");
	/* The damaged entry was set aside on the way. */
	assert_false(acq_exists(entry));
	char aside[4620];
	snprintf(aside, sizeof(aside), "%s.rejected", entry);
	assert_true(acq_exists(aside));
}

static void test_cache_entry_for_other_graph(void **state)
{
	(void)state;
	mkdir(cache, 0700);
	/* Named for this graph and budget, made for another graph. */
	acq_write(entry, 0644, "%s", plan_json(0x1111ull, BUDG, NULL));
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_PENDING);
	struct pl_plan *p = NULL;
	assert_int_equal(wait_acquired(&p, NULL), ACQUIRE_READY);
	assert_true(p->graph_hash == HASH);
	pl_plan_free(p);
	/* A plan for another budget sits under another name: a miss. */
	fake_planner("exit 3");
	assert_int_equal(acquire_begin(trace, request(BUDG / 2)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_FAILED);
}

static void test_planner_crash(void **state)
{
	(void)state;
	fake_planner("kill -SEGV $$");
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_FAILED);
	expect_message("remat-plan crashed (signal 11");
	expect_message("plan.log");
	/* Final: later polls say the same without a new message. */
	assert_int_equal(acquire_poll(NULL), ACQUIRE_FAILED);
	assert_false(acq_exists(entry));
}

static void test_budget_unreachable(void **state)
{
	(void)state;
	fake_planner(
	    "echo 'remat-plan: budget 3211264 bytes cannot be met: the smallest peak found "
	    "is 4000000 bytes' >&2\n"
	    "echo 'remat-plan: smallest reachable peak: 3.81 MiB (4000000 bytes)' >&2\n"
	    "exit 3");
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_FAILED);
	expect_message("REMAT_BUDGET of 3211264 bytes cannot be reached for this job (remat-plan: "
	               "smallest reachable peak: 3.81 MiB (4000000 bytes))");
}

static void test_planner_hangs(void **state)
{
	(void)state;
	fake_planner("echo $$ > \"$trace/planner.pid\"\nexec sleep 60");
	setenv("REMAT_PLAN_TIMEOUT", "0.5", 1);
	acq_reload();
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	double secs;
	assert_int_equal(wait_acquired(NULL, &secs), ACQUIRE_FAILED);
	/* 0.5 s limit + 1 s grace; well before the sleep would end. */
	assert_true(secs > 1.2 && secs < 5);
	expect_message("did not finish within REMAT_PLAN_TIMEOUT=0.5 s");
	char p[4400];
	snprintf(p, sizeof(p), "%s/planner.pid", trace);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	int pid = 0;
	assert_int_equal(fscanf(f, "%d", &pid), 1);
	fclose(f);
	/* The planner itself (not only its wrapper) is gone. */
	assert_true(gone(pid));
}

static void test_planner_writes_garbage(void **state)
{
	(void)state;
	fake_planner("echo 'not a plan' > \"$out\"\nexit 0");
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_FAILED);
	expect_message("remat-plan wrote an unusable plan (removed it)");
	expect_message("not valid JSON");
	assert_false(acq_exists(entry));
}

static void test_planner_fails(void **state)
{
	(void)state;
	fake_planner("echo 'remat-plan: trace.json: $.ops[3]: bad thing' >&2\nexit 2");
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_FAILED);
	expect_message("remat-plan failed (exit 2: trace.json: $.ops[3]: bad thing)");
}

/* REMAT_PLAN_TIMEOUT (read at start, core/config.c) is the planner's time
 * limit. */
static void test_timeout_passed(void **state)
{
	(void)state;
	setenv("REMAT_PLAN_TIMEOUT", "2.5", 1);
	acq_reload();
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	char line[4096];
	planner_args(line, sizeof(line));
	assert_non_null(strstr(line, " --time-limit 2.5 "));
}

static void test_trace_of_other_graph(void **state)
{
	(void)state;
	write_trace(0x9999);
	assert_int_equal(acquire_begin(trace, request(BUDG)), -1);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_FAILED);
	expect_message("is of graph 0x0000000000009999, not the profiled 0x2d9addb2c6334337");
}

/* The trace file is not written yet (its writer runs on a thread of its
 * own): a cached plan is found and checked against the profile alone. */
static void test_cache_hit_before_trace(void **state)
{
	(void)state;
	acquire_reset(); /* a new profile: its trace not written yet */
	char t[4400];
	snprintf(t, sizeof(t), "%s/trace.json", trace);
	unlink(t);
	mkdir(cache, 0700);
	acq_write(entry, 0644, "%s", plan_json(HASH, BUDG, NULL));
	fake_planner("kill -SEGV $$"); /* READY at once: not run */
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	struct pl_plan *p = NULL;
	assert_int_equal(acquire_poll(&p), ACQUIRE_READY);
	assert_non_null(p);
	assert_int_equal(p->iteration_ns, 100000); /* the profile's */
	pl_plan_free(p);
	expect_message("cached plan");
}

/* The profile's own buffer count bounds a cached plan's ids, trace or not:
 * the fake plan evicts buffer 3, a profile of 3 buffers has none such. */
static void test_cache_checked_against_profile(void **state)
{
	(void)state;
	acquire_reset();
	mkdir(cache, 0700);
	acq_write(entry, 0644, "%s", plan_json(HASH, BUDG, NULL));
	struct acquire_request rq = *request(BUDG);
	rq.nbufs = 3;
	assert_int_equal(acquire_begin(trace, &rq), 0);
	expect_message("not a buffer id (the trace has 3 buffers)");
	assert_int_equal(acquire_poll(NULL), ACQUIRE_PENDING);
	char aside[4620];
	snprintf(aside, sizeof(aside), "%s.rejected", entry);
	assert_true(acq_exists(aside));
}

static int planner_ran(void)
{
	char p[4400];
	snprintf(p, sizeof(p), "%s/planner.args", trace);
	return acq_exists(p);
}

/* A miss (here an entry for another graph, refused on the way) waits for
 * the trace: remat-plan reads it, so it starts only once it is written. */
static void test_miss_waits_for_trace(void **state)
{
	(void)state;
	acquire_reset();
	mkdir(cache, 0700);
	acq_write(entry, 0644, "%s", plan_json(0x1111ull, BUDG, NULL));
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	expect_message("planning again");
	for (int i = 0; i < 5; i++) {
		assert_int_equal(acquire_poll(NULL), ACQUIRE_PENDING);
		usleep(20000);
	}
	assert_false(planner_ran());
	acquire_trace_ready(1);
	struct pl_plan *p = NULL;
	assert_int_equal(wait_acquired(&p, NULL), ACQUIRE_READY);
	assert_non_null(p);
	pl_plan_free(p);
	assert_true(planner_ran());
	expect_message("new plan");
}

/* A miss when the trace will not come: nothing to plan from, and nothing
 * more to say (the writer said why, in the one message). */
static int poll_after_failed_trace(void)
{
	acquire_trace_ready(0);
	return acquire_poll(NULL) == ACQUIRE_FAILED ? 0 : -1;
}

static void test_miss_without_trace(void **state)
{
	(void)state;
	acquire_reset();
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_PENDING);
	assert_string_equal(stderr_of(poll_after_failed_trace), "");
	assert_int_equal(acquire_poll(NULL), ACQUIRE_FAILED);
	assert_false(planner_ran());
	expect_message("no trace to plan from");
	/* Known since: a new request fails at once, still without a planner. */
	assert_int_equal(acquire_begin(trace, request(BUDG)), -1);
	assert_false(planner_ran());
}

static void test_reset_kills_planner(void **state)
{
	(void)state;
	fake_planner("echo $$ > \"$trace/planner.pid\"\nexec sleep 60");
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	/* The file exists before the shell has written the pid into it. */
	char p[4400];
	snprintf(p, sizeof(p), "%s/planner.pid", trace);
	int pid = 0;
	for (int i = 0; i < 400 && pid <= 0; i++) {
		FILE *f = fopen(p, "r");
		if (!f || fscanf(f, "%d", &pid) != 1)
			pid = 0;
		if (f)
			fclose(f);
		if (pid <= 0)
			usleep(5000);
	}
	assert_true(pid > 0);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_PENDING);
	acquire_reset();
	assert_int_equal(acquire_poll(NULL), ACQUIRE_IDLE);
	assert_true(gone(pid));
}

static void test_invalidate(void **state)
{
	(void)state;
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	assert_true(acq_exists(entry));
	acquire_invalidate_cached(HASH, BUDG);
	assert_false(acq_exists(entry));
}

/* Offload off: the plan is cached under a name of its own, so a plan made
 * with offload (the plain name) is never taken, nor the other way round. */
static void test_offload_off_own_entry(void **state)
{
	(void)state;
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	assert_true(acq_exists(entry));
	acquire_offload(0);
	char off[sizeof(entry) + 16];
	snprintf(off, sizeof(off), "%s/%016llx-%d-nooffload.plan.json", cache, HASH, BUDG);
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	expect_message("started"); /* planned, not the cached plan */
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	expect_message("new plan");
	assert_true(acq_exists(off));
	assert_true(acq_exists(entry));
	/* On again, its entry gone: planned, the other entry not taken. */
	acquire_offload(52);
	unlink(entry);
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	expect_message("started");
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	assert_true(acq_exists(entry));
	/* Invalidation removes the entry of the setting in force only. */
	acquire_offload(0);
	acquire_invalidate_cached(HASH, BUDG);
	assert_false(acq_exists(off));
	assert_true(acq_exists(entry));
}

/* SIGCHLD ignored (some programs do): the kernel reaps the planner and its
 * exit status is lost, yet its plan is found. */
static void test_sigchld_ignored(void **state)
{
	(void)state;
	signal(SIGCHLD, SIG_IGN);
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	struct pl_plan *p = NULL;
	enum acquire_state st = wait_acquired(&p, NULL);
	signal(SIGCHLD, SIG_DFL);
	assert_int_equal(st, ACQUIRE_READY);
	assert_non_null(p);
	pl_plan_free(p);
}

static void test_default_cache_dir(void **state)
{
	(void)state;
	char xdg[4400], want[4600];
	unsetenv("REMAT_CACHE_DIR");
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	setenv("XDG_CACHE_HOME", xdg, 1);
	acq_reload();
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	snprintf(want, sizeof(want), "%s/libremat/%016llx-%d.plan.json", xdg, HASH, BUDG);
	assert_true(acq_exists(want));
	/* HOME when XDG_CACHE_HOME is not set. */
	unsetenv("XDG_CACHE_HOME");
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("HOME", dir, 1);
	acq_reload();
	char d[4400], err[256];
	assert_int_equal(acq_cache_dir(d, sizeof(d), err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/.cache/libremat", dir);
	assert_string_equal(d, want);
	if (home)
		setenv("HOME", home, 1);
	free(home);
	/* REMAT_CACHE_DIR that cannot be a directory: no cache, still a plan. */
	snprintf(want, sizeof(want), "%s/trace/trace.json/x", dir);
	setenv("REMAT_CACHE_DIR", want, 1);
	acq_reload();
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	expect_message("planning for a budget");
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
	snprintf(want, sizeof(want), "%s/plan.json", trace);
	assert_true(acq_exists(want));
}

/* Verification mode: the planner is told which buffers to leave alone, the
 * plain cache entry does not answer, and a plan evicting one is refused. */
static void test_excluding(void **state)
{
	(void)state;
	mkdir(cache, 0700);
	acq_write(entry, 0644, "%s", plan_json(HASH, BUDG, NULL));
	int32_t ex[2] = {5, 2};
	assert_int_equal(acquire_begin_excluding(trace, request(BUDG), ex, 2), 0);
	expect_message("never evicting buffers 2,5");
	struct pl_plan *p = NULL;
	assert_int_equal(wait_acquired(&p, NULL), ACQUIRE_READY);
	assert_non_null(p);
	pl_plan_free(p);
	char line[4096];
	planner_args(line, sizeof(line));
	if (!strstr(line, " --exclude 2,5 "))
		fail_msg("planner arguments '%s' lack --exclude 2,5", line);
	/* Its own cache entry, found by the same request. */
	fake_planner("kill -SEGV $$");
	assert_int_equal(acquire_begin_excluding(trace, request(BUDG), ex, 2), 0);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_READY);
	expect_message("-x");
	/* A re-plan after verification removes that entry (the plan in force
	 * came from it), not the plain one. */
	char pat[4400];
	snprintf(pat, sizeof(pat), "%s/%016llx-%d-x*.plan.json", cache, HASH, BUDG);
	glob_t found;
	assert_int_equal(glob(pat, 0, NULL, &found), 0);
	assert_int_equal(found.gl_pathc, 1);
	acquire_invalidate_cached(HASH, BUDG);
	assert_false(acq_exists(found.gl_pathv[0]));
	assert_true(acq_exists(entry));
	globfree(&found);
	/* The good plan evicts buffer 3. */
	good_planner();
	int32_t three = 3;
	assert_int_equal(acquire_begin_excluding(trace, request(BUDG), &three, 1), 0);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_FAILED);
	expect_message("evicts buffer 3, which must stay resident");
	/* The plain entry is untouched. */
	assert_true(acq_exists(entry));
}

/* No REMAT_PLANNER, and no remat-plan next to this test binary: PATH. */
static void test_planner_on_path(void **state)
{
	(void)state;
	char bin[4400], path[8800];
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	mkdir(bin, 0755);
	unsetenv("REMAT_PLANNER");
	setenv("PATH", bin, 1);
	acq_reload();
	int rc = acquire_begin(trace, request(BUDG));
	setenv("PATH", saved ? saved : "/usr/bin:/bin", 1);
	assert_int_equal(rc, -1);
	expect_message("run mode needs the remat-plan command: not next to libremat.so nor on PATH "
	               "(set REMAT_PLANNER=/path/to/remat-plan); running unmodified");
	snprintf(path, sizeof(path), "%s/remat-plan", bin);
	rename(planner, path);
	/* The fake planner needs cat and env from the usual places. */
	snprintf(path, sizeof(path), "/nonexistent:%s:%s", bin, saved ? saved : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	acq_reload();
	rc = acquire_begin(trace, request(BUDG));
	setenv("PATH", saved ? saved : "/usr/bin:/bin", 1);
	assert_int_equal(rc, 0);
	snprintf(path, sizeof(path), "%s/remat-plan started", bin);
	expect_message(path);
	free(saved);
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_READY);
}

/* A child forked while the planner runs (a data-loader worker) neither
 * waits for nor kills the parent's planner. */
static void test_forked_child(void **state)
{
	(void)state;
	fake_planner("sleep 0.3\nexit 3");
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		int ok = acquire_poll(NULL) == ACQUIRE_PENDING;
		acquire_reset();
		_exit(ok ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The planner lived on and its exit status comes to the parent. */
	assert_int_equal(wait_acquired(NULL, NULL), ACQUIRE_FAILED);
	expect_message("cannot be reached for this job");
}

static int plans_taken;

static void *poller(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		struct pl_plan *p = NULL;
		enum acquire_state st = acquire_poll(&p);
		if (p) {
			__atomic_add_fetch(&plans_taken, 1, __ATOMIC_SEQ_CST);
			pl_plan_free(p);
		}
		if (st == ACQUIRE_IDLE || st == ACQUIRE_FAILED)
			break;
		usleep(2000);
	}
	return NULL;
}

/* Several threads poll at once (iteration boundaries seen by different
 * host threads): the plan is handed to exactly one of them. */
static void test_concurrent_polls(void **state)
{
	(void)state;
	good_planner();
	assert_int_equal(acquire_begin(trace, request(BUDG)), 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, poller, NULL), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(plans_taken, 1);
	assert_int_equal(acquire_poll(NULL), ACQUIRE_IDLE);
}

static void test_prune(void **state)
{
	(void)state;
	mkdir(cache, 0700);
	char p[4400];
	for (int i = 0; i < 70; i++) {
		snprintf(p, sizeof(p), "%s/%016x-1.plan.json", cache, i);
		acq_write(p, 0644, "{}");
		/* Older files first: mtime i seconds after the epoch-ish base. */
		struct timeval tv[2] = {{1000000 + i, 0}, {1000000 + i, 0}};
		utimes(p, tv);
	}
	/* Refused plans set aside: pruned on the same rule, counted apart
	 * (their 70 neither push plans out nor are pushed out by them). */
	for (int i = 0; i < 70; i++) {
		snprintf(p, sizeof(p), "%s/%016x-2.plan.json.rejected", cache, i);
		acq_write(p, 0644, "{}");
		struct timeval tv[2] = {{2000000 - i, 0}, {2000000 - i, 0}};
		utimes(p, tv);
	}
	snprintf(p, sizeof(p), "%s/notes.txt", cache);
	acq_write(p, 0644, "not a plan: kept");
	/* A planner temporary from two days ago goes, a fresh one stays. */
	char old[4400], fresh[4400];
	snprintf(old, sizeof(old), "%s/%016x-1.plan.json.99.tmp", cache, 1);
	snprintf(fresh, sizeof(fresh), "%s/%016x-1.plan.json.98.tmp", cache, 1);
	acq_write(old, 0644, "{");
	acq_write(fresh, 0644, "{");
	struct timeval two_days[2] = {{time(NULL) - 2 * 86400, 0}, {time(NULL) - 2 * 86400, 0}};
	utimes(old, two_days);
	acq_cache_prune(cache, 64);
	assert_false(acq_exists(old));
	assert_true(acq_exists(fresh));
	for (int i = 0; i < 70; i++) {
		snprintf(p, sizeof(p), "%s/%016x-1.plan.json", cache, i);
		assert_int_equal(acq_exists(p), i >= 6);
		snprintf(p, sizeof(p), "%s/%016x-2.plan.json.rejected", cache, i);
		assert_int_equal(acq_exists(p), i < 64);
	}
	snprintf(p, sizeof(p), "%s/notes.txt", cache);
	assert_true(acq_exists(p));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_plan_then_cache_hit),
	    T(test_child_environment),
	    T(test_child_env_filter),
	    T(test_corrupt_cache_entry),
	    T(test_corrupt_cache_message),
	    T(test_edited_cache_entry),
	    T(test_reject_cached_plan),
	    T(test_cache_entry_for_other_graph),
	    T(test_planner_crash),
	    T(test_budget_unreachable),
	    T(test_planner_hangs),
	    T(test_planner_writes_garbage),
	    T(test_planner_fails),
	    T(test_timeout_passed),
	    T(test_trace_of_other_graph),
	    T(test_cache_hit_before_trace),
	    T(test_cache_checked_against_profile),
	    T(test_miss_waits_for_trace),
	    T(test_miss_without_trace),
	    T(test_reset_kills_planner),
	    T(test_invalidate),
	    T(test_offload_off_own_entry),
	    T(test_sigchld_ignored),
	    T(test_default_cache_dir),
	    T(test_excluding),
	    T(test_concurrent_polls),
	    T(test_forked_child),
	    T(test_planner_on_path),
	    T(test_prune),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
