/* Runs the user's command under libremat: the preload and the REMAT_*
 * variables set for it, its log in the trace directory (followed while it
 * runs, its progress lines shown on a terminal), and at the end the report
 * files and the summary.
 *
 * The job's stdin, stdout and stderr are its own: remat writes only to
 * stderr, its lines prefixed "remat: ", so the job's output is the same
 * bytes as without remat.  Its exit status is remat's.
 */
#include "remat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static pid_t child = -1;

/* Ctrl-C reaches the job through the terminal's process group; remat
 * stays to say what happened.  A TERM or HUP sent to remat alone is
 * passed on. */
static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int mkdirs(const char *dir)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

static int set(const char *name, const char *value)
{
	if (setenv(name, value, 1) == 0)
		return 0;
	fprintf(stderr, "remat: cannot set %s: %s\n", name, strerror(errno));
	return -1;
}

/* The job's environment: remat's own plus what libremat needs.  A preload
 * already there stays first (a sanitizer runtime must be). */
static int environment(const struct remat_job *job, const char *lib, const char *log)
{
	char buf[2 * PATH_MAX], plan[PATH_MAX];
	const char *pre = getenv("LD_PRELOAD");
	snprintf(buf, sizeof(buf), "%s%s%s", pre && *pre ? pre : "", pre && *pre ? ":" : "", lib);
	if (set("LD_PRELOAD", buf) || set("REMAT_MODE", job->run ? "run" : "trace") ||
	    set("REMAT_TRACE_DIR", job->trace_dir) || set("REMAT_LOG_FILE", log))
		return -1;
	/* At least the progress lines; a user asking for debug keeps it. */
	const char *lv = getenv("REMAT_LOG");
	if ((!lv || !strcmp(lv, "0") || !strcmp(lv, "off") || !*lv) && set("REMAT_LOG", "1"))
		return -1;
	if (job->budget && set("REMAT_BUDGET", job->budget))
		return -1;
	if (job->verify && set("REMAT_VERIFY", "1"))
		return -1;
	if (!job->run)
		unsetenv("REMAT_BUDGET");
	/* The planner beside remat, unless the user names another. */
	if (job->run && !getenv("REMAT_PLANNER") &&
	    remat_find_tool("remat-plan", plan, sizeof(plan)) == 0 && set("REMAT_PLANNER", plan))
		return -1;
	return 0;
}

/* Shows the log lines written since *off (whole lines only). */
static void follow(int fd, off_t *off, bool show)
{
	char buf[8192];
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, *off);
		if (n <= 0)
			return;
		buf[n] = '\0';
		char *end = strrchr(buf, '\n');
		if (!end) {
			if (n == (ssize_t)sizeof(buf) - 1) /* an endless line: skip it */
				*off += n;
			return;
		}
		*off += end - buf + 1;
		*end = '\0';
		for (char *line = buf, *nl; show && line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			const char *text = strncmp(line, "libremat: ", 10) ? line : line + 10;
			fprintf(stderr, "remat: %s\n", text);
		}
	}
}

static int spawn(char **argv, int *status)
{
	posix_spawnattr_t at;
	sigset_t none, dflt;
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGQUIT);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	int rc = posix_spawnp(&child, argv[0], NULL, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	if (rc) {
		*status = rc == ENOENT ? REMAT_EXIT_NOTFOUND : REMAT_EXIT_NOEXEC;
		fprintf(stderr, "remat: %s: %s\n", argv[0],
		        rc == ENOENT ? "command not found" : strerror(rc));
		return -1;
	}
	return 0;
}

static int wait_job(int logfd, off_t *off, bool show)
{
	int status;
	for (;;) {
		pid_t r = waitpid(child, &status, WNOHANG);
		if (r == child)
			break;
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "remat: lost the job: %s\n", strerror(errno));
			return REMAT_EXIT_FAILED;
		}
		if (logfd >= 0)
			follow(logfd, off, show);
		nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
	}
	if (logfd >= 0)
		follow(logfd, off, show);
	/* As a shell reports it: 128 + the signal that ended it. */
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* report.html and timeline.json in the trace directory, with the plan
 * when one applied.  0 when written; the tool's message otherwise. */
