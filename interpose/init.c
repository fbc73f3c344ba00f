/*
 * init.c — the constructor and lazy init.  The constructor only reads the
 * environment (REMAT_*, PYTORCH_CUDA_ALLOC_CONF) and registers the fork
 * handler: no CUDA call, no output.  Real work waits for the first CUDA
 * call that needs it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remat.h"
#include "alloc/alloc.h"
#include "../profiler/profiler.h"
#include "../replay/acquire.h"

int remat_active;
int remat_tracking;

int remat_fork_register(void);

static char pending_message[600];
static int pending_flag;

void remat_flush_pending_message(void)
{
	if (likely(!__atomic_load_n(&pending_flag, __ATOMIC_RELAXED)))
		return;
	if (__atomic_exchange_n(&pending_flag, 0, __ATOMIC_ACQ_REL))
		remat_warn("%s", pending_message);
}

static const char *env(const char *name)
{
	return getenv(name);
}

__attribute__((constructor)) static void remat_constructor(void)
{
	if (remat_config_parse(env, &remat_cfg, pending_message, sizeof(pending_message))) {
		pending_flag = 1;
		return;
	}
	if (remat_config_unknown(environ, pending_message, sizeof(pending_message)))
		pending_flag = 1;
	if (!remat_cfg.any_set || remat_cfg.mode == REMAT_MODE_OFF)
		return;
	/* The planner's variables are only used after the profile; a typo there
	 * should still be said at the start, not minutes into the job. */
	if (remat_cfg.mode == REMAT_MODE_RUN &&
	    acquire_config_check(env, pending_message, sizeof(pending_message))) {
		pending_flag = 1;
		return;
	}
	char conf[4096];
	if (remat_alloc_conf_merge(getenv("PYTORCH_CUDA_ALLOC_CONF"), conf, sizeof(conf)) == 0)
		setenv("PYTORCH_CUDA_ALLOC_CONF", conf, 1);
	remat_fork_register();
	remat_active = 1;
	remat_tracking = 1;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_status = -1;

static void lazy_init(void)
{
	remat_log_open();
	if (remat_real_resolve()) {
		remat_deactivate("the CUDA driver is not usable");
		return;
	}
	remat_log(REMAT_LOG_INFO, "active: mode %s, trace directory %s, warm-up %d iterations",
	          remat_cfg.mode == REMAT_MODE_RUN ? "run" : "trace", remat_cfg.trace_dir,
	          remat_cfg.warmup);
	/* Until a plan applies, a full device swaps to the host (alloc/swap.c). */
	if (remat_cfg.mode == REMAT_MODE_RUN)
		remat_alloc_swap_enable(1);
	init_status = 0;
}

int remat_lazy_init(void)
{
	pthread_once(&once, lazy_init);
	return init_status;
}

void remat_deactivate(const char *why)
{
	if (__atomic_exchange_n(&remat_active, 0, __ATOMIC_ACQ_REL))
		remat_log(REMAT_LOG_INFO, "pass-through from now on: %s", why);
	remat_tracking = 0;
}

__attribute__((destructor)) static void remat_destructor(void)
{
	if (remat_active)
		remat_prof_shutdown();
}
