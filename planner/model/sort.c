/*
 * sort.c — the sorts of the planner's hot loops, where qsort's calls
 * through a function pointer showed up in profiles: the heuristics' score
 * orders (hundreds of thousands of candidates: a radix sort) and the
 * short lists of every rebuild recipe (hundreds of thousands of lists of
 * a few ids: an insertion sort).  Every order here is total, so the
 * result is the one qsort gave.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 16
#define BUCKETS    (1u << DIGIT_BITS)

/* Least significant digit first, 16 bits a pass; passes where every key
 * has the same digit are skipped. */
int pl_radix_sort(struct pl_keyed *a, size_t n)
{
	if (n < 2)
		return 0;
	struct pl_keyed *tmp = malloc(sizeof(*tmp) * n);
	size_t *count = malloc(sizeof(size_t) * BUCKETS);
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -1;
	}
	struct pl_keyed *src = a, *dst = tmp;
	for (int shift = 0; shift < 64; shift += DIGIT_BITS) {
		memset(count, 0, sizeof(size_t) * BUCKETS);
		for (size_t i = 0; i < n; i++)
			count[(src[i].key >> shift) & (BUCKETS - 1)]++;
		if (count[(src[0].key >> shift) & (BUCKETS - 1)] == n)
			continue; /* one digit for all: the order stays */
		size_t sum = 0;
		for (size_t d = 0; d < BUCKETS; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & (BUCKETS - 1)]++] = src[i];
		struct pl_keyed *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, sizeof(*a) * n);
	free(tmp);
	free(count);
	return 0;
}

uint64_t pl_key_desc(double v)
{
	uint64_t bits;
	v += 0.0; /* -0 and +0 are one key */
	memcpy(&bits, &v, sizeof(bits));
	/* IEEE order as unsigned order: negatives flipped whole, positives
	 * above them; then reversed, the largest first */
	bits = bits >> 63 ? ~bits : bits | (UINT64_C(1) << 63);
	return ~bits;
}

/* Short lists: insertion sort; longer ones: qsort. */
#define SHORT 24

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

void pl_sort_i32(int32_t *a, int32_t n)
{
	if (n > SHORT) {
		qsort(a, (size_t)n, sizeof(int32_t), cmp_i32);
		return;
	}
	for (int32_t i = 1; i < n; i++) {
		int32_t v = a[i], k = i;
		for (; k > 0 && a[k - 1] > v; k--)
			a[k] = a[k - 1];
		a[k] = v;
	}
}

static int by_key(const void *a, const void *b, void *arg)
{
	const int32_t *key = arg;
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	if (key[i] != key[j])
		return key[i] < key[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

void pl_sort_ids(int32_t *ids, int32_t n, const int32_t *key)
{
	if (n > SHORT) {
		qsort_r(ids, (size_t)n, sizeof(int32_t), by_key, (void *)key);
		return;
	}
	for (int32_t i = 1; i < n; i++) {
		int32_t v = ids[i], k = i;
		for (; k > 0 &&
		       (key[ids[k - 1]] > key[v] || (key[ids[k - 1]] == key[v] && ids[k - 1] > v));
		     k--)
			ids[k] = ids[k - 1];
		ids[k] = v;
	}
}
