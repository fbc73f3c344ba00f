/*
 * hash.h — FNV-1a 64: the hash of params.bin and of the graph signature.
 */
#ifndef REMAT_CORE_HASH_H
#define REMAT_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define REMAT_FNV_OFFSET 0xcbf29ce484222325ULL
#define REMAT_FNV_PRIME  0x100000001b3ULL
static inline uint64_t remat_fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= REMAT_FNV_PRIME;
	}
	return h;
}

#endif
