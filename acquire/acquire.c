/*
 * acquire.c — getting a plan for the profiled graph while the job keeps
 * training: the cache first, else remat-plan in its own process, polled
 * (never waited for) at iteration boundaries.
 *
 * The cache is read as soon as the profile exists: a cache entry is
 * checked against the profile in memory (graph hash, op and buffer
 * counts, budget), so a hit never waits for the trace writer, which on a
 * loaded machine may take longer than a short job runs.  Only remat-plan
 * reads the trace file: on a miss the acquisition waits (PENDING, no
 * planner yet) until acquire_trace_ready says the file is there.
 *
 * One acquisition at a time, guarded by one mutex: libremat calls in under
 * its own lock, but nothing here relies on that.  Every way this can fail
 * ends in ACQUIRE_FAILED after exactly one message; the caller then keeps
 * running the job unmodified.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/log.h"
#include "acquire.h"
#include "internal.h"

struct acq_state acq = {.lock = PTHREAD_MUTEX_INITIALIZER, .tie = -1};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The one message of a failure: always shown, whatever REMAT_LOG says. */
__attribute__((format(printf, 1, 2))) static enum acquire_state failed(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	remat_warn("%s", msg);
	acq.st = ACQUIRE_FAILED;
	return acq.st;
}

/* A message that does not end the acquisition (a damaged cache entry). */
__attribute__((format(printf, 1, 2))) static void warn(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	remat_warn("%s", msg);
}

/* The last line of the planner log containing needle, or with needle NULL
 * its last "remat-plan: " message (else its last line), without that
 * prefix: the line worth quoting in our one message. */
static void log_line(const char *needle, char *out, size_t n)
{
	snprintf(out, n, "no output");
	FILE *f = fopen(acq.log, "r");
	if (!f)
		return;
	char line[1024];
	int have_msg = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		int msg = !strncmp(line, "remat-plan: ", 12);
		if (!line[0] || line[0] == '+' || (needle && !strstr(line, needle)) ||
		    (!needle && have_msg && !msg))
			continue;
		have_msg |= msg;
		const char *s = msg ? line + 12 : line;
		size_t l = strlen(s) < n - 1 ? strlen(s) : n - 1;
		memcpy(out, s, l);
		out[l] = '\0';
	}
	fclose(f);
}

/* The planner's progress lines (remat-plan --progress) written to its log
 * since the last look, relayed into the job's log at REMAT_LOG=1: whole
 * lines only, from where the last look stopped (acq.progress_off). */
static void relay_progress(void)
{
	static const char tag[] = "remat-plan: progress: ";
	if (remat_cfg.log_level < REMAT_LOG_INFO || !acq.log[0])
		return;
	FILE *f = fopen(acq.log, "r");
	if (!f)
		return;
	char line[1024];
	if (fseeko(f, acq.progress_off, SEEK_SET) == 0)
		while (fgets(line, sizeof(line), f) && strchr(line, '\n')) {
			acq.progress_off = ftello(f);
			line[strcspn(line, "\n")] = '\0';
			if (!strncmp(line, tag, sizeof(tag) - 1))
				remat_log(REMAT_LOG_INFO, "planner: %s", line + sizeof(tag) - 1);
		}
	fclose(f);
}

static void untie(void)
{
	if (acq.tie >= 0)
		close(acq.tie);
	acq.tie = -1;
}

static void kill_planner(void)
{
	untie();
	if (acq.pid <= 0)
		return;
	/* The wrapper leads its own group: this takes the planner with it. */
	kill(-acq.pid, SIGKILL);
	while (waitpid(acq.pid, NULL, 0) < 0 && errno == EINTR)
		;
	acq.pid = 0;
}

static void reset_locked(void)
{
	if (acq.st == ACQUIRE_PENDING && acq.owner == getpid())
		kill_planner();
	pl_plan_free(acq.plan);
	acq.plan = NULL;
	acq.pid = 0;
	acq.st = ACQUIRE_IDLE;
}

static void human(int64_t b, char *buf, size_t n)
{
	snprintf(buf, n, "%.2f MiB", (double)b / (1024.0 * 1024.0));
}

