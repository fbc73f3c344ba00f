/*
 * search.h — binary search over sorted arrays and sorted ranges, whatever
 * their element type: the caller says how to read element i's key (an
 * address, an id).  Inline, with the key reader a constant the compiler
 * inlines too: the replay's check of every launch searches this way.
 */
#ifndef REMAT_CORE_SEARCH_H
#define REMAT_CORE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* Element i's key in arr; keys never decrease with i. */
typedef uint64_t remat_key_fn(const void *arr, size_t i);

/* A signed value as a key, in signed order (-1 before 0): the sign bit
 * flipped. */
static inline uint64_t remat_key_signed(int64_t v)
{
	return (uint64_t)v ^ (UINT64_C(1) << 63);
}

/* The key reader of an array of int32_t (op positions, ids). */
static inline uint64_t remat_key_i32(const void *arr, size_t i)
{
	return remat_key_signed(((const int32_t *)arr)[i]);
}

/* The first of the n elements whose key is x or more (n when none). */
static inline size_t remat_search_from(const void *arr, size_t n, remat_key_fn *key, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key(arr, mid) < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first of the n elements whose key is above x (n when none). */
static inline size_t remat_search_after(const void *arr, size_t n, remat_key_fn *key, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key(arr, mid) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The element whose key is x, or n. */
static inline size_t remat_search_key(const void *arr, size_t n, remat_key_fn *key, uint64_t x)
{
	size_t i = remat_search_from(arr, n, key, x);
	return i < n && key(arr, i) == x ? i : n;
}

/* Ranges [start, end), sorted and not overlapping: the range holding x, or
 * n.  start and end read a range's bounds. */
static inline size_t remat_range_holding(const void *arr, size_t n, remat_key_fn *start,
                                         remat_key_fn *end, uint64_t x)
{
	size_t i = remat_search_after(arr, n, start, x);
	return i && x < end(arr, i - 1) ? i - 1 : n;
}

/* The first range ending after x: the one holding x, else the first at or
 * after it (n when none). */
static inline size_t remat_range_from(const void *arr, size_t n, remat_key_fn *end, uint64_t x)
{
	return remat_search_after(arr, n, end, x);
}

#endif
