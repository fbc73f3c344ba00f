/*
 * driver_sweep.c — SIMCUDA_FAIL_ALLOC/SIMCUDA_FAIL_LAUNCH=A-B, the sweep
 * that forks a child at each event (sim/driver/sweep.c): one child per N of
 * the range, each failing its event as a fresh process with
 * SIMCUDA_FAIL_*=N would, with its own stdout (the parent's so far first),
 * report and status; VMM memory a copy of its own; work still queued on a
 * slowed stream at the fork done in both; the parent as without a sweep;
 * a process with a thread of its own refused.
 */
#include "driver_common.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

/* The program swept: "before", then on a slowed stream four rounds of an
 * allocation and a launch of "append" (1..4) into VMM memory, each refusal
 * printed, then what the memory holds: "COUNT: V...". */
static int child_sweep(void)
{
	printf("before\n");
	fflush(stdout);
	setup_context();
	CUfunction f = get_fn(load_test_module(), "append");
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE}};
	CUmemAccessDesc rw = {.location = prop.location,
	                      .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	size_t g;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CHECK(cuMemCreate(&h, g, &prop, 0)); /* allocation 1 */
	CHECK(cuMemAddressReserve(&va, g, 0, 0, 0));
	CHECK(cuMemMap(va, g, 0, h, 0));
	CHECK(cuMemSetAccess(va, g, &rw, 1));
	CHECK(cuMemsetD32Async(va, 0, 16, s));
	for (unsigned v = 1; v <= 4; v++) {
		CUdeviceptr scratch;
		CUresult r = cuMemAlloc(&scratch, 64); /* allocations 2 to 5 */
		if (r != CUDA_SUCCESS)
			printf("alloc %u: %d\n", v + 1, (int)r);
		void *args[] = {&va, &v};
		r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL); /* launches 1 to 4 */
		if (r != CUDA_SUCCESS)
			printf("launch %u: %d\n", v, (int)r);
	}
	unsigned out[8] = {0};
	CHECK(cuMemcpyDtoHAsync(out, va, sizeof(out), s));
	CHECK(cuStreamSynchronize(s));
	printf("%u:", out[0]);
	for (unsigned i = 1; i <= out[0] && i < 8; i++)
		printf(" %u", out[i]);
	printf("\n");
	return 0;
}

static void *blocked(void *fd)
{
	char c;
	ssize_t got = read(*(int *)fd, &c, 1);
	(void)got;
	return NULL;
}

/* A thread of the program's own, alive at the first launch. */
static int child_sweep_thread(void)
{
	static int fds[2];
	pthread_t t;
	if (pipe(fds) || pthread_create(&t, NULL, blocked, &fds[0]))
		return 3;
	setup_context();
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 64));
	unsigned v = 1;
	void *args[] = {&p, &v};
	CHECK(cuLaunchKernel(get_fn(load_test_module(), "append"), 1, 1, 1, 1, 1, 1, 0, NULL, args,
	                     NULL));
	return 0;
}

/* Runs `self MODE` in a fresh directory with stdout and stderr in files
 * there (out, err) and SIMCUDA_SWEEP_DIR set to it; returns the status. */
