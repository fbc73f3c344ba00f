/*
 * child.h — running a test scenario in a child process (this test binary
 * again, as `self MODE`): for faults and aborts, which end the process,
 * and for SIMCUDA_* settings, which are read at load time.  Include after
 * <cmocka.h>.
 */
#ifndef SIMCUDA_TEST_CHILD_H
#define SIMCUDA_TEST_CHILD_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a child scenario did: exit status and its stdout and stderr. */
struct child_result {
	int status;
	char err[8192];
};

/* Runs this test binary again as `self MODE` with extra environment
 * entries ("NAME=value", NULL-terminated), collecting its output. */
static inline struct child_result run_child(const char *mode, const char *const *env)
{
	struct child_result r = {0};
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		for (const char *const *e = env; e && *e; e++)
			putenv((char *)*e);
		char *argv[] = {"self", (char *)mode, NULL};
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(fds[1]);
	size_t n = 0;
	ssize_t got;
	while ((got = read(fds[0], r.err + n, sizeof(r.err) - 1 - n)) > 0)
		n += (size_t)got;
	r.err[n] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &r.status, 0), pid);
	return r;
}

/* Fails unless the child's output holds line. */
static inline void expect_line(const char *out, const char *line)
{
	if (strstr(out, line) == NULL)
		fail_msg("expected '%s' in:\n%s", line, out);
}

static inline void assert_exit_ok(const struct child_result *r)
{
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
		fail_msg("child failed (status 0x%x), stderr:\n%s", r->status, r->err);
}

static inline void assert_died_with(const struct child_result *r, const char *text)
{
	if (!WIFSIGNALED(r->status) || WTERMSIG(r->status) != SIGABRT)
		fail_msg("child should have aborted (status 0x%x), stderr:\n%s", r->status, r->err);
	if (strstr(r->err, text) == NULL)
		fail_msg("child stderr lacks '%s':\n%s", text, r->err);
}

#endif
