/*
 * test_config.c — every REMAT_* variable, good and bad values, every
 * start-up message kept, the cache and planner locations, and the
 * PYTORCH_CUDA_ALLOC_CONF merge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../core/config.h"

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

static struct remat_config_msgs msgs;

/* Loads the variables set with env() (and forgets them); err receives the
 * messages, one per line. */
static int parse(struct remat_config *c, char *err)
{
	memset(&msgs, 0, sizeof(msgs));
	int r = remat_config_load(fake_getenv, NULL, c, &msgs);
	nvars = 0;
	err[0] = '\0';
	for (int i = 0; i < msgs.n; i++)
		snprintf(err + strlen(err), 512 - strlen(err), "%s\n", msgs.text[i]);
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
	assert_int_equal(c.budget.bytes, 12LL << 30);

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
	assert_true(c.budget.percent == 60.0);
	assert_int_equal(c.budget.bytes, 0);

	env("REMAT_MODE", "Trace");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_MODE=\"Trace\""));
	assert_non_null(strstr(err, "off, trace, run"));
	assert_int_equal(c.mode, REMAT_MODE_OFF);

	env("REMAT_MODE", "run");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_BUDGET"));
}

/* The grammar is core/budget.c's, shared with remat-plan --budget
 * (tests/planner/test_io.c checks its messages). */
static void test_budget(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int64_t bytes;
	} good[] = {
	    {"1", 1},          {"4096", 4096},      {"1K", 1024},          {"2k", 2048},
	    {"3M", 3LL << 20}, {"12G", 12LL << 30}, {"12GiB", 12LL << 30}, {"12GB", 12LL << 30},
	    {"2T", 2LL << 40}, {"100B", 100},       {"1.5G", 3LL << 29}};
	struct remat_config c;
	char err[512];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		env("REMAT_BUDGET", good[i].in);
		assert_int_equal(parse(&c, err), 0);
		assert_int_equal(c.budget.bytes, good[i].bytes);
	}
	static const char *bad[] = {"",   "abc",  "12X", "-5",   "0",    "1.5", "12 G",
	                            "0%", "101%", "%",   "abc%", "60%%", "G",   "99999999999999T"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		env("REMAT_BUDGET", bad[i]);
		assert_int_equal(parse(&c, err), -1);
		assert_non_null(strstr(err, "REMAT_BUDGET"));
		assert_non_null(strstr(err, "percentage of the baseline peak"));
		assert_int_equal(c.mode, REMAT_MODE_OFF);
	}
	env("REMAT_BUDGET", "12.5%");
	assert_int_equal(parse(&c, err), 0);
	assert_true(c.budget.percent == 12.5);

	/* A percentage is of the unmodified iteration's peak, resolved once it
	 * is known; one that rounds to nothing is an error then. */
	int64_t b;
	assert_int_equal(remat_budget_resolve(&c.budget, 1000, &b, err, sizeof(err)), 0);
	assert_int_equal(b, 125);
	assert_int_equal(remat_budget_resolve(&c.budget, 4, &b, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "rounds to 0 bytes"));
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

/* What each framework is told: PyTorch's two names carry the merge of the
 * newer one when both are set, JAX and TensorFlow fixed values; what the
 * program had is kept for the messages. */
static void test_frameworks_env(void **state)
{
	(void)state;
	struct remat_env_setting s[REMAT_ENV_SETTINGS];
	nvars = 0;
	assert_int_equal(remat_frameworks_env(fake_getenv, s), 0);
	assert_string_equal(s[0].name, "PYTORCH_ALLOC_CONF");
	assert_string_equal(s[0].value, "backend:cudaMallocAsync");
	assert_null(s[0].before);
	assert_string_equal(s[1].name, "PYTORCH_CUDA_ALLOC_CONF");
	assert_string_equal(s[1].value, "backend:cudaMallocAsync");
	assert_string_equal(s[2].name, "XLA_PYTHON_CLIENT_PREALLOCATE");
	assert_string_equal(s[2].value, "false");
	assert_string_equal(s[3].name, "XLA_PYTHON_CLIENT_ALLOCATOR");
	assert_string_equal(s[3].value, "platform");
	assert_string_equal(s[4].name, "TF_GPU_ALLOCATOR");
	assert_string_equal(s[4].value, "cuda_malloc_async");
	assert_string_equal(s[5].name, "TF_FORCE_GPU_ALLOW_GROWTH");
	assert_string_equal(s[5].value, "true");

	env("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:64");
	env("XLA_PYTHON_CLIENT_ALLOCATOR", "bfc");
	assert_int_equal(remat_frameworks_env(fake_getenv, s), 0);
	assert_string_equal(s[0].value, "backend:cudaMallocAsync,max_split_size_mb:64");
	assert_string_equal(s[1].value, s[0].value);
	assert_string_equal(s[1].before, "max_split_size_mb:64");
	assert_string_equal(s[3].before, "bfc");
	/* both PyTorch names: the newer one's keys */
	env("PYTORCH_ALLOC_CONF", "expandable_segments:True,roundup_power2_divisions:4");
	assert_int_equal(remat_frameworks_env(fake_getenv, s), 0);
	assert_string_equal(s[0].value, "backend:cudaMallocAsync,roundup_power2_divisions:4");
	assert_string_equal(s[1].value, s[0].value);
	nvars = 0;
}

