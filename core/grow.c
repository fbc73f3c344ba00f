/*
 * grow.c — growable arrays (grow.h).  The array pointer is copied in and
 * out with memcpy: the caller's pointer has its own type, and writing it
 * through a void * lvalue would break the aliasing rules.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int remat_grow(void *arrp, size_t *cap, size_t elem, size_t need)
{
	size_t c = *cap ? *cap : 16;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -1;
		c *= 2;
	}
	if (elem && c > SIZE_MAX / elem)
		return -1;
	void *arr;
	memcpy(&arr, arrp, sizeof(arr));
	void *p = realloc(arr, c * elem);
	if (!p)
		return -1;
	memcpy(arrp, &p, sizeof(p));
	*cap = c;
	return 0;
}
