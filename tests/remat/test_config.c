/*
 * test_config.c — every REMAT_* variable, good and bad values, and the
 * PYTORCH_CUDA_ALLOC_CONF merge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../interpose/remat.h"

static const char *vars[16][2];
static int nvars;

static const char *fake_getenv(const char *name)
{
	for (int i = 0; i < nvars; i++)
		if (!strcmp(vars[i][0], name))
			return vars[i][1];
	return NULL;
}

static void env(const char *name, const char *value)
{
	vars[nvars][0] = name;
	vars[nvars][1] = value;
	nvars++;
}

static int parse(struct remat_config *c, char *err)
{
	int r = remat_config_parse(fake_getenv, c, err, 512);
	nvars = 0;
	return r;
}

static void test_nothing_set(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.any_set, 0);
	assert_int_equal(c.mode, REMAT_MODE_OFF);
	assert_string_equal(c.trace_dir, "./remat-trace");
	assert_int_equal(c.warmup, 2);
	assert_int_equal(c.log_level, REMAT_LOG_ERROR);
}

static void test_mode_defaults(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	env("REMAT_TRACE_DIR", "/tmp/x");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.mode, REMAT_MODE_TRACE);
	assert_string_equal(c.trace_dir, "/tmp/x");

	env("REMAT_BUDGET", "12G");
	env("REMAT_TRACE_DIR", "/tmp/x");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.mode, REMAT_MODE_RUN);
	assert_int_equal(c.budget_bytes, 12ULL << 30);

	env("REMAT_LOG", "1");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.any_set, 1);
	assert_int_equal(c.mode, REMAT_MODE_OFF);
}

static void test_mode_values(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	env("REMAT_MODE", "off");
	env("REMAT_BUDGET", "1G");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.mode, REMAT_MODE_OFF);
	env("REMAT_MODE", "trace");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.mode, REMAT_MODE_TRACE);
	env("REMAT_MODE", "run");
	env("REMAT_BUDGET", "60%");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.mode, REMAT_MODE_RUN);
	assert_true(c.budget_percent == 60.0);
	assert_int_equal(c.budget_bytes, 0);

	env("REMAT_MODE", "Trace");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_MODE=\"Trace\""));
	assert_non_null(strstr(err, "off, trace, run"));
	assert_int_equal(c.mode, REMAT_MODE_OFF);

	env("REMAT_MODE", "run");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_BUDGET"));
}

static void test_budget(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		uint64_t bytes;
	} good[] = {
	    {"1", 1},           {"4096", 4096},       {"1K", 1024},           {"2k", 2048},
	    {"3M", 3ULL << 20}, {"12G", 12ULL << 30}, {"12GiB", 12ULL << 30}, {"12GB", 12ULL << 30},
	    {"2T", 2ULL << 40}, {"100B", 100}};
	struct remat_config c;
	char err[512];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		env("REMAT_BUDGET", good[i].in);
		assert_int_equal(parse(&c, err), 0);
		assert_int_equal(c.budget_bytes, good[i].bytes);
	}
	static const char *bad[] = {"",   "abc",  "12X", "-5",   "0",    "1.5G", "12 G",
	                            "0%", "101%", "%",   "abc%", "60%%", "G",    "99999999999999T"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		env("REMAT_BUDGET", bad[i]);
		assert_int_equal(parse(&c, err), -1);
		assert_non_null(strstr(err, "REMAT_BUDGET"));
		assert_int_equal(c.mode, REMAT_MODE_OFF);
	}
	env("REMAT_BUDGET", "12.5%");
	assert_int_equal(parse(&c, err), 0);
	assert_true(c.budget_percent == 12.5);
}

static void test_log_warmup_dir(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	static const struct {
		const char *in;
		int level;
	} logs[] = {{"0", 0}, {"1", 1}, {"2", 2}, {"error", 0}, {"INFO", 1}, {"debug", 2}};
	for (size_t i = 0; i < 6; i++) {
		env("REMAT_LOG", logs[i].in);
		assert_int_equal(parse(&c, err), 0);
		assert_int_equal(c.log_level, logs[i].level);
	}
	env("REMAT_LOG", "3");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_LOG=\"3\""));
	env("REMAT_LOG", "verbose");
	assert_int_equal(parse(&c, err), -1);

	env("REMAT_WARMUP", "0");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.warmup, 0);
	env("REMAT_WARMUP", "17");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.warmup, 17);
	static const char *badw[] = {"-1", "x", "", "3.5", "1000001", " 2"};
	for (size_t i = 0; i < 6; i++) {
		env("REMAT_WARMUP", badw[i]);
		assert_int_equal(parse(&c, err), -1);
		assert_non_null(strstr(err, "REMAT_WARMUP"));
	}

	env("REMAT_TRACE_DIR", "");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_TRACE_DIR"));
	env("REMAT_LOG_FILE", "");
	assert_int_equal(parse(&c, err), -1);
	env("REMAT_LOG_FILE", "/tmp/remat.log");
	assert_int_equal(parse(&c, err), 0);
	assert_string_equal(c.log_file, "/tmp/remat.log");
}

static void test_alloc_conf(void **state)
{
	(void)state;
	char out[256];
	assert_int_equal(remat_alloc_conf_merge(NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "backend:cudaMallocAsync");
	assert_int_equal(remat_alloc_conf_merge("", out, sizeof(out)), 0);
	assert_string_equal(out, "backend:cudaMallocAsync");
	assert_int_equal(remat_alloc_conf_merge("expandable_segments:True,max_split_size_mb:128",
	                                        out, sizeof(out)),
	                 0);
	assert_string_equal(out, "backend:cudaMallocAsync,max_split_size_mb:128");
	assert_int_equal(remat_alloc_conf_merge("backend:native, garbage_collection_threshold:0.6",
	                                        out, sizeof(out)),
	                 0);
	assert_string_equal(out, "backend:cudaMallocAsync,garbage_collection_threshold:0.6");
	assert_int_equal(remat_alloc_conf_merge("a:1,,b:2", out, sizeof(out)), 0);
	assert_string_equal(out, "backend:cudaMallocAsync,a:1,b:2");
	assert_int_equal(remat_alloc_conf_merge("a:1", out, 10), -1);
}

static void test_unknown_names(void **state)
{
	(void)state;
	char msg[256];
	char *good[] = {"PATH=/bin", "REMAT_MODE=trace", "REMAT_LOG_FILE=x", "REMATX=1", NULL};
	assert_int_equal(remat_config_unknown(good, msg, sizeof(msg)), 0);
	char *typo[] = {"REMAT_MODE=trace", "REMAT_TRACEDIR=/tmp/t", NULL};
	assert_int_equal(remat_config_unknown(typo, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "REMAT_TRACEDIR ignored"));
	assert_null(strstr(msg, "/tmp/t"));
	char *prefix[] = {"REMAT_LOGX=1", NULL};
	assert_int_equal(remat_config_unknown(prefix, msg, sizeof(msg)), 1);
	assert_int_equal(remat_config_unknown(NULL, msg, sizeof(msg)), 0);
}

static void test_verify_and_run_names(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.verify, 0);
	env("REMAT_VERIFY", "1");
	env("REMAT_BUDGET", "1G");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.verify, 1);
	assert_int_equal(c.mode, REMAT_MODE_RUN);
	env("REMAT_VERIFY", "yes");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_VERIFY=\"yes\""));
	char msg[512];
	char *run[] = {"REMAT_VERIFY=1", "REMAT_PLANNER=/x", "REMAT_PLAN_TIMEOUT=5",
	               "REMAT_CACHE_DIR=/tmp", NULL};
	assert_int_equal(remat_config_unknown(run, msg, sizeof(msg)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nothing_set),    cmocka_unit_test(test_mode_defaults),
	    cmocka_unit_test(test_mode_values),    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_log_warmup_dir), cmocka_unit_test(test_alloc_conf),
	    cmocka_unit_test(test_unknown_names),  cmocka_unit_test(test_verify_and_run_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