static int write_report(const struct remat_job *job, const struct remat_outcome *o, char *html,
                        char *timeline, size_t len)
{
	char tool[PATH_MAX], out[PATH_MAX + 32];
	if (remat_find_tool("remat-report", tool, sizeof(tool))) {
		fprintf(stderr, "remat: no remat-report next to remat: no report written\n");
		return -1;
	}
	snprintf(html, len, "%s/report.html", job->trace_dir);
	snprintf(timeline, len, "%s/timeline.json", job->trace_dir);
	snprintf(out, sizeof(out), "%s/report.txt", job->trace_dir);
	char *argv[12] = {tool, "--html", html, "--perfetto", timeline};
	int argc = 5;
	if (o->plan_applied && o->plan_path[0] && access(o->plan_path, R_OK) == 0) {
		argv[argc++] = "--plan";
		argv[argc++] = (char *)o->plan_path;
	}
	argv[argc++] = (char *)job->trace_dir;
	argv[argc] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	unsetenv("LD_PRELOAD");
	pid_t pid;
	int status = -1, rc = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	while (rc == 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int remat_job_run(const struct remat_job *job)
{
	char lib[PATH_MAX], log[PATH_MAX + 16];
	char *real;
	if (remat_find_library(lib, sizeof(lib)) || !(real = realpath(lib, NULL))) {
		fprintf(stderr, "remat: libremat.so is neither next to remat nor in ../lib "
		                "(a build tree or an installed prefix)\n");
		return REMAT_EXIT_FAILED;
	}
	snprintf(lib, sizeof(lib), "%s", real);
	free(real);
	if (job->run && !job->budget && !getenv("REMAT_BUDGET")) {
		fprintf(stderr, "remat: run needs a budget: --budget 12G or --budget 60%% (or "
		                "REMAT_BUDGET)\n");
		return REMAT_EXIT_USAGE;
	}
	if (mkdirs(job->trace_dir)) {
		fprintf(stderr, "remat: cannot create the trace directory %s: %s\n", job->trace_dir,
		        strerror(errno));
		return REMAT_EXIT_FAILED;
	}
	snprintf(log, sizeof(log), "%s/remat.log", job->trace_dir);
	/* Each run its own log (libremat appends: forked ranks share it). */
	int logfd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (logfd < 0) {
		fprintf(stderr, "remat: cannot write %s: %s\n", log, strerror(errno));
		return REMAT_EXIT_FAILED;
	}
	if (environment(job, lib, log)) {
		close(logfd);
		return REMAT_EXIT_FAILED;
	}
	bool show = job->progress > 0 || (job->progress < 0 && isatty(STDERR_FILENO));
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, pass_on);
	signal(SIGHUP, pass_on);
	int status;
	off_t off = 0;
	if (spawn(job->argv, &status) == 0)
		status = wait_job(logfd, &off, show);
	else {
		close(logfd);
		return status;
	}

	struct remat_outcome o;
	FILE *f = fdopen(logfd, "r");
	remat_outcome_read(f, &o);
	if (f)
		fclose(f);
	char html[PATH_MAX + 16], timeline[PATH_MAX + 16];
	bool report = job->report && o.trace_written[0] &&
	              write_report(job, &o, html, timeline, sizeof(html)) == 0;
	remat_summary_print(stderr, job, &o, log, report ? html : NULL, report ? timeline : NULL);
	return status;
}

int remat_exec_tool(const char *name, char **argv)
{
	char tool[PATH_MAX];
	if (remat_find_tool(name, tool, sizeof(tool))) {
		fprintf(stderr, "remat: %s is not next to remat\n", name);
		return REMAT_EXIT_FAILED;
	}
	argv[0] = tool;
	execv(tool, argv);
	fprintf(stderr, "remat: cannot run %s: %s\n", tool, strerror(errno));
	return REMAT_EXIT_FAILED;
}
