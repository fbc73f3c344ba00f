/*
 * internal.h — what the files behind acquire.h share: plan and trace
 * reading through a jansson found at run time (plan_read.c), the plan
 * cache (cache.c) and the planner process (spawn.c).
 * libremat.so must not need jansson at link time, so nothing here
 * references a json_* symbol directly.
 */
#ifndef REMAT_ACQUIRE_INTERNAL_H
#define REMAT_ACQUIRE_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <pthread.h>

#include "../plan/plan.h"
#include "acquire.h"

/* The module's state: the one acquisition at a time (acquire.c), and its
 * settings. */
struct acq_state {
	pthread_mutex_t lock;
	enum acquire_state st;
	uint64_t hash;
	int32_t nops, nbufs;
	int64_t budget, iter_ns;
	int trace;   /* the trace file: 1 written, -1 will not come, 0 not yet */
	pid_t pid;   /* the planner's wrapper, leading its process group; 0 while
	                PENDING: the planner waits for the trace */
	int tie;     /* our end of the socket tying the planner to this job, -1 none */
	pid_t owner; /* the process that started it (a forked child is not) */
	double deadline, timeout_s, grace_s;
	char planner[PATH_MAX];
	char cache_dir[PATH_MAX]; /* "" when plans are not cached */
	/* Room for a file name after the directory: */
	char final[PATH_MAX + 128]; /* where the plan ends up (cache entry or trace dir) */
	char log[PATH_MAX + 128];
	off_t progress_off; /* how far the planner's log was relayed */
	int32_t *excl;      /* buffers the plan must not evict (verification mode) */
	int nexcl;
	char trace_dir[PATH_MAX];
	int from_cache;       /* the plan handed out came from the cache, not a planner run */
	struct pl_plan *plan; /* READY: not yet handed out */
	/* spawn.c: > 0: plans may offload at this bandwidth (acquire_offload) */
	double offload_gbps;
};
extern struct acq_state acq;

/* ---- plan_read.c ---- */

/* The soname dlopen()ed to read JSON (libjansson.so.4); tests point it
 * elsewhere to see the "jansson missing" path. */
void acq_json_soname(const char *soname);
/* 0 when jansson is usable; else -1 with the one message in err. */
int acq_json_ready(char *err, size_t errlen);

/* Loads and fully validates a plan file: format and version, its checksum
 * (docs/plan-format.md), the graph hash, op count and budget asked for,
 * every step kind and argument (buffer ids below nbufs when nbufs >= 0), op
 * positions increasing.  Returns 0, or -1 with one message naming the file
 * and the problem: -2 when the checksum is missing or does not match (the
 * file was changed after remat-plan wrote it, maybe on purpose). */
int acq_plan_read(const char *path, uint64_t graph_hash, int32_t nops, int64_t budget,
                  int32_t nbufs, struct pl_plan **out, char *err, size_t errlen);

/* What run mode needs from trace.json without the planner: its graph hash,
 * buffer count and iteration duration (-1 when absent).  0 or -1 + err. */
struct acq_trace_info {
	uint64_t graph_hash;
	int32_t nbufs;
	int64_t duration_ns;
};
int acq_trace_peek(const char *trace_dir, struct acq_trace_info *ti, char *err, size_t errlen);

/* ---- cache.c ---- */

#define ACQ_CACHE_KEEP 64 /* plans kept, and refused plans; the least recent go first */

/* The cache directory (remat_cfg.cache_dir: REMAT_CACHE_DIR,
 * $XDG_CACHE_HOME/libremat or $HOME/.cache/libremat), created if missing.
 * 0, or -1 + err. */
int acq_cache_dir(char *dir, size_t n, char *err, size_t errlen);
/* <dir>/<hash>-<budget>.plan.json */
void acq_cache_path(const char *dir, uint64_t graph_hash, int64_t budget, char *out, size_t n);
/* Marks a cache entry as just used (LRU order is by mtime). */
void acq_cache_touch(const char *path);
/* Deletes all but the newest keep plans in dir, and all but the newest
 * keep refused ones (<entry>.rejected), and planner temporaries a day old. */
void acq_cache_prune(const char *dir, int keep);

/* ---- spawn.c ---- */

struct acq_settings {
	double timeout_s;       /* REMAT_PLAN_TIMEOUT */
	double offload_gbps;    /* > 0: plans may offload at this bandwidth (acquire_offload) */
	char planner[PATH_MAX]; /* remat-plan to run */
};

/* The time limit and the remat-plan to run (REMAT_PLANNER, else next to
 * libremat.so, else on PATH), from remat_cfg.  0, or -1 + err. */
int acq_settings_read(struct acq_settings *s, char *err, size_t errlen);
/* What acquire_offload set: > 0 when plans may offload. */
double acq_offload_gbps(void);

/* Starts remat-plan on r's trace_dir writing its plan to dest, its output
 * (after a line with the command) in log, in an environment without
 * LD_PRELOAD and REMAT_*, exclude (NULL for none) passed as --exclude,
 * under a wrapper leading its own process group (a timeout kills all of
 * it).  *tie gets the job's end of the socket tying the planner's life to
 * the job's: closing it without a word kills the group; writing
 * "SECONDS\n" kills it that much later.  Returns the pid, or -1 + err. */
struct acq_planner_run {
	const struct acq_settings *settings;
	const char *trace_dir;
	int64_t budget;
	const char *dest, *log;
	const char *exclude; /* --exclude's list, NULL for none */
};
pid_t acq_spawn_planner(const struct acq_planner_run *r, int *tie, char *err, size_t errlen);
/* The environment given to the planner: env without LD_PRELOAD and
 * REMAT_* (malloc'd array of pointers into env, NULL-terminated). */
char **acq_child_env(char *const *env);

#endif