static void ready(struct pl_plan *p, const char *how, const char *path)
{
	if (p->iteration_ns < 0)
		p->iteration_ns = acq.iter_ns;
	acq.plan = p;
	acq.st = ACQUIRE_READY;
	char pk[32], bu[32];
	human(p->peak, pk, sizeof(pk));
	human(p->budget, bu, sizeof(bu));
	if (p->iteration_ns > 0)
		remat_log(REMAT_LOG_INFO,
		          "%s %s (planner %s: peak %s for a budget of %s, recompute %.1f%% of the "
		          "iteration)",
		          how, path, p->planner, pk, bu,
		          100.0 * (double)p->recompute_ns / (double)p->iteration_ns);
	else
		remat_log(REMAT_LOG_INFO, "%s %s (planner %s: peak %s for a budget of %s)", how,
		          path, p->planner, pk, bu);
}

/* A loaded plan that evicts an excluded buffer is refused: verification
 * found its rebuild not bit-identical, whatever the planner thinks. */
static int check_excluded(const struct pl_plan *p, const char *path, char *err, size_t errlen)
{
	for (uint32_t k = 0; k < p->evict_off[p->nops]; k++)
		for (int i = 0; i < acq.nexcl; i++)
			if (p->evict[k] == acq.excl[i]) {
				snprintf(err, errlen,
				         "%.1200s: evicts buffer %d, which must stay resident",
				         path, acq.excl[i]);
				return -1;
			}
	return 0;
}

/* 0, or acq_plan_read's -1 or -2 (changed since written) with err. */
static int load_plan(const char *path, struct pl_plan **p, char *err, size_t errlen)
{
	int rc = acq_plan_read(path, acq.hash, acq.nops, acq.budget, acq.nbufs, p, err, errlen);
	if (rc)
		return rc;
	if (check_excluded(*p, path, err, errlen)) {
		pl_plan_free(*p);
		*p = NULL;
		return -1;
	}
	return 0;
}

/* "--exclude" and "3,17" for remat-plan, and a cache key suffix naming the
 * set (FNV-1a of the sorted ids), so an excluding plan never answers a
 * plain request or the other way round. */
static int exclude_args(char *list, size_t n, char *suffix, size_t sn)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t w = 0;
	list[0] = suffix[0] = '\0';
	for (int i = 0; i < acq.nexcl; i++) {
		int r = snprintf(list + w, n - w, "%s%d", i ? "," : "", acq.excl[i]);
		if (r < 0 || (size_t)r >= n - w)
			return -1;
		w += (size_t)r;
		for (int b = 0; b < 4; b++) {
			h ^= (uint8_t)((uint32_t)acq.excl[i] >> (8 * b));
			h *= 0x100000001b3ull;
		}
	}
	if (acq.nexcl)
		snprintf(suffix, sn, "-x%016llx", (unsigned long long)h);
	return 0;
}

/* The cache entry of a request: <hash>-<budget>[-x<set>][-nooffload].plan.json.
 * A plan made with offload off (REMAT_OFFLOAD=0, or no rate measured) never
 * answers a job that may offload, which would reuse it forever, nor the
 * other way round. */
