/*
 * fork.c — a forked child is an inert pass-through: CUDA state does not
 * survive fork, and the parent's locks may be held by threads the child
 * does not have.
 */
#include <pthread.h>

#include "remat.h"

static void child(void)
{
	remat_active = 0;
	remat_tracking = 0;
}

int remat_fork_register(void)
{
	return pthread_atfork(NULL, NULL, child);
}