static int load_env(char **envv, struct remat_config *c)
{
	memset(&msgs, 0, sizeof(msgs));
	int r = remat_config_load(fake_getenv, envv, c, &msgs);
	nvars = 0;
	return r;
}

static void test_unknown_names(void **state)
{
	(void)state;
	struct remat_config c;
	char *good[] = {"PATH=/bin", "REMAT_MODE=trace", "REMAT_LOG_FILE=x", "REMATX=1", NULL};
	assert_int_equal(load_env(good, &c), 0);
	assert_int_equal(msgs.n, 0);
	char *typo[] = {"REMAT_MODE=trace", "REMAT_TRACEDIR=/tmp/t", NULL};
	assert_int_equal(load_env(typo, &c), 0); /* a warning, not a refusal */
	assert_int_equal(msgs.n, 1);
	assert_non_null(strstr(msgs.text[0], "REMAT_TRACEDIR ignored"));
	assert_non_null(strstr(msgs.text[0], "REMAT_CACHE_DIR"));
	assert_null(strstr(msgs.text[0], "/tmp/t"));
	char *prefix[] = {"REMAT_LOGX=1", "REMAT_PLAN_DEBUG=1", NULL};
	assert_int_equal(load_env(prefix, &c), 0);
	assert_int_equal(msgs.n, 2);
}

/* Two problems, two messages: a typo's warning does not hide a malformed
 * value, nor one bad value another. */
static void test_every_message_kept(void **state)
{
	(void)state;
	struct remat_config c;
	char *envv[] = {"REMAT_BUGDET=1G", NULL};
	env("REMAT_BUDGET", "1X");
	env("REMAT_LOG", "loud");
	assert_int_equal(load_env(envv, &c), -1);
	assert_int_equal(msgs.n, 3);
	assert_non_null(strstr(msgs.text[0], "REMAT_BUDGET=\"1X\""));
	assert_non_null(strstr(msgs.text[1], "REMAT_LOG=\"loud\""));
	assert_non_null(strstr(msgs.text[2], "REMAT_BUGDET ignored"));
	assert_int_equal(c.mode, REMAT_MODE_OFF);
}

/* More problems than messages fit: the last message counts the rest. */
static void test_too_many_messages_counted(void **state)
{
	(void)state;
	struct remat_config c;
	char names[20][32], *envv[21];
	for (int i = 0; i < 20; i++) {
		snprintf(names[i], sizeof(names[i]), "REMAT_TYPO%d=1", i);
		envv[i] = names[i];
	}
	envv[20] = NULL;
	assert_int_equal(load_env(envv, &c), 0);
	assert_int_equal(msgs.n, REMAT_CONFIG_MAX_MSGS);
	assert_non_null(strstr(msgs.text[REMAT_CONFIG_MAX_MSGS - 2], "REMAT_TYPO14 ignored"));
	assert_non_null(strstr(msgs.text[REMAT_CONFIG_MAX_MSGS - 1],
	                       "5 more problems with REMAT_* variables not shown"));
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
	env("REMAT_BUDGET", "1G");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.offload, 1); /* on unless switched off */
	env("REMAT_OFFLOAD", "0");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.offload, 0);
	env("REMAT_OFFLOAD", "1");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.offload, 1);
	env("REMAT_OFFLOAD", "on");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_OFFLOAD=\"on\""));
	assert_non_null(strstr(err, "0, 1"));
	char *run[] = {"REMAT_VERIFY=1", "REMAT_PLANNER=/x", "REMAT_PLAN_TIMEOUT=5",
	               "REMAT_CACHE_DIR=/tmp", NULL};
	assert_int_equal(load_env(run, &c), 0);
	assert_int_equal(msgs.n, 0);
}

