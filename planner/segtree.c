/*
 * segtree.c — a max segment tree with lazy range add: the heuristics keep
 * the memory curve of their current selection in it, so adding a
 * candidate (a range of saved bytes) and finding the highest point cost
 * O(log n).
 */
#include "internal.h"

#include <stdlib.h>

static void build(struct pl_segtree *t, int32_t node, int32_t lo, int32_t hi, const int64_t *v)
{
	t->add[node] = 0;
	if (lo == hi) {
		t->mx[node] = v[lo];
		return;
	}
	int32_t mid = lo + (hi - lo) / 2;
	build(t, 2 * node, lo, mid, v);
	build(t, 2 * node + 1, mid + 1, hi, v);
	t->mx[node] = t->mx[2 * node] > t->mx[2 * node + 1] ? t->mx[2 * node] : t->mx[2 * node + 1];
}

int pl_st_init(struct pl_segtree *t, const int64_t *v, int32_t n)
{
	t->n = n;
	t->size = 4 * (n > 0 ? n : 1);
	t->mx = malloc(sizeof(int64_t) * t->size);
	t->add = malloc(sizeof(int64_t) * t->size);
	if (!t->mx || !t->add) {
		pl_st_free(t);
		return -1;
	}
	if (n > 0)
		build(t, 1, 0, n - 1, v);
	return 0;
}

void pl_st_free(struct pl_segtree *t)
{
	free(t->mx);
	free(t->add);
	t->mx = t->add = NULL;
}

/* Lazy adds stay at the node they were applied to; a query adds them on
 * the way down, so no push-down is needed. */
static void add(struct pl_segtree *t, int32_t node, int32_t lo, int32_t hi, int32_t a, int32_t b,
                int64_t d)
{
	if (b < lo || hi < a)
		return;
	if (a <= lo && hi <= b) {
		t->mx[node] += d;
		t->add[node] += d;
		return;
	}
	int32_t mid = lo + (hi - lo) / 2;
	add(t, 2 * node, lo, mid, a, b, d);
	add(t, 2 * node + 1, mid + 1, hi, a, b, d);
	int64_t m = t->mx[2 * node] > t->mx[2 * node + 1] ? t->mx[2 * node] : t->mx[2 * node + 1];
	t->mx[node] = m + t->add[node];
}

void pl_st_add(struct pl_segtree *t, int32_t lo, int32_t hi, int64_t d)
{
	if (lo < 0)
		lo = 0;
	if (hi >= t->n)
		hi = t->n - 1;
	if (lo > hi || d == 0)
		return;
	add(t, 1, 0, t->n - 1, lo, hi, d);
}

static int64_t query(const struct pl_segtree *t, int32_t node, int32_t lo, int32_t hi, int32_t a,
                     int32_t b)
{
	if (b < lo || hi < a)
		return INT64_MIN;
	if (a <= lo && hi <= b)
		return t->mx[node];
	int32_t mid = lo + (hi - lo) / 2;
	int64_t x = query(t, 2 * node, lo, mid, a, b),
	        y = query(t, 2 * node + 1, mid + 1, hi, a, b);
	int64_t m = x > y ? x : y;
	return m == INT64_MIN ? m : m + t->add[node];
}

int64_t pl_st_max(const struct pl_segtree *t, int32_t lo, int32_t hi)
{
	if (lo < 0)
		lo = 0;
	if (hi >= t->n)
		hi = t->n - 1;
	if (lo > hi)
		return INT64_MIN;
	return query(t, 1, 0, t->n - 1, lo, hi);
}

int32_t pl_st_argmax(const struct pl_segtree *t)
{
	int32_t node = 1, lo = 0, hi = t->n - 1;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (t->mx[2 * node] >= t->mx[2 * node + 1]) {
			node = 2 * node;
			hi = mid;
		} else {
			node = 2 * node + 1;
			lo = mid + 1;
		}
	}
	return lo;
}
