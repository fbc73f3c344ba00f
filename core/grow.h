/*
 * grow.h — growable arrays: the caller keeps the array, its length and its
 * capacity as plain fields (so the elements keep their type), and asks for
 * room before each append.  The capacity doubles (amortised O(1) appends);
 * out of memory the array stays as it was and the caller sees -1.
 */
#ifndef REMAT_CORE_GROW_H
#define REMAT_CORE_GROW_H

#include <stddef.h>

/* Grows the array *arrp (any object pointer, passed by address) of elem-byte
 * elements to a capacity of at least need: 16 or *cap doubled until it
 * holds need.  0, or -1 (out of memory, or need * elem overflows) with
 * *arrp and *cap unchanged. */
int remat_grow(void *arrp, size_t *cap, size_t elem, size_t need);

/* Room for one more element after n in arr (capacity cap, a size_t
 * lvalue): 0, or -1 out of memory. */
#define REMAT_GROW(arr, n, cap)                                                                    \
	((size_t)(n) < (cap) ? 0 : remat_grow(&(arr), &(cap), sizeof(*(arr)), (size_t)(n) + 1))

/* Room for need elements in all. */
#define REMAT_RESERVE(arr, need, cap)                                                              \
	((size_t)(need) <= (cap) ? 0 : remat_grow(&(arr), &(cap), sizeof(*(arr)), (size_t)(need)))

#endif
