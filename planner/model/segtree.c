/*
 * segtree.c — a max segment tree with lazy range add: the heuristics keep
 * the memory curve of their current selection in it, so adding a
 * candidate (a range of saved bytes) and finding the highest point cost
 * O(log n).  Iterative over a power-of-two layout (leaves at size..2size):
 * mx[i] is the max below node i including the adds pending at i and below,
 * add[i] the add pending for all of node i's leaves.
 */
#include "model.h"

#include <stdlib.h>

#define NONE (INT64_MIN / 4) /* padding leaves never win a max */

int pl_st_init(struct pl_segtree *t, const int64_t *v, int32_t n)
{
	int32_t size = 1;
	while (size < n)
		size <<= 1;
	t->n = n;
	t->size = size;
	t->height = 0;
	while ((1 << t->height) < size)
		t->height++;
	t->mx = malloc(sizeof(int64_t) * 2 * (size_t)size);
	t->add = calloc(2 * (size_t)size, sizeof(int64_t));
	if (!t->mx || !t->add) {
		pl_st_free(t);
		return -1;
	}
	for (int32_t i = 0; i < size; i++)
		t->mx[size + i] = i < n ? v[i] : NONE;
	for (int32_t i = size - 1; i >= 1; i--)
		t->mx[i] = t->mx[2 * i] > t->mx[2 * i + 1] ? t->mx[2 * i] : t->mx[2 * i + 1];
	return 0;
}

void pl_st_free(struct pl_segtree *t)
{
	free(t->mx);
	free(t->add);
	t->mx = t->add = NULL;
}

static void apply(struct pl_segtree *t, int32_t i, int64_t d)
{
	t->mx[i] += d;
	if (i < t->size)
		t->add[i] += d;
}

/* Recomputes the ancestors of leaf-level node i after a change below. */
static void pull(struct pl_segtree *t, int32_t i)
{
	for (i >>= 1; i >= 1; i >>= 1) {
		int64_t m = t->mx[2 * i] > t->mx[2 * i + 1] ? t->mx[2 * i] : t->mx[2 * i + 1];
		t->mx[i] = m + t->add[i];
	}
}

void pl_st_add(struct pl_segtree *t, int32_t lo, int32_t hi, int64_t d)
{
	if (lo < 0)
		lo = 0;
	if (hi >= t->n)
		hi = t->n - 1;
	if (lo > hi || d == 0)
		return;
	int32_t l = lo + t->size, r = hi + t->size + 1, l0 = l, r0 = r - 1;
	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1)
			apply(t, l++, d);
		if (r & 1)
			apply(t, --r, d);
	}
	pull(t, l0);
	pull(t, r0);
}

/* Read only: a node's value is its mx plus the adds pending on its
 * strict ancestors.  The nodes taken on the left all hang below l - 1
 * once l has moved up a level, those on the right below r + 1; each
 * side collects the adds of those ancestors as it climbs, and the rest
 * of the way to the root once the two sides have met.  No write: the
 * heuristics ask far more often than they change the curve. */
int64_t pl_st_max(struct pl_segtree *t, int32_t lo, int32_t hi)
{
	if (lo < 0)
		lo = 0;
	if (hi >= t->n)
		hi = t->n - 1;
	if (lo > hi)
		return INT64_MIN;
	int32_t l = lo + t->size, r = hi + t->size;
	int64_t left = INT64_MIN, right = INT64_MIN;
	int took_l = 0, took_r = 0;
	while (l <= r) {
		if (l & 1) {
			left = took_l && left > t->mx[l] ? left : t->mx[l];
			took_l = 1;
			l++;
		}
		if (!(r & 1)) {
			right = took_r && right > t->mx[r] ? right : t->mx[r];
			took_r = 1;
			r--;
		}
		l >>= 1;
		r >>= 1;
		if (took_l)
			left += t->add[l - 1];
		if (took_r)
			right += t->add[r + 1];
	}
	for (int32_t a = (l - 1) >> 1; took_l && a >= 1; a >>= 1)
		left += t->add[a];
	for (int32_t a = (r + 1) >> 1; took_r && a >= 1; a >>= 1)
		right += t->add[a];
	if (!took_l)
		return right;
	if (!took_r)
		return left;
	return left > right ? left : right;
}
