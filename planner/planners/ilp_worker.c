/*
 * ilp_worker.c — the ILP in a child process, so the command's time limit
 * holds.  GLPK checks its clock only in places: its MIP presolver, the
 * conflict graph of its clique cuts and its feasibility pump check none,
 * and glp_intopt gives the root LP and then the search each the whole
 * limit.  On a 10k-op transformer that put remat-plan 2 to 4 s past a
 * 30 s --time-limit.  A search inside the process cannot be stopped
 * from outside; a child can: it sends each incumbent up a pipe as it
 * finds one (ilp.c's sink), and at the deadline the parent keeps the
 * last one whole and kills it.  The child also aims to finish a little
 * early, with its final answer (bound, optimality) sent last.
 *
 * Only remat-plan's own process runs the planner (run mode starts it as
 * a command), never the training process, so forking here touches no
 * one's training.  Where fork or pipe fail the ILP runs in the process,
 * as before.
 */
#include "ilp_internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct message {
	struct pl_ilp_result r;
	int32_t n; /* bytes of selection that follow */
};

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;
	while (len > 0) {
		ssize_t w = write(fd, c, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		len -= (size_t)w;
	}
	return 0;
}

static void send_message(int fd, const struct message *m, const uint8_t *chosen)
{
	/* a failed write leaves a message cut short, which the parent drops */
	if (write_all(fd, m, sizeof(*m)) == 0)
		write_all(fd, chosen, (size_t)m->n);
}

static void put_incumbent(void *arg, const uint8_t *chosen, int32_t n, double obj, double lp_bound)
{
	struct message m = {.n = n};
	m.r.status = 0;
	m.r.lp_bound = lp_bound;
	m.r.gap = lp_bound >= 0 && obj > 0 ? (obj - lp_bound) / obj : -1;
	m.r.peak = -1;
	send_message(*(const int *)arg, &m, chosen);
}

static void child(int fd, const struct pl_ilp_task *t)
{
	int32_t N = t->cs->ncands;
	uint8_t *chosen = malloc(N ? (size_t)N : 1);
	struct pl_ilp_sink sink = {put_incumbent, &fd};
	struct message m = {.n = N}; /* the search's own end: status, bound, optimality */
	/* GLPK's limits end just ahead of the parent's deadline: where it
	 * keeps to them the final answer arrives, where it overruns them the
	 * last incumbent stands */
	double own = t->time_limit * 0.98 - 0.02;
	struct pl_ilp_task own_task = *t;
	own_task.time_limit = own > 0.05 ? own : 0.05;
	own_task.sink = &sink;
	if (!chosen || pl_ilp(&own_task, chosen, &m.r))
		_exit(1); /* out of memory: the parent goes on without an answer */
	send_message(fd, &m, chosen);
	fflush(
	    stdout); /* GLPK's messages at -v (what remat-plan had was flushed before the fork) */
	_exit(0);
}

/* What has come from the child: the last whole message and its selection. */
struct reply {
	struct message last;
	uint8_t *chosen;
	int got;
};

/* Reads what arrives until EOF or `until`: the last whole message into
 * rp (rp->got = 1).  Whether the child ended by itself. */
static int collect(int fd, int32_t N, double until, struct reply *rp)
{
	size_t need = sizeof(struct message) + (size_t)N, have = 0;
	uint8_t *buf = malloc(need);
	if (!buf)
		return 0;
	for (;;) {
		double left = until - pl_now();
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, (int)(left * 1000) + 1);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		ssize_t rd = read(fd, buf + have, need - have);
		if (rd < 0 && errno == EINTR)
			continue;
		if (rd < 0)
			break; /* (then stopped, not waited for) */
		if (rd == 0) {
			free(buf);
			return 1;
		}
		have += (size_t)rd;
		if (have < sizeof(struct message))
			continue;
		struct message m;
		memcpy(&m, buf, sizeof(m));
		if (m.n != N) /* not ours: nothing more can be trusted */
			break;
		if (have == need) {
			rp->last = m;
			memcpy(rp->chosen, buf + sizeof(m), (size_t)N);
			rp->got = 1;
			have = 0;
		}
	}
	free(buf);
	return 0;
}

int pl_ilp_child(const struct pl_ilp_task *t, uint8_t *chosen, struct pl_ilp_result *r)
{
	double until = pl_now() + t->time_limit;
	int fds[2];
	if (t->cs->ncands == 0 || pipe(fds))
		return pl_ilp(t, chosen, r);
	fflush(stdout); /* or the child's copy of it goes out twice */
	pid_t parent = getpid(), pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return pl_ilp(t, chosen, r);
	}
	if (pid == 0) {
		/* it dies with remat-plan (run mode kills a planner that
		 * overstays), not after its own limits */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(fds[0]);
		child(fds[1], t);
	}
	close(fds[1]);
	struct reply rp = {.chosen = chosen};
	int ended = collect(fds[0], t->cs->ncands, until, &rp);
	close(fds[0]);
	if (!ended)
		kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	memset(r, 0, sizeof(*r));
	r->gap = r->lp_bound = -1;
	r->status = 2; /* no answer in time */
	if (!rp.got)
		return 0;
	*r = rp.last.r; /* (min-peak sends only its final answer, with the peak) */
	return 0;
}

/* Below this many candidates GLPK's unchecked stretches take
 * milliseconds, less than a fork (which under a sanitizer, in the unit
 * tests, costs tens of them). */
#define WORKER_MIN_CANDIDATES 1000

int pl_ilp_timed(const struct pl_ilp_task *t, uint8_t *chosen, struct pl_ilp_result *r)
{
	if (t->cs->ncands < WORKER_MIN_CANDIDATES)
		return pl_ilp(t, chosen, r);
	return pl_ilp_child(t, chosen, r);
}
