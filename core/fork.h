/*
 * fork.h — a forked child gets an inert libremat: CUDA state does not
 * survive fork, and the parent's locks may be held by threads the child
 * does not have.  Whoever owns the mode registers what the child must do.
 */
#ifndef REMAT_CORE_FORK_H
#define REMAT_CORE_FORK_H

/* Registers child() to run in the child of every fork.  0, or -1. */
int remat_fork_register(void (*child)(void));

#endif
