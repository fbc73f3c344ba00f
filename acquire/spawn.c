/*
 * spawn.c — running remat-plan beside the training process.
 *
 * posix_spawn, not fork: the training process has driver threads and big
 * mappings; glibc's posix_spawn uses vfork semantics and runs no
 * allocator or atfork handler in the child.  The planner gets an
 * environment without LD_PRELOAD and REMAT_* so libremat is not loaded
 * into it (it would try to profile the planner).
 *
 * remat-plan writes its plan straight into the cache (under a name of its
 * own, renamed when complete).  It runs under a few lines of sh that tie
 * its life to the job's through a socket on fd 3, whatever the planner is
 * (REMAT_PLANNER may name anything): the socket closing without a word (the
 * job killed, or ended without its exit handlers) kills the planner's
 * process group at once; after a normal exit the job sends the seconds
 * left to the deadline, and the group dies when they are up, so a short
 * first run still leaves its plan for the next.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/config.h"
#include "internal.h"

extern char **environ;

static int executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* remat-plan in the directory libremat.so was loaded from (make puts both
 * in build/), or in ../bin beside it (make install: PREFIX/lib and
 * PREFIX/bin). */
static int next_to_library(char *out, size_t n)
{
	static const char *const where[] = {"/remat-plan", "/../bin/remat-plan"};
	Dl_info info;
	if (!dladdr((void *)next_to_library, &info) || !info.dli_fname)
		return -1;
	const char *slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return -1;
	for (int i = 0; i < 2; i++) {
		int len = snprintf(out, n, "%.*s%s", (int)(slash - info.dli_fname), info.dli_fname,
		                   where[i]);
		if (len > 0 && (size_t)len < n && executable(out))
			return 0;
	}
	return -1;
}

static int on_path(char *out, size_t n)
{
	const char *p = remat_cfg.path;
	while (p && *p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (len) {
			int w = snprintf(out, n, "%.*s/remat-plan", (int)len, p);
			if (w > 0 && (size_t)w < n && executable(out))
				return 0;
		}
		p = colon ? colon + 1 : NULL;
	}
	return -1;
}

void acquire_offload(double gbps)
{
	acq.offload_gbps = gbps;
}

double acq_offload_gbps(void)
{
	return acq.offload_gbps;
}

int acq_settings_read(struct acq_settings *s, char *err, size_t errlen)
{
	s->timeout_s = remat_cfg.plan_timeout_s;
	s->offload_gbps = acq.offload_gbps;
	const char *pl = remat_cfg.planner;
	if (pl[0]) {
		/* Checked at start; it may have gone since. */
		if (!executable(pl)) {
			snprintf(
			    err, errlen,
			    "REMAT_PLANNER=\"%s\" is not an executable file; running unmodified",
			    pl);
			return -1;
		}
		snprintf(s->planner, sizeof(s->planner), "%s", pl);
		return 0;
	}
	if (next_to_library(s->planner, sizeof(s->planner)) == 0 ||
	    on_path(s->planner, sizeof(s->planner)) == 0)
		return 0;
	snprintf(err, errlen,
	         "run mode needs the remat-plan command: not next to libremat.so nor on PATH "
	         "(set REMAT_PLANNER=/path/to/remat-plan); running unmodified");
	return -1;
}

char **acq_child_env(char *const *env)
{
	size_t n = 0;
	while (env && env[n])
		n++;
	char **out = malloc((n + 1) * sizeof(*out));
	if (!out)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], "LD_PRELOAD=", 11) && strncmp(env[i], "REMAT_", 6))
			out[k++] = env[i];
	out[k] = NULL;
	return out;
}

/* The watcher reads the job's word on fd 3: none (end of file) ends the
 * group now; "SECONDS" ends it then.  The planner runs without fd 3, and
 * its exit status is the wrapper's; the watcher goes with the wrapper. */
static const char wrapper[] = "{ if read -r left <&3; then sleep \"$left\"; fi; kill -KILL 0; } &\n"
                              "watcher=$!\n"
                              "\"$@\" 3<&-\n"
                              "rc=$?\n"
                              "kill -KILL $watcher 2>/dev/null\n"
                              "exit $rc\n";

/* The wrapper's command line: argv[FIRST..argc) is the planner's own. */
#define FIRST 4
struct cmdline {
	char *argv[20];
	int argc;
	char budget[24], time_limit[32], gbps[32];
};

