/*
 * handles.c — the set of live handles (streams, events, modules, ...).
 * A real driver may crash on a stale handle; the simulator answers
 * CUDA_ERROR_INVALID_HANDLE instead, so a use-after-destroy in libremat
 * shows up as an error in a test rather than as silent reuse.
 */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>

struct slot {
	const void *p; /* NULL: empty; TOMB: deleted */
	int kind;
};

#define TOMB ((const void *)1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *tab;
static size_t cap, used; /* used counts live entries and tombstones */

static size_t hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static void grow(void)
{
	/* Sized by live entries only, so churn (events made and destroyed
	 * every iteration) recycles tombstones instead of growing forever. */
	size_t live = 0, ncap = 256;
	for (size_t i = 0; i < cap; i++)
		live += tab[i].p != NULL && tab[i].p != TOMB;
	while ((live + 1) * 4 > ncap)
		ncap *= 2;
	struct slot *nt = calloc(ncap, sizeof(*nt));
	if (nt == NULL) {
		fprintf(stderr, "simcuda: out of host memory for handles\n");
		abort();
	}
	for (size_t i = 0; i < cap; i++) {
		if (tab[i].p == NULL || tab[i].p == TOMB)
			continue;
		size_t j = hash(tab[i].p) & (ncap - 1);
		while (nt[j].p)
			j = (j + 1) & (ncap - 1);
		nt[j] = tab[i];
	}
	free(tab);
	tab = nt;
	cap = ncap;
	used = live;
}

void handle_add(const void *p, enum handle_kind kind)
{
	pthread_mutex_lock(&lock);
	if ((used + 1) * 2 > cap)
		grow();
	size_t j = hash(p) & (cap - 1);
	while (tab[j].p && tab[j].p != TOMB)
		j = (j + 1) & (cap - 1);
	if (tab[j].p == NULL)
		used++;
	tab[j].p = p;
	tab[j].kind = (int)kind;
	pthread_mutex_unlock(&lock);
}

static struct slot *find(const void *p)
{
	if (cap == 0 || p == NULL || p == TOMB)
		return NULL;
	for (size_t j = hash(p) & (cap - 1);; j = (j + 1) & (cap - 1)) {
		if (tab[j].p == NULL)
			return NULL;
		if (tab[j].p == p)
			return &tab[j];
	}
}

void handle_del(const void *p)
{
	pthread_mutex_lock(&lock);
	struct slot *s = find(p);
	if (s)
		s->p = TOMB;
	pthread_mutex_unlock(&lock);
}

bool handle_is(const void *p, enum handle_kind kind)
{
	pthread_mutex_lock(&lock);
	struct slot *s = find(p);
	bool ok = s && s->kind == (int)kind;
	pthread_mutex_unlock(&lock);
	return ok;
}