/* REMAT_WRITE_PROOF: data words only unless told otherwise (the proofs
 * relaunch kernels on perturbed content); anything but 0, data or 1 is
 * refused. */
static void test_write_proof(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	env("REMAT_MODE", "trace");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.write_proof, REMAT_PROOF_DATA);
	env("REMAT_WRITE_PROOF", "0");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.write_proof, REMAT_PROOF_OFF);
	env("REMAT_WRITE_PROOF", "1");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.write_proof, REMAT_PROOF_ALL);
	env("REMAT_WRITE_PROOF", "data");
	assert_int_equal(parse(&c, err), 0);
	assert_int_equal(c.write_proof, REMAT_PROOF_DATA);
	env("REMAT_WRITE_PROOF", "off");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_WRITE_PROOF=\"off\""));
	assert_non_null(strstr(err, "data (the default"));
	env("REMAT_WRITE_PROOF", "data1");
	assert_int_equal(parse(&c, err), -1);
}

/* The planner's variables, read at start like the others. */
static void test_planner_variables(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	assert_int_equal(parse(&c, err), 0);
	assert_true(c.plan_timeout_s == 60);
	assert_string_equal(c.planner, "");
	env("REMAT_PLAN_TIMEOUT", "2.5");
	env("REMAT_PLANNER", "/bin/sh");
	env("REMAT_CACHE_DIR", "/tmp/plans");
	assert_int_equal(parse(&c, err), 0);
	assert_true(c.plan_timeout_s == 2.5);
	assert_string_equal(c.planner, "/bin/sh");
	assert_string_equal(c.cache_dir, "/tmp/plans");
	assert_string_equal(c.cache_dir_from, "REMAT_CACHE_DIR");
	static const char *bad_t[] = {"0", "-1", "soon", "86401", "1e3x", ""};
	for (size_t i = 0; i < sizeof(bad_t) / sizeof(bad_t[0]); i++) {
		env("REMAT_PLAN_TIMEOUT", bad_t[i]);
		assert_int_equal(parse(&c, err), -1);
		assert_non_null(strstr(err, "REMAT_PLAN_TIMEOUT"));
	}
	env("REMAT_PLANNER", "/nonexistent/remat-plan");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "an executable remat-plan"));
	env("REMAT_CACHE_DIR", "");
	assert_int_equal(parse(&c, err), -1);
	assert_non_null(strstr(err, "REMAT_CACHE_DIR"));
}

/* Without REMAT_CACHE_DIR: $XDG_CACHE_HOME/libremat (an absolute one only),
 * else $HOME/.cache/libremat, else no cache. */
static void test_cache_dir_default(void **state)
{
	(void)state;
	struct remat_config c;
	char err[512];
	env("XDG_CACHE_HOME", "/x/cache");
	env("HOME", "/home/u");
	assert_int_equal(parse(&c, err), 0);
	assert_string_equal(c.cache_dir, "/x/cache/libremat");
	assert_string_equal(c.cache_dir_from, "XDG_CACHE_HOME");
	env("XDG_CACHE_HOME", "relative");
	env("HOME", "/home/u");
	assert_int_equal(parse(&c, err), 0);
	assert_string_equal(c.cache_dir, "/home/u/.cache/libremat");
	assert_int_equal(parse(&c, err), 0);
	assert_string_equal(c.cache_dir, "");
	env("PATH", "/usr/bin:/bin");
	assert_int_equal(parse(&c, err), 0);
	assert_string_equal(c.path, "/usr/bin:/bin");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nothing_set),
	    cmocka_unit_test(test_mode_defaults),
	    cmocka_unit_test(test_mode_values),
	    cmocka_unit_test(test_budget),
	    cmocka_unit_test(test_log_warmup_dir),
	    cmocka_unit_test(test_alloc_conf),
	    cmocka_unit_test(test_frameworks_env),
	    cmocka_unit_test(test_unknown_names),
	    cmocka_unit_test(test_every_message_kept),
	    cmocka_unit_test(test_too_many_messages_counted),
	    cmocka_unit_test(test_verify_and_run_names),
	    cmocka_unit_test(test_planner_variables),
	    cmocka_unit_test(test_write_proof),
	    cmocka_unit_test(test_cache_dir_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