static void cmdline_make(const struct acq_planner_run *r, struct cmdline *cl)
{
	const struct acq_settings *s = r->settings;
	snprintf(cl->budget, sizeof(cl->budget), "%lld", (long long)r->budget);
	snprintf(cl->gbps, sizeof(cl->gbps), "%.4g", s->offload_gbps);
	snprintf(cl->time_limit, sizeof(cl->time_limit), "%g", s->timeout_s);
	char *head[] = {"/bin/sh", "-c", (char *)wrapper, "remat-plan-wrapper", (char *)s->planner,
	                (char *)r->trace_dir, "--budget", cl->budget, "--time-limit",
	                cl->time_limit, "-o", (char *)r->dest,
	                /* a line per stage into the log, relayed at REMAT_LOG=1 */
	                "--progress",
	                /* stashes and buffers unmapped at the boundary: replay/ runs them */
	                "--plan-version", "2"};
	cl->argc = 0;
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		cl->argv[cl->argc++] = head[i];
	if (r->exclude) {
		cl->argv[cl->argc++] = "--exclude";
		cl->argv[cl->argc++] = (char *)r->exclude;
	}
	/* offload to host memory: plan version 3 (replay/offload.c) */
	if (s->offload_gbps > 0) {
		cl->argv[cl->argc++] = "--offload-gbps";
		cl->argv[cl->argc++] = cl->gbps;
	}
	cl->argv[cl->argc] = NULL;
}

/* The planner's log, opened with the command first, as a shell would echo
 * it; -1 + err. */
static int log_open(const char *log, const struct cmdline *cl, char *err, size_t errlen)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write the planner log %s: %s; running unmodified",
		         log, strerror(errno));
		return -1;
	}
	dprintf(fd, "+");
	for (int i = FIRST; i < cl->argc; i++)
		dprintf(fd, " %s", cl->argv[i]);
	dprintf(fd, "\n");
	return fd;
}

/* A socket rather than a pipe: the job's word to the planner goes with
 * MSG_NOSIGNAL, so a planner already gone raises no SIGPIPE here.  The
 * wrapper's end (*far) is moved above 3 so that the dup2 onto 3 in the
 * child always clears its close-on-exec flag.  The job's end, or -1 + err. */
static int tie_open(int *far, char *err, size_t errlen)
{
	int sv[2] = {-1, -1};
	*far = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		*far = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
		close(sv[1]);
	}
	if (*far < 0) {
		snprintf(err, errlen,
		         "cannot tie the planner to this process: %s; running unmodified",
		         strerror(errno));
		if (sv[0] >= 0)
			close(sv[0]);
		return -1;
	}
	return sv[0];
}

/* posix_spawn of the wrapper, its output to fd and the tie's far end on
 * fd 3: 0 or the error number. */
static int spawn(const struct cmdline *cl, int fd, int far, pid_t *pid)
{
	char **envp = acq_child_env(environ);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	sigdelset(&all, SIGKILL);
	sigdelset(&all, SIGSTOP);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_adddup2(&fa, fd, 2);
	posix_spawn_file_actions_adddup2(&fa, far, 3);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
	/* The training process's descriptors (driver, sockets) are not the
	 * planner's business. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 4);
#endif
	posix_spawnattr_init(&at);
	/* Own process group: a timeout kills the wrapper, the planner and the
	 * watcher together.  Default
	 * dispositions and an empty mask: the training process may ignore or
	 * block signals the planner must obey. */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	                                  POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	int rc = envp ? posix_spawn(pid, "/bin/sh", &fa, &at, cl->argv, envp) : ENOMEM;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	return rc;
}

pid_t acq_spawn_planner(const struct acq_planner_run *r, int *tie, char *err, size_t errlen)
{
	*tie = -1;
	struct cmdline cl;
	cmdline_make(r, &cl);
	int fd = log_open(r->log, &cl, err, errlen);
	if (fd < 0)
		return -1;
	int far, near = tie_open(&far, err, errlen);
	if (near < 0) {
		close(fd);
		return -1;
	}
	pid_t pid = -1;
	int rc = spawn(&cl, fd, far, &pid);
	close(fd);
	close(far);
	if (rc) {
		close(near);
		snprintf(err, errlen, "cannot start the planner %s: %s; running unmodified",
		         r->settings->planner, strerror(rc));
		return -1;
	}
	*tie = near;
	return pid;
}
