/*
 * config.h — every REMAT_* variable, in one table (config.c), read once by
 * the constructor into remat_cfg; nothing else in libremat reads the
 * environment.  HOME, XDG_CACHE_HOME and PATH are read then too: they
 * locate the plan cache and the planner.
 */
#ifndef REMAT_CORE_CONFIG_H
#define REMAT_CORE_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "log.h"

enum remat_mode { REMAT_MODE_OFF = 0, REMAT_MODE_TRACE, REMAT_MODE_RUN };

/* REMAT_WRITE_PROOF: what the profiler's second launches of a kernel may
 * perturb (profiler/delta.c). */
enum remat_write_proof {
	REMAT_PROOF_OFF,  /* 0: no second launch */
	REMAT_PROOF_DATA, /* data (the default): only words that held data */
	REMAT_PROOF_ALL,  /* 1: every tested byte (can hang a GPU) */
};

struct remat_config {
	int any_set; /* some REMAT_* variable is present */
	enum remat_mode mode;
	struct remat_budget budget; /* REMAT_BUDGET (run mode) */
	char trace_dir[PATH_MAX];
	int log_level;
	char log_file[PATH_MAX]; /* "" = stderr */
	int warmup;              /* iterations to skip before profiling */
	int verify;              /* REMAT_VERIFY=1: verify the plan's rebuilds once */
	int offload;             /* REMAT_OFFLOAD: plans may offload buffers to host memory */
	int write_proof;         /* REMAT_WRITE_PROOF: enum remat_write_proof */
	int write_proof_set;     /* REMAT_WRITE_PROOF was given */
	double plan_timeout_s;   /* REMAT_PLAN_TIMEOUT */
	char planner[PATH_MAX];  /* REMAT_PLANNER; "" = remat-plan next to us or on path */
	/* The plan cache: REMAT_CACHE_DIR, else $XDG_CACHE_HOME/libremat, else
	 * $HOME/.cache/libremat; "" when none of them is set. */
	char cache_dir[PATH_MAX];
	const char *cache_dir_from; /* the variable it came from */
	char path[8192];            /* PATH, where the planner is looked for ("" unset) */
};

extern struct remat_config remat_cfg;

/* The messages of one load: every bad value and unknown name, not just
 * the first (a typo's warning must not hide a malformed value). */
#define REMAT_CONFIG_MAX_MSGS 16
struct remat_config_msgs {
	int n; /* when more came than fit, the last says how many were not shown */
	char text[REMAT_CONFIG_MAX_MSGS][640];
};

typedef const char *(*remat_getenv_fn)(const char *name);

/* Fills *cfg from the variables read through get; env (an environ-like
 * array, may be NULL) is searched for REMAT_* names that are not ours.
 * Returns 0, or -1 when a value is malformed: cfg then holds the defaults
 * with mode OFF (libremat stays inactive).  Every problem adds one line to
 * msgs. */
int remat_config_load(remat_getenv_fn get, char *const *env, struct remat_config *cfg,
                      struct remat_config_msgs *msgs);

/* Merges backend:cudaMallocAsync into a PYTORCH_CUDA_ALLOC_CONF value:
 * other keys kept, backend replaced, expandable_segments dropped.
 * Returns 0, or -1 when out is too small. */
int remat_alloc_conf_merge(const char *old, char *out, size_t outlen);

/* frameworks.c: the allocator variables libremat sets at load, so that each
 * framework allocates tensor by tensor, through calls libremat sees,
 * without reserving the device up front.  `before` is the program's value
 * (NULL: unset). */
struct remat_env_setting {
	const char *name;
	char value[4096];
	const char *before;
};
#define REMAT_ENV_SETTINGS 6
/* Fills out[REMAT_ENV_SETTINGS]: PyTorch's PYTORCH_ALLOC_CONF (read from
 * 2.9 on) and PYTORCH_CUDA_ALLOC_CONF (before), both the merge of the one
 * the program set (PYTORCH_ALLOC_CONF first); JAX's
 * XLA_PYTHON_CLIENT_PREALLOCATE and XLA_PYTHON_CLIENT_ALLOCATOR;
 * TensorFlow's TF_GPU_ALLOCATOR and TF_FORCE_GPU_ALLOW_GROWTH.  0, or -1
 * when PyTorch's value is too long to merge (nothing is to be set then). */
int remat_frameworks_env(remat_getenv_fn get, struct remat_env_setting *out);

#endif
