/*
 * fork.c — fork handling (fork.h).
 */
#include <pthread.h>

#include "fork.h"

int remat_fork_register(void (*child)(void))
{
	return pthread_atfork(NULL, NULL, child);
}
