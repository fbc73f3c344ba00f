/*
 * frameworks.c — the frameworks' allocator variables (core/frameworks.c):
 * set by the constructor, and looked at again at the first CUDA call.  A
 * program may set them itself after libremat loaded (a Python script's
 * os.environ before `import torch`): the framework then reads the
 * program's value, and libremat does not see its tensors one by one
 * (PyTorch's expandable segments map their own memory), so at REMAT_LOG=1
 * one line says so.  libremat does not set them again: the program asked
 * for it, and writing the environment while other threads read it is not
 * safe.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/config.h"
#include "../core/log.h"
#include "internal.h"

static const char *env(const char *name)
{
	return getenv(name);
}

void frameworks_set(void)
{
	if (remat_frameworks_env(env, session.frameworks)) {
		remat_warn_later("PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF is too long to add "
		                 "backend:cudaMallocAsync to; left as it is");
		return;
	}
	for (int i = 0; i < REMAT_ENV_SETTINGS; i++)
		if (setenv(session.frameworks[i].name, session.frameworks[i].value, 1) == 0)
			session.nframeworks = i + 1;
}

void frameworks_check(void)
{
	for (int i = 0; i < session.nframeworks; i++) {
		const char *now = getenv(session.frameworks[i].name);
		if (session.frameworks[i].before &&
		    strcmp(session.frameworks[i].before, session.frameworks[i].value))
			remat_log(REMAT_LOG_INFO,
			          "%s was \"%s\" at start; libremat set it to \"%s\"",
			          session.frameworks[i].name, session.frameworks[i].before,
			          session.frameworks[i].value);
		if (!now || strcmp(now, session.frameworks[i].value))
			remat_log(
			    REMAT_LOG_INFO,
			    "%s was changed by the program after libremat set it: \"%s\" "
			    "instead of \"%s\"; the framework's allocator reads the program's "
			    "value, and tensors it allocates in blocks of its own are not "
			    "managed one by one",
			    session.frameworks[i].name, now ? now : "(unset)",
			    session.frameworks[i].value);
	}
}
