/*
 * sweep.c — SIMCUDA_FAIL_ALLOC or SIMCUDA_FAIL_LAUNCH=A-B: a fault sweep
 * that shares the run's prefix.  The process runs without a fault; right
 * before its N-th allocation (launch), for each N from A to B, it forks a
 * child in which that event fails as SIMCUDA_FAIL_*=N fails it in a fresh
 * process, and waits for the child before it goes on.  Every N costs its
 * child's remainder of the run, where a process per N costs the whole run
 * each time.  Child N gets SIMCUDA_SWEEP_DIR/N: its working directory, its
 * stdout and stderr, its report line (report) and exit status (status).
 */
#include "driver.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A hang's limit for one child, not a speed check: it is killed (status
 * 137) and the sweep goes on. */
#define CHILD_LIMIT_S 120

/* The child must be what a fresh process would be at that point:
 *  - the streams' queued work is done and their workers ended before the
 *    fork (streams_park), then started again on both sides: one of the
 *    timings a fresh process may run with, the simulated clock untouched;
 *  - a fork keeps only the calling thread, so a process with threads of its
 *    own (the program's, a preloaded library's) is refused;
 *  - _Fork runs no atfork handler: those of libremat and of this driver are
 *    for forks that must not use the device, and the child is the program
 *    going on;
 *  - VMM memory (memfd pages) would be shared with the parent: vmm_unshare;
 *  - stdout and stderr become files of the child's own, holding what the
 *    parent wrote so far; relative paths land in the child's directory.
 * Other descriptors, as in any fork, stay shared with the parent. */

static _Noreturn void fatal(const char *what, const char *detail)
{
	fprintf(stderr, "simcuda: sweep: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	_exit(1);
}

/* fd becomes dir/name, holding first what was written to fd so far when it
 * is a file: what a fresh process would have written there by now. */
static int own_output(int fd, const char *dir, const char *name)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		char self[32], buf[65536];
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		int in = open(self, O_RDONLY | O_CLOEXEC);
		ssize_t got = 0;
		while (in >= 0 && (got = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)got) != got)
				got = -1;
		if (in >= 0)
			close(in);
		if (in < 0 || got < 0) {
			close(out);
			return -1;
		}
	}
	int rc = dup2(out, fd) < 0 ? -1 : 0;
	close(out);
	return rc;
}

static void child(enum sim_sweep_kind kind, uint64_t n, const char *dir)
{
	static char report[PATH_MAX];
	sim_cfg.sweep = SWEEP_NONE;
	if (kind == SWEEP_ALLOC)
		sim_cfg.fail_alloc = n;
	else
		sim_cfg.fail_launch = n;
	if (own_output(1, dir, "stdout") || own_output(2, dir, "stderr") || chdir(dir))
		fatal(dir, strerror(errno));
	if (vmm_unshare())
		fatal("the child's copy of VMM memory", strerror(errno));
	if (snprintf(report, sizeof(report), "%s/report", dir) >= (int)sizeof(report))
		fatal(dir, "too long a path");
	stats_adopt(report);
	streams_resume();
}

/* Waits for the child, polling so that a hung one can be stopped; writes
 * its status as a shell says it (128 + signal when killed). */
static void wait_child(pid_t pid, const char *dir)
{
	int st = 0;
	long nap_ns = 20000, waited_ns = 0;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			fatal("waiting for a child", strerror(errno));
		if (waited_ns / 1000000000 >= CHILD_LIMIT_S) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		struct timespec ts = {0, nap_ns};
		nanosleep(&ts, NULL);
		waited_ns += nap_ns;
		if (nap_ns < 1000000)
			nap_ns *= 2;
	}
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/status", dir) >= (int)sizeof(path))
		fatal(dir, "too long a path");
	FILE *f = fopen(path, "we");
	if (f == NULL)
		fatal(path, strerror(errno));
	fprintf(f, "%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	fclose(f);
}

void sweep_point(enum sim_sweep_kind kind, uint64_t n)
{
	if (sim_cfg.sweep != kind || n < sim_cfg.sweep_from || n > sim_cfg.sweep_to)
		return;
	char dir[PATH_MAX - 16];
	if (snprintf(dir, sizeof(dir), "%s/%llu", sim_cfg.sweep_dir, (unsigned long long)n) >=
	    (int)sizeof(dir))
		fatal(sim_cfg.sweep_dir, "too long a path");
	if (mkdir(dir, 0755))
		fatal(dir, strerror(errno));
	if (!streams_park())
		fatal("the process has threads of its own, which a fork would not keep", NULL);
	pid_t pid = _Fork();
	if (pid < 0)
		fatal("fork", strerror(errno));
	if (pid == 0) {
		child(kind, n, dir);
		return;
	}
	wait_child(pid, dir);
	streams_resume();
}
