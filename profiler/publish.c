/*
 * publish.c — the trace is written on a thread of its own, so the
 * training goes on while it is (a large trace takes seconds).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/log.h"
#include "internal.h"

struct job {
	struct remat_profile *profile;
	char dir[PATH_MAX];
	void (*done)(int ok, uint64_t graph_hash);
};

/* The trace writer's thread. */
static struct prof_publisher {
	pthread_t writer;
	int writer_running;
} pub;

static void *write_trace(void *arg)
{
	struct job *j = arg;
	char err[600];
	int ok = prof_trace_write(j->profile, j->dir, err, sizeof(err)) == 0;
	if (!ok)
		remat_warn("%s; no trace written (training continues)", err);
	else
		remat_log(REMAT_LOG_INFO, "trace written to %s (%zu ops, %zu buffers)", j->dir,
		          j->profile->nops, j->profile->nbufs);
	if (j->done)
		j->done(ok, j->profile->graph_hash);
	prof_profile_put(j->profile);
	free(j);
	return NULL;
}

void prof_publish(struct remat_profile *p, const char *dir,
                  void (*done)(int ok, uint64_t graph_hash))
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j) {
		remat_warn("out of host memory; no trace written (training continues)");
		if (done)
			done(0, p->graph_hash);
		prof_profile_put(p);
		return;
	}
	j->profile = p;
	j->done = done;
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	/* A new profile (the job was profiled again): the previous trace has
	 * long been written; its thread is reaped here, not leaked. */
	prof_publish_join();
	if (pthread_create(&pub.writer, NULL, write_trace, j) == 0)
		pub.writer_running = 1;
	else
		write_trace(j);
}

void prof_publish_join(void)
{
	if (pub.writer_running) {
		pthread_join(pub.writer, NULL);
		pub.writer_running = 0;
	}
}