static int run_sweep(const char *mode, const char *const *env, char *dir)
{
	strcpy(dir, "/tmp/simcuda-sweep-XXXXXX");
	assert_non_null(mkdtemp(dir));
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char path[128];
		snprintf(path, sizeof(path), "%s/out", dir);
		int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		snprintf(path, sizeof(path), "%s/err", dir);
		int err = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		setenv("SIMCUDA_SWEEP_DIR", dir, 1);
		for (const char *const *e = env; e && *e; e++)
			putenv((char *)*e);
		char *argv[] = {"self", (char *)mode, NULL};
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/* The contents of dir/name ("" when missing). */
static const char *slurp(const char *dir, const char *name)
{
	static char buf[4096];
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (f) {
		buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
		fclose(f);
	}
	return buf;
}

static void remove_dir(const char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Child N of dir: exit 0, its stdout `want`, its report a fault fired. */
static void expect_child(const char *dir, int n, const char *want)
{
	char sub[256];
	snprintf(sub, sizeof(sub), "%s/%d", dir, n);
	assert_string_equal(slurp(sub, "status"), "0\n");
	assert_string_equal(slurp(sub, "stdout"), want);
	assert_non_null(strstr(slurp(sub, "report"), " faults_injected=1 "));
}

/* No child N: N is outside the range, or past the last event. */
static void expect_none(const char *dir, int n)
{
	char sub[256];
	struct stat sb;
	snprintf(sub, sizeof(sub), "%s/%d", dir, n);
	assert_int_not_equal(stat(sub, &sb), 0);
}

static void test_sweep_launch(void **state)
{
	(void)state;
	/* Refused for memory, the launch's other rounds go on; the slowed
	 * stream still has the earlier rounds queued at each fork. */
	const char *env[] = {"SIMCUDA_FAIL_LAUNCH=1-", "SIMCUDA_FAIL_LAUNCH_ERROR=oom",
	                     "SIMCUDA_SLOW_STREAM=20", NULL};
	char dir[64];
	int st = run_sweep("sweep", env, dir);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(slurp(dir, "out"), "before\n4: 1 2 3 4\n");
	assert_string_equal(slurp(dir, "err"), "");
	expect_child(dir, 1, "before\nlaunch 1: 2\n3: 2 3 4\n");
	expect_child(dir, 2, "before\nlaunch 2: 2\n3: 1 3 4\n");
	expect_child(dir, 3, "before\nlaunch 3: 2\n3: 1 2 4\n");
	expect_child(dir, 4, "before\nlaunch 4: 2\n3: 1 2 3\n");
	expect_none(dir, 5);
	remove_dir(dir);
}

static void test_sweep_alloc(void **state)
{
	(void)state;
	const char *env[] = {"SIMCUDA_FAIL_ALLOC=3-4", NULL};
	char dir[64];
	int st = run_sweep("sweep", env, dir);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(slurp(dir, "out"), "before\n4: 1 2 3 4\n");
	expect_child(dir, 3, "before\nalloc 3: 2\n4: 1 2 3 4\n");
	expect_child(dir, 4, "before\nalloc 4: 2\n4: 1 2 3 4\n");
	expect_none(dir, 2);
	expect_none(dir, 5);
	remove_dir(dir);
}

static void test_sweep_thread(void **state)
{
	(void)state;
	const char *env[] = {"SIMCUDA_FAIL_LAUNCH=1-", NULL};
	char dir[64];
	int st = run_sweep("sweep-thread", env, dir);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	assert_string_equal(slurp(dir, "err"),
	                    "simcuda: sweep: the process has threads of its own, "
	                    "which a fork would not keep\n");
	remove_dir(dir);
}

static void test_sweep_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *env[3], *message;
	} cases[] = {
	    {{"SIMCUDA_FAIL_LAUNCH=3-2", "SIMCUDA_SWEEP_DIR=/tmp"},
	     "simcuda: invalid SIMCUDA_FAIL_LAUNCH='3-2'"},
	    {{"SIMCUDA_FAIL_ALLOC=-2", "SIMCUDA_SWEEP_DIR=/tmp"},
	     "simcuda: invalid SIMCUDA_FAIL_ALLOC='-2'"},
	    {{"SIMCUDA_FAIL_ALLOC=1-", "SIMCUDA_FAIL_LAUNCH=1-"},
	     "simcuda: invalid SIMCUDA_FAIL_LAUNCH='1-' (expected one sweep at a time"},
	    {{"SIMCUDA_FAIL_ALLOC=1-", "SIMCUDA_SWEEP_DIR=/nonexistent"},
	     "simcuda: invalid SIMCUDA_SWEEP_DIR='/nonexistent'"},
	    {{"SIMCUDA_FAIL_ALLOC=1-"}, "simcuda: invalid SIMCUDA_SWEEP_DIR=''"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct child_result r = run_child("sweep", cases[i].env);
		assert_true(WIFEXITED(r.status));
		assert_int_equal(WEXITSTATUS(r.status), 1);
		if (strstr(r.err, cases[i].message) == NULL)
			fail_msg("for %s expected '%s', got:\n%s", cases[i].env[0],
			         cases[i].message, r.err);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "sweep") == 0)
			return child_sweep();
		if (strcmp(argv[1], "sweep-thread") == 0)
			return child_sweep_thread();
		return 2;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sweep_launch),
	    cmocka_unit_test(test_sweep_alloc),
	    cmocka_unit_test(test_sweep_thread),
	    cmocka_unit_test(test_sweep_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
