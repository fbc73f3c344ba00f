/*
 * spawn.c — running remat-plan beside the training process.
 *
 * posix_spawn, not fork: the training process has driver threads and big
 * mappings; glibc's posix_spawn uses vfork semantics and runs no
 * allocator or atfork handler in the child.  The planner gets an
 * environment without LD_PRELOAD and REMAT_* so libremat is not loaded
 * into it (it would try to profile the planner).
 *
 * The planner runs under a two-line sh wrapper that renames its output
 * into the cache when it succeeds.  The rename therefore happens even if
 * the training process has exited by then (a short job, a first run that
 * only fills the cache): the next run finds the plan.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * in build/, an install puts both in one prefix). */
static int next_to_library(char *out, size_t n)
{
	Dl_info info;
	if (!dladdr((void *)next_to_library, &info) || !info.dli_fname)
		return -1;
	const char *slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return -1;
	int len =
	    snprintf(out, n, "%.*s/remat-plan", (int)(slash - info.dli_fname), info.dli_fname);
	return len > 0 && (size_t)len < n && executable(out) ? 0 : -1;
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

int acq_settings_read(struct acq_settings *s, char *err, size_t errlen)
{
	s->timeout_s = remat_cfg.plan_timeout_s;
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

/* $1 planner, $2 trace dir, $3 budget, $4 time limit, $5 temporary, $6 cache entry,
 * $7 buffers not to evict (optional).  A failed rename leaves the plan at $5,
 * where the parent looks next. */
static const char wrapper[] =
    "echo \"+ $1 $2 --budget $3 --time-limit $4 -o $5${7:+ --exclude $7}\"\n"
    "\"$1\" \"$2\" --budget \"$3\" --time-limit \"$4\" -o \"$5\" ${7:+--exclude \"$7\"} || exit "
    "$?\n"
    "[ \"$5\" = \"$6\" ] || mv -f \"$5\" \"$6\" || :\n";

pid_t acq_spawn_planner(const struct acq_settings *s, const char *trace_dir, int64_t budget,
                        const char *tmp, const char *dest, const char *log, const char *exclude,
                        char *err, size_t errlen)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write the planner log %s: %s; running unmodified",
		         log, strerror(errno));
		return -1;
	}
	char bs[24], ts[32];
	snprintf(bs, sizeof(bs), "%lld", (long long)budget);
	snprintf(ts, sizeof(ts), "%g", s->timeout_s);
	char *argv[] = {"/bin/sh",
	                "-c",
	                (char *)wrapper,
	                "remat-plan-wrapper",
	                (char *)s->planner,
	                (char *)trace_dir,
	                bs,
	                ts,
	                (char *)tmp,
	                (char *)dest,
	                (char *)exclude,
	                NULL};
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
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
	/* The training process's descriptors (driver, sockets) are not the
	 * planner's business. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
	posix_spawnattr_init(&at);
	/* Own process group: a timeout kills the wrapper and the planner
	 * together.  Default dispositions and an empty mask: the training
	 * process may ignore or block signals the planner must obey. */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	                                  POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	pid_t pid = -1;
	int rc = envp ? posix_spawn(&pid, "/bin/sh", &fa, &at, argv, envp) : ENOMEM;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	close(fd);
	if (rc) {
		snprintf(err, errlen,
		         "cannot start the planner (%s via /bin/sh): %s; running "
		         "unmodified",
		         s->planner, strerror(rc));
		return -1;
	}
	return pid;
}
