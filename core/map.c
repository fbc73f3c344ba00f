/*
 * map.c — the hash table's slow paths (map.h): growing at 3/4 full,
 * removal, iteration.  Lookups and inserts that need no room are inline
 * in map.h.
 */
#include <stdlib.h>
#include <string.h>

#include "map.h"

#define FIRST_CAP 256

static unsigned char *at(const struct remat_map *m, size_t j)
{
	return remat_map_slot_(m, j);
}

static uint64_t key_at(const struct remat_map *m, size_t j)
{
	uint64_t k;
	memcpy(&k, at(m, j), sizeof(k));
	return k;
}

static int grow(struct remat_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : FIRST_CAP;
	if (cap < m->cap || cap > SIZE_MAX / m->elem)
		return -1;
	struct remat_map g = {calloc(cap, m->elem), cap, m->n, m->elem};
	if (!g.slot)
		return -1;
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t k = key_at(m, i);
		if (k)
			memcpy(at(&g, remat_map_probe_(&g, k)), at(m, i), m->elem);
	}
	free(m->slot);
	*m = g;
	return 0;
}

void *remat_map_insert_grow(struct remat_map *m, uint64_t key)
{
	if (!key || ((m->n + 1) * 4 > m->cap * 3 && grow(m)))
		return NULL;
	return remat_map_insert(m, key);
}

int remat_map_remove(struct remat_map *m, uint64_t key, void *out)
{
	unsigned char *r = remat_map_find(m, key);
	if (!r)
		return -1;
	if (out)
		memcpy(out, r, m->elem);
	size_t i = (size_t)(r - (unsigned char *)m->slot) / m->elem, mask = m->cap - 1;
	/* Backward shift: pull later members of the cluster into the hole
	 * when the hole lies between their home slot and where they sit. */
	uint64_t k;
	for (size_t j = (i + 1) & mask; (k = key_at(m, j)); j = (j + 1) & mask) {
		size_t home = remat_map_hash_(k) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			memcpy(at(m, i), at(m, j), m->elem);
			i = j;
		}
	}
	memset(at(m, i), 0, sizeof(k));
	m->n--;
	return 0;
}

void *remat_map_next(const struct remat_map *m, size_t *i)
{
	for (; *i < m->cap; (*i)++)
		if (key_at(m, *i))
			return at(m, (*i)++);
	return NULL;
}

void remat_map_clear(struct remat_map *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}