static void cache_entry(const char *dir, uint64_t graph_hash, int64_t budget, const char *xsuffix,
                        char *out, size_t n)
{
	acq_cache_path(dir, graph_hash, budget, out, n);
	const char *off = acq_offload_gbps() > 0 ? "" : "-nooffload";
	size_t stem = strlen(out) - strlen(".plan.json");
	if (xsuffix[0] || off[0])
		snprintf(out + stem, n - stem, "%s%s.plan.json", xsuffix, off);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* The one way a cached plan is refused, whatever is wrong with it (it does
 * not parse, was made for something else, its checksum does not match, or
 * it fails validation before it applies): one message, the entry kept
 * aside as PATH.rejected (one per entry, the newest kept) for the user or
 * a bug report, and never read again as a plan; the caller plans again.
 * why may start with "PATH: " (acq_plan_read's messages), not repeated.
 * edited: the checksum did not match, so say how an edit on purpose goes
 * back in. */
static void set_aside(const char *path, const char *why, int edited)
{
	size_t pl = strlen(path);
	if (!strncmp(why, path, pl) && !strncmp(why + pl, ": ", 2))
		why += pl + 2;
	char aside[sizeof(acq.final) + 16];
	snprintf(aside, sizeof(aside), "%s.rejected", path);
	int moved = rename(path, aside) == 0;
	if (moved)
		acq_cache_touch(aside); /* pruned by when it was refused, not last used */
	else
		unlink(path);
	warn("cached plan %s rejected: %s; %s%s and planning again (training runs unmodified "
	     "meanwhile%s)",
	     path, why, moved ? "moved it to " : "removed it", moved ? aside : "",
	     edited ? "; a plan edited on purpose needs `remat-plan --rehash FILE` before it "
	              "goes back into the cache"
	            : "");
}

/* A miss (PENDING, no planner yet) once the trace is written: checks that
 * the trace is of this graph, then starts remat-plan.  Returns acq.st. */
static enum acquire_state start_planner(void)
{
	char err[1536];
	struct acq_trace_info ti;
	if (acq_trace_peek(acq.trace_dir, &ti, err, sizeof(err)) == 0) {
		if (ti.graph_hash != acq.hash)
			return failed("%s/trace.json is of graph 0x%016llx, not the profiled "
			              "0x%016llx; running unmodified",
			              acq.trace_dir, (unsigned long long)ti.graph_hash,
			              (unsigned long long)acq.hash);
	} else {
		/* The planner reads the trace too and will say what is wrong. */
		remat_log(REMAT_LOG_DEBUG, "%s", err);
	}
	char xlist[4096], xsuffix[24];
	struct acq_settings s;
	(void)exclude_args(xlist, sizeof(xlist), xsuffix, sizeof(xsuffix)); /* begin checked it */
	if (acq_settings_read(&s, err, sizeof(err)))
		return failed("%s", err);
	snprintf(acq.planner, sizeof(acq.planner), "%s", s.planner);
	snprintf(acq.log, sizeof(acq.log), "%s/plan.log", acq.trace_dir);
	struct acq_planner_run run = {&s,        acq.trace_dir, acq.budget,
	                              acq.final, acq.log,       acq.nexcl ? xlist : NULL};
	pid_t pid = acq_spawn_planner(&run, &acq.tie, err, sizeof(err));
	if (pid < 0)
		return failed("%s", err);
	acq.pid = pid;
	acq.progress_off = 0;
	acq.timeout_s = s.timeout_s;
	/* The time limit bounds the ILP; loading the trace and writing the plan
	 * come on top, hence the grace before the kill. */
	acq.grace_s = s.timeout_s / 2 < 1 ? 1 : s.timeout_s / 2 > 10 ? 10 : s.timeout_s / 2;
	acq.deadline = now_s() + acq.timeout_s + acq.grace_s;
	remat_log(REMAT_LOG_INFO,
	          "planning for a budget of %lld bytes%s%s: %s started (pid %d, log %s)",
	          (long long)acq.budget, acq.nexcl ? ", never evicting buffers " : "",
	          acq.nexcl ? xlist : "", acq.planner, (int)pid, acq.log);
	return acq.st;
}

/* A miss waiting for the trace: the planner starts once it is written;
 * without one there is nothing to plan from, and the writer has said why. */
static enum acquire_state await_trace(void)
{
	if (acq.trace > 0)
		return start_planner();
	if (acq.trace < 0) {
		remat_log(REMAT_LOG_INFO, "no trace to plan from: training continues unmodified");
		acq.st = ACQUIRE_FAILED;
	}
	return acq.st;
}

static int begin(const char *trace_dir, const struct acquire_request *rq, const int32_t *excluded,
                 int n)
{
	char err[1536];
	pthread_mutex_lock(&acq.lock);
	reset_locked();
	free(acq.excl);
	acq.excl = NULL;
	acq.nexcl = 0;
	if (n > 0 && excluded) {
		if (!(acq.excl = malloc((size_t)n * sizeof(*acq.excl)))) {
			failed("out of memory for the excluded buffers; running unmodified");
			pthread_mutex_unlock(&acq.lock);
			return -1;
		}
		memcpy(acq.excl, excluded, (size_t)n * sizeof(*acq.excl));
		qsort(acq.excl, (size_t)n, sizeof(*acq.excl), cmp_i32);
		acq.nexcl = n;
	}
	acq.hash = rq->graph_hash;
	acq.nops = rq->nops;
	acq.budget = rq->budget;
	/* What a plan is checked against: the profile's own figures, the same
	 * the trace file holds once written. */
	acq.nbufs = rq->nbufs;
	acq.iter_ns = rq->iteration_ns;
	acq.from_cache = 0;
	snprintf(acq.trace_dir, sizeof(acq.trace_dir), "%s", trace_dir ? trace_dir : "");
	acq.final[0] = acq.log[0] = acq.cache_dir[0] = '\0';
	int rc = -1;
	if (!trace_dir || !*trace_dir || rq->nops <= 0 || rq->budget <= 0) {
		failed("run mode: no plan can be made (trace directory %s, %d ops, budget %lld)",
		       trace_dir ? trace_dir : "(none)", rq->nops, (long long)rq->budget);
		goto out;
	}
	if (acq_json_ready(err, sizeof(err))) {
		failed("%s", err);
		goto out;
	}
	char xlist[4096], xsuffix[24];
	if (exclude_args(xlist, sizeof(xlist), xsuffix, sizeof(xsuffix))) {
		failed("too many excluded buffers (%d) to pass to remat-plan; running unmodified",
		       acq.nexcl);
		goto out;
	}
	if (acq_cache_dir(acq.cache_dir, sizeof(acq.cache_dir), err, sizeof(err)) == 0) {
		cache_entry(acq.cache_dir, acq.hash, acq.budget, xsuffix, acq.final,
		            sizeof(acq.final));
		if (access(acq.final, F_OK) == 0) {
			struct pl_plan *p;
			int lr = load_plan(acq.final, &p, err, sizeof(err));
			if (lr == 0) {
				acq_cache_touch(acq.final);
				acq.from_cache = 1;
				ready(p, "cached plan", acq.final);
				rc = 0;
				goto out;
			}
			set_aside(acq.final, err, lr == -2);
		}
	} else {
		warn("%s; plans will not be cached", err);
		acq.cache_dir[0] = '\0';
		snprintf(acq.final, sizeof(acq.final), "%s/plan.json", trace_dir);
	}
	/* A miss: remat-plan plans from the trace, now or once it is written. */
	acq.st = ACQUIRE_PENDING;
	acq.pid = 0;
	acq.owner = getpid();
	rc = await_trace() == ACQUIRE_FAILED ? -1 : 0;
out:
	pthread_mutex_unlock(&acq.lock);
	return rc;
}

int acquire_begin(const char *trace_dir, const struct acquire_request *rq)
{
	return begin(trace_dir, rq, NULL, 0);
}

int acquire_begin_excluding(const char *trace_dir, const struct acquire_request *rq,
                            const int32_t *excluded, int n)
{
	return begin(trace_dir, rq, excluded, n);
}

void acquire_trace_ready(int ok)
{
	pthread_mutex_lock(&acq.lock);
	acq.trace = ok ? 1 : -1;
	pthread_mutex_unlock(&acq.lock);
}

/* The planner exited 0: its plan is in the cache (or the trace directory). */
static enum acquire_state planner_done(void)
{
	const char *path = acq.final;
	char err[1536];
	struct pl_plan *p;
	if (load_plan(path, &p, err, sizeof(err))) {
		unlink(path);
		return failed(
		    "remat-plan wrote an unusable plan (removed it): %s; log: %s; running "
		    "unmodified",
		    err, acq.log);
	}
	if (acq.cache_dir[0])
		acq_cache_prune(acq.cache_dir, ACQ_CACHE_KEEP);
	ready(p, "new plan", path);
	return acq.st;
}

static enum acquire_state planner_exited(int status)
{
	char line[512];
	acq.pid = 0;
	untie();
	if (WIFEXITED(status)) {
		int code = WEXITSTATUS(status);
		if (code == 0)
			return planner_done();
		if (code == 3) {
			log_line("smallest reachable peak", line, sizeof(line));
			return failed("REMAT_BUDGET of %lld bytes cannot be reached for this job "
			              "(remat-plan: %s); running unmodified (log: %s)",
			              (long long)acq.budget, line, acq.log);
		}
		if (code > 128 && code < 128 + 65) {
			/* sh reports a child killed by signal n as 128 + n. */
			return failed("remat-plan crashed (signal %d, %s); log: %s; running "
			              "unmodified",
			              code - 128, strsignal(code - 128), acq.log);
		}
		log_line(NULL, line, sizeof(line));
		if (code == 126 || code == 127)
			return failed("could not run %s (%s); log: %s; running unmodified",
			              acq.planner, line, acq.log);
		return failed("remat-plan failed (exit %d: %s); log: %s; running unmodified", code,
		              line, acq.log);
	}
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	return failed("remat-plan crashed (signal %d, %s); log: %s; running unmodified", sig,
	              strsignal(sig), acq.log);
}

static enum acquire_state timed_out(int reap)
{
	if (reap)
		kill_planner();
	else {
		kill(-acq.pid, SIGKILL);
		acq.pid = 0;
		untie();
	}
	return failed("remat-plan did not finish within REMAT_PLAN_TIMEOUT=%g s (killed after "
	              "%g s more); log: %s; running unmodified",
	              acq.timeout_s, acq.grace_s, acq.log);
}

static enum acquire_state poll_pending(void)
{
	if (!acq.pid)
		return await_trace();
	int status;
	pid_t r;
	while ((r = waitpid(acq.pid, &status, WNOHANG)) < 0 && errno == EINTR)
		;
	relay_progress();
	if (r == acq.pid)
		return planner_exited(status);
	if (r == 0)
		return now_s() > acq.deadline ? timed_out(1) : ACQUIRE_PENDING;
	/* ECHILD: the process ignores SIGCHLD (children are reaped by the
	 * kernel) or someone else reaped ours.  The exit status is lost; the
	 * plan file, if any, still tells. */
	if (kill(acq.pid, 0) == 0)
		return now_s() > acq.deadline ? timed_out(0) : ACQUIRE_PENDING;
	acq.pid = 0;
	untie();
	if (access(acq.final, F_OK) == 0)
		return planner_done();
	char line[512];
	log_line(NULL, line, sizeof(line));
	return failed("remat-plan ended without a plan and its exit status was lost (%s); "
	              "log: %s; running unmodified",
	              line, acq.log);
}

enum acquire_state acquire_poll(struct pl_plan **out)
{
	if (out)
		*out = NULL;
	pthread_mutex_lock(&acq.lock);
	enum acquire_state st = acq.st;
	/* A forked child inherits the state, not the planner: only the parent
	 * may wait for it. */
	if (st == ACQUIRE_PENDING && acq.owner == getpid())
		st = poll_pending();
	if (st == ACQUIRE_READY && out) {
		/* Handed over once; the acquisition is then over (IDLE). */
		*out = acq.plan;
		acq.plan = NULL;
		acq.st = ACQUIRE_IDLE;
	}
	pthread_mutex_unlock(&acq.lock);
	return st;
}

void acquire_reset(void)
{
	pthread_mutex_lock(&acq.lock);
	reset_locked();
	acq.trace = 0; /* a new profile comes, and its own trace */
	pthread_mutex_unlock(&acq.lock);
}

void acquire_invalidate_cached(uint64_t graph_hash, int64_t budget)
{
	char dir[PATH_MAX], path[PATH_MAX + 128], err[512], xlist[4096], xsuffix[24];
	pthread_mutex_lock(&acq.lock);
	/* The plan in force came from the entry of the exclusions it was
	 * asked with (kept until the next request): that one goes. */
	if (exclude_args(xlist, sizeof(xlist), xsuffix, sizeof(xsuffix)) == 0 &&
	    acq_cache_dir(dir, sizeof(dir), err, sizeof(err)) == 0) {
		cache_entry(dir, graph_hash, budget, xsuffix, path, sizeof(path));
		if (unlink(path) == 0)
			remat_log(REMAT_LOG_INFO, "removed cached plan %s", path);
	}
	pthread_mutex_unlock(&acq.lock);
}

int acquire_reject(const char *why)
{
	pthread_mutex_lock(&acq.lock);
	char path[sizeof(acq.final)], dir[sizeof(acq.trace_dir)];
	snprintf(path, sizeof(path), "%s", acq.final);
	snprintf(dir, sizeof(dir), "%s", acq.trace_dir);
	int from_cache = acq.from_cache;
	if (!from_cache) {
		/* remat-plan checked this plan with its own evaluator: a plan it
		 * made and this check refuses is a bug in one of them, and asking
		 * again would give the same plan. */
		failed("plan %s rejected: %s; remat-plan and libremat disagree about it (a bug: "
		       "please report it with the trace in %s); training continues unmodified",
		       path, why, dir);
		pthread_mutex_unlock(&acq.lock);
		return -1;
	}
	/* Anything of the user's can write the cache: a damaged entry goes
	 * aside, and the trace is planned again. */
	set_aside(path, why, 0);
	int32_t *excl = NULL;
	int n = acq.nexcl;
	if (n && (excl = malloc((size_t)n * sizeof(*excl))))
		memcpy(excl, acq.excl, (size_t)n * sizeof(*excl));
	struct acquire_request rq = {acq.hash, acq.nops, acq.nbufs, acq.iter_ns, acq.budget};
	pthread_mutex_unlock(&acq.lock);
	int rc = n && !excl ? -1 : begin(dir, &rq, excl, n);
	free(excl);
	return rc;
}

void acquire_fork_child(void)
{
	/* The child's copy of the tie must not keep the planner alive (nor
	 * kill it when the child ends): only the parent's counts. */
	if (acq.tie >= 0)
		close(acq.tie);
	acq.tie = -1;
}

/* A job that exits normally while remat-plan runs lets it finish within
 * its deadline, so the plan serves the next run; any other end of the job
 * closes the tie without a word and the planner ends at once (spawn.c). */
__attribute__((destructor)) static void acquire_at_exit(void)
{
	if (pthread_mutex_trylock(&acq.lock))
		return;
	if (acq.st == ACQUIRE_PENDING && acq.owner == getpid() && acq.tie >= 0) {
		double left = acq.deadline - now_s();
		int status;
		pid_t r = waitpid(acq.pid, &status, WNOHANG);
		if (r == acq.pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			/* It ended after the job's last poll (polls come once an
			 * iteration): say where its plan is, as a poll would have. */
			acq.pid = 0;
			remat_log(REMAT_LOG_INFO,
			          "remat-plan finished as the job ended: its plan is in %s for the "
			          "next run",
			          acq.final);
		} else if (r == acq.pid) {
			planner_exited(status); /* failed: one message, as a poll gives */
		} else if (acq.cache_dir[0] && left > 0) {
			char word[32];
			int n = snprintf(word, sizeof(word), "%.3f\n", left);
			if (send(acq.tie, word, (size_t)n, MSG_NOSIGNAL) == n)
				remat_log(
				    REMAT_LOG_INFO,
				    "the job ended before remat-plan finished; it may go on for "
				    "%.0f s more and store its plan in %s for the next run",
				    left, acq.cache_dir);
			/* It ended between the check above and the send. */
			else if (waitpid(acq.pid, &status, WNOHANG) == acq.pid &&
			         WIFEXITED(status) && WEXITSTATUS(status) == 0)
				remat_log(
				    REMAT_LOG_INFO,
				    "remat-plan finished as the job ended: its plan is in %s for "
				    "the next run",
				    acq.final);
		}
		untie();
	}
	pthread_mutex_unlock(&acq.lock);
}
