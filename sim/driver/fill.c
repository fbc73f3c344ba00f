/*
 * fill.c — what fresh memory holds (SIMCUDA_FILL): a real driver promises
 * nothing, so a program that reads memory it never wrote is wrong, and
 * the simulator makes that visible the same way on every allocation path
 * (cuMemAlloc, stream-ordered allocations, cuMemCreate, page-locked host
 * memory).  poison (the default) writes 0xcd bytes: floats read as
 * -4.3e8, pointers as junk, and the same wrong result every run.
 * random writes different bytes every run and every allocation, so a
 * result that depends on them changes between two runs.  zero leaves the
 * kernel's zero pages (the leniency of a freshly booted GPU).
 */
#include "driver.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POISON 0xcd

static _Atomic uint64_t random_state;

static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void fresh_fill(void *p, size_t bytes)
{
	switch (sim_cfg.fill) {
	case FILL_ZERO:
		return; /* every caller maps fresh, zeroed pages */
	case FILL_POISON:
		memset(p, POISON, bytes);
		return;
	case FILL_RANDOM:
		break;
	}
	/* Each allocation starts its own stream from a shared counter, so
	 * threads never share state. */
	uint64_t s = atomic_fetch_add(&random_state, 0x632be59bd9b4e019ull);
	if (s == 0) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		s = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 32) ^ ((uint64_t)getpid() << 16);
		atomic_store(&random_state, s);
	}
	unsigned char *q = p;
	size_t i = 0;
	for (; i + 8 <= bytes; i += 8) {
		uint64_t v = next_random(&s);
		memcpy(q + i, &v, 8);
	}
	if (i < bytes) {
		uint64_t v = next_random(&s);
		memcpy(q + i, &v, bytes - i);
	}
}
