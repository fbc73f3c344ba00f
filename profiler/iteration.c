/*
 * iteration.c — period and boundary detection (see iteration.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "iteration.h"

uint64_t remat_det_pair(uint64_t sig, int64_t level)
{
	uint64_t h = sig ^ ((uint64_t)level * 0x9e3779b97f4a7c15ULL);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return h;
}

void remat_det_init(struct remat_detector *d, size_t max_ops)
{
	memset(d, 0, sizeof(*d));
	d->map = (struct remat_map)REMAT_MAP_INIT(struct remat_det_slot);
	d->max = max_ops;
}

void remat_det_fini(struct remat_detector *d)
{
	free(d->sig);
	free(d->args);
	free(d->level);
	free(d->gap);
	free(d->prev);
	free(d->copy);
	remat_map_clear(&d->map);
	memset(d, 0, sizeof(*d));
}

/* Last index with this key, after recording i as the newest; -2 out of
 * memory. */
static int64_t map_swap(struct remat_detector *d, uint64_t key, int64_t i)
{
	size_t n = d->map.n;
	struct remat_det_slot *s = remat_map_insert(&d->map, key ? key : 1); /* 0 is no key */
	if (!s)
		return -2;
	int64_t old = d->map.n == n ? s->idx : -1;
	s->idx = i;
	return old;
}

/* Room for one more op.  Six arrays of one length: each grows from the
 * same capacity to the same new one, kept once all six have it.  Apart
 * from remat_det_push, which runs for every op. */
__attribute__((noinline)) static int grow(struct remat_detector *d)
{
	size_t cs = d->cap, cl = d->cap, cp = d->cap, cg = d->cap, cc = d->cap, ca = d->cap;
	if (REMAT_GROW(d->sig, d->n, cs) || REMAT_GROW(d->level, d->n, cl) ||
	    REMAT_GROW(d->prev, d->n, cp) || REMAT_GROW(d->gap, d->n, cg) ||
	    REMAT_GROW(d->copy, d->n, cc) || REMAT_GROW(d->args, d->n, ca))
		return -1;
	d->cap = cs;
	return 0;
}

size_t remat_det_choose_phase(const int64_t *gap, const uint8_t *copy, size_t n, size_t p)
{
	const int64_t *g = gap + n - p; /* the last period; g[t] is op n-p+t */
	int64_t min = g[0];
	for (size_t t = 1; t < p; t++)
		if (g[t] < min)
			min = g[t];
	size_t best = p, best_len = 0;
	for (size_t t = 0; t < p; t++) {
		if (g[t] != min || g[(t + 1) % p] <= min)
			continue;
		size_t len = 1; /* length of the plateau ending at t */
		while (len < p && g[(t + p - len) % p] == min)
			len++;
		if (len > best_len) {
			best_len = len;
			best = t;
		}
	}
	if (best != p)
		return (n - p + best) % p;
	/* Flat: after the last copy to the host, else at the first copy from
	 * it, else at the next op. */
	const uint8_t *c = copy ? copy + n - p : NULL;
	for (size_t t = p; c && t-- > 0;)
		if (c[t] == REMAT_DET_TO_HOST)
			return (n - p + t + 1) % p;
	for (size_t t = 0; c && t < p; t++)
		if (c[t] == REMAT_DET_FROM_HOST)
			return (n - p + t) % p;
	return n % p;
}

/* The level moved in the p ops before the period's first copy, or on the
 * way into it (a loop's temporary allocated just before it). */
static int moved_before(const struct remat_detector *d, size_t p)
{
	size_t from = d->rep_start > p ? d->rep_start - p : 0;
	int64_t at = d->level[d->rep_start];
	for (size_t t = from; t <= d->rep_start; t++)
		if (d->level[t] != at || d->gap[t] != at)
			return 1;
	return 0;
}

int64_t remat_det_push(struct remat_detector *d, const struct remat_det_op *op)
{
	int64_t level = op->level, gap = op->gap;
	if (d->n == d->max) {
		d->full = 1;
		return -1;
	}
	if (d->n == d->cap && grow(d)) {
		d->full = 1;
		return -1;
	}
	size_t i = d->n++;
	uint64_t key = remat_det_pair(op->sig, level);
	d->sig[i] = key;
	d->args[i] = op->args;
	d->level[i] = level;
	d->gap[i] = gap < level ? gap : level;
	d->copy[i] = (uint8_t)op->copy;
	int64_t prev = map_swap(d, key, (int64_t)i);
	if (prev == -2) {
		d->full = 1;
		return -1;
	}
	d->prev[i] = prev;
	if (d->period) {
		if (d->sig[i] == d->sig[i - d->period]) {
			d->run++;
			return (int64_t)i;
		}
		d->period = 0;
		d->run = 0;
	}
	/* Candidates are the earlier occurrences of this pair, nearest first,
	 * so the first one that checks out is the smallest period. */
	for (int64_t j = prev; j >= 0; j = d->prev[j]) {
		size_t p = i - (size_t)j;
		if (2 * p > d->n)
			break;
		size_t k = 1;
		while (k < p && d->sig[i - k] == d->sig[i - k - p])
			k++;
		if (k == p) {
			d->period = p;
			d->run = p;
			d->rep_start = d->n - 2 * p;
			d->moved_before = moved_before(d, p);
			d->phase = remat_det_choose_phase(d->gap, d->copy, d->n, p);
			break;
		}
	}
	return (int64_t)i;
}

int remat_det_is_boundary(const struct remat_detector *d, size_t i)
{
	return d->period && i % d->period == d->phase;
}

/* Most ops of the last period were given what the op one period earlier
 * was (unknown arguments count as the same).  Not all: a step counter, a
 * learning rate or a batch's offset in a dataset on the device changes
 * every iteration. */
static int same_buffers(const struct remat_detector *d)
{
	size_t p = d->period, same = 0;
	const uint64_t *a = d->args + d->n - p, *before = a - p;
	for (size_t t = 0; t < p; t++)
		same += !a[t] || !before[t] || a[t] == before[t];
	return 2 * same > p;
}

/* The memory level has to move within the period (activations come and
 * go), or the period must have held for a while: a run of identical
 * set-up ops at one level is not a training iteration.  A flat period
 * right after the level moved is a loop inside an iteration whose level
 * moves (a radix sort's passes in PyTorch's embedding backward: a memset
 * and a kernel, eight times, seen on an H100): it must also have repeated
 * for as long as everything before it ran, which such a loop never does. */
static int credible(const struct remat_detector *d)
{
	size_t p = d->period;
	if (!same_buffers(d))
		return 0;
	if (!remat_det_flat(d))
		return 1;
	return p >= 2 && d->run >= 4 * p && (!d->moved_before || d->run >= d->rep_start);
}

int remat_det_flat(const struct remat_detector *d)
{
	size_t p = d->period;
	const int64_t *l = d->level + d->n - p, *g = d->gap + d->n - p;
	for (size_t t = 0; t < p; t++)
		if (l[t] != l[0] || g[t] != l[0])
			return 0;
	return p != 0;
}

int remat_det_steady(const struct remat_detector *d)
{
	return d->period && d->run >= d->period && credible(d);
}

size_t remat_det_iteration_index(const struct remat_detector *d, size_t i)
{
	if (!d->period)
		return 0;
	/* Whatever ran before the first boundary (set-up, a partial first
	 * iteration) counts as iteration 0. */
	return i < d->phase ? 0 : (i - d->phase) / d->period;
}
