/*
 * proof_guard.c — what happens when a proof's second launch never ends.
 *
 * The proofs (delta.c) launch a kernel again on content it never ran on.
 * Their default perturbs only data words, so that a kernel synchronizing
 * its blocks through a counter or a flag runs as it did; a kernel that
 * synchronizes through something the rule cannot tell from data could
 * still spin forever, and a GPU cannot stop one kernel without losing the
 * context.  Nothing in the process can then recover, so this module makes
 * the hang visible and keeps it from happening twice:
 *
 *  - while a second launch runs, a marker file in the plan cache
 *    directory names it (proof-launch-<program>-<pid>: the op and the
 *    kernel), removed when the launch returns;
 *  - the wait for it polls: after 10 s one message says what is running
 *    and what to do;
 *  - at the next profile of the same program (the same command line), a
 *    marker left by a process that no longer exists means that process
 *    died inside a second launch (killed while hung, or the launch
 *    faulted): the proofs stay off, with one message, unless the user
 *    set REMAT_WRITE_PROOF.  Deleting the marker tries them again.
 *
 * Every failure here (no cache directory, a full disk) only leaves the
 * guard out: the proofs run as they would have.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

#define PREFIX     "proof-launch-"
#define WARN_AFTER 10.0 /* seconds */

/* The guard of this process's second launches. */
static struct prof_guard {
	char marker[PATH_MAX]; /* this process's marker; "" when the guard is out */
	char program[17];      /* the command line's hash, hex */
	CUevent done_event;
} gd;

/* FNV-1a of /proc/self/cmdline: ranks and reruns of one command share it. */
static void program_key(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	FILE *f = fopen("/proc/self/cmdline", "rb");
	int c;
	while (f && (c = getc(f)) != EOF)
		h = (h ^ (uint8_t)c) * 0x100000001b3ull;
	if (f)
		fclose(f);
	snprintf(gd.program, sizeof(gd.program), "%016llx", (unsigned long long)h);
}

/* A marker of this program's left by a dead process, into found; 1 if one. */
static int stale_marker(char *found, size_t n)
{
	DIR *d = opendir(remat_cfg.cache_dir);
	if (!d)
		return 0;
	char head[64];
	int len = snprintf(head, sizeof(head), PREFIX "%s-", gd.program);
	struct dirent *e;
	int hit = 0;
	while (!hit && (e = readdir(d))) {
		if (strncmp(e->d_name, head, (size_t)len))
			continue;
		char *end;
		long pid = strtol(e->d_name + len, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* alive (another rank, mid-launch) */
		hit = snprintf(found, n, "%s/%s", remat_cfg.cache_dir, e->d_name) < (int)n;
	}
	closedir(d);
	return hit;
}

int prof_guard_begin(void)
{
	gd.marker[0] = '\0';
	program_key();
	char stale[PATH_MAX];
	if (stale_marker(stale, sizeof(stale)) && !remat_cfg.write_proof_set) {
		char what[256] = "";
		FILE *f = fopen(stale, "r");
		if (f) {
			if (!fgets(what, sizeof(what), f))
				what[0] = '\0';
			fclose(f);
		}
		what[strcspn(what, "\n")] = '\0';
		remat_log(
		    REMAT_LOG_ERROR,
		    "a previous run of this program ended inside a proof's second launch (%s): "
		    "the proofs stay off for it (REMAT_WRITE_PROOF=0; less can be saved). Delete "
		    "%s or set REMAT_WRITE_PROOF to try them again",
		    what[0] ? what : "no detail", stale);
		return 1;
	}
	/* Only the leaf is made: a cache directory's parents are the user's. */
	if (mkdir(remat_cfg.cache_dir, 0700) && errno != EEXIST)
		return 0;
	if (snprintf(gd.marker, sizeof(gd.marker), "%s/" PREFIX "%s-%ld", remat_cfg.cache_dir,
	             gd.program, (long)getpid()) >= (int)sizeof(gd.marker))
		gd.marker[0] = '\0';
	return 0;
}

void prof_guard_enter(size_t op, const char *kernel)
{
	if (!gd.marker[0])
		return;
	int fd = open(gd.marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	char line[320];
	int n = snprintf(line, sizeof(line), "op %zu, kernel %s\n", op, kernel ? kernel : "?");
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	if (write(fd, line, (size_t)n) != n)
		remat_log(REMAT_LOG_DEBUG, "proof guard: %s not written", gd.marker);
	close(fd);
}

void prof_guard_leave(void)
{
	if (gd.marker[0])
		unlink(gd.marker);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

CUresult prof_guard_wait(CUstream stream, size_t op, const char *kernel)
{
	if (!gd.done_event &&
	    remat_drv.cuEventCreate(&gd.done_event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
		gd.done_event = NULL;
	if (!gd.done_event || remat_drv.cuEventRecord(gd.done_event, stream) != CUDA_SUCCESS)
		return remat_drv.cuStreamSynchronize(stream);
	double start = now_s();
	int warned = 0;
	for (unsigned polls = 0;; polls++) {
		CUresult r = remat_drv.cuEventQuery(gd.done_event);
		if (r != CUDA_ERROR_NOT_READY)
			return r;
		if (!warned && now_s() - start > WARN_AFTER) {
			warned = 1;
			remat_log(
			    REMAT_LOG_ERROR,
			    "op %zu (%s), launched a second time to prove what it writes "
			    "(REMAT_WRITE_PROOF), has not finished after %.0f s: it may wait on "
			    "memory the proof changed, which no GPU can interrupt. If the job "
			    "stays stuck, stop it: the next run of this program leaves the proofs "
			    "off",
			    op, kernel ? kernel : "?", WARN_AFTER);
		}
		/* Most launches end within microseconds: spin a little first. */
		if (polls < 256)
			sched_yield();
		else
			nanosleep(&(struct timespec){0, 100000}, NULL);
	}
}
