/*
 * start.c — the session's life: the constructor, lazy init at the first
 * CUDA call, a forked child, the end of the process.
 *
 * The constructor only reads the environment (core/config.c), sets the
 * frameworks' allocator variables and registers the fork handler: no CUDA
 * call, no output (its messages wait for the first CUDA call).  Real work
 * waits for the first CUDA call that needs it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../acquire/acquire.h"
#include "../alloc/alloc.h"
#include "../core/config.h"
#include "../core/driver.h"
#include "../core/fork.h"
#include "../core/log.h"
#include "../profiler/profiler.h"
#include "internal.h"

static const char *env(const char *name)
{
	return getenv(name);
}

/* CUDA state does not survive fork, and the parent's locks may be held by
 * threads the child does not have: the child passes through. */
static void fork_child(void)
{
	session_set_state(SESSION_OFF); /* two atomic stores: no lock taken */
	session.forked = 1;
	acquire_fork_child();
}

__attribute__((constructor)) static void session_constructor(void)
{
	struct remat_config_msgs msgs = {0};
	int bad = remat_config_load(env, environ, &remat_cfg, &msgs);
	for (int i = 0; i < msgs.n; i++)
		remat_warn_later(msgs.text[i]);
	if (bad || remat_cfg.mode == REMAT_MODE_OFF)
		return;
	frameworks_set();
	remat_fork_register(fork_child);
	session_set_state(SESSION_DETECT);
}

static void lazy_init(void)
{
	if (remat_driver_init()) {
		pthread_mutex_lock(&session.lock);
		session_set_state(SESSION_OFF);
		pthread_mutex_unlock(&session.lock);
		remat_log(REMAT_LOG_INFO,
		          "pass-through from now on: the CUDA driver is not usable");
		return;
	}
	remat_log(REMAT_LOG_INFO, "active: mode %s, trace directory %s, warm-up %d iterations",
	          remat_cfg.mode == REMAT_MODE_RUN ? "run" : "trace", remat_cfg.trace_dir,
	          remat_cfg.warmup);
	frameworks_check();
	/* Until a plan applies, a full device swaps to the host (alloc/swap.c). */
	if (remat_cfg.mode == REMAT_MODE_RUN)
		remat_alloc_swap_enable(1);
	session.ready_status = 0;
}

int session_ready(void)
{
	pthread_once(&session.ready_once, lazy_init);
	return session.ready_status;
}

__attribute__((destructor)) static void session_destructor(void)
{
	if (!remat_session_active)
		return;
	pthread_mutex_lock(&session.lock);
	prof_shutdown();
	pthread_mutex_unlock(&session.lock);
	prof_publish_join();
	if (remat_cfg.mode == REMAT_MODE_RUN) {
		pthread_mutex_lock(&session.lock);
		replay_shutdown();
		pthread_mutex_unlock(&session.lock);
		remat_alloc_swap_summary();
	}
}
