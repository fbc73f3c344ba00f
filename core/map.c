/*
 * map.c — the hash table (map.h).  The table grows at 3/4 full; the hash
 * is the first half of MurmurHash3's finaliser, enough to spread the
 * aligned addresses and small ids the runtime uses as keys.
 */
#include <stdlib.h>
#include <string.h>

#include "map.h"

#define FIRST_CAP 256

static size_t hash(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

static unsigned char *at(const struct remat_map *m, size_t j)
{
	return (unsigned char *)m->slot + j * m->elem;
}

static uint64_t key_at(const struct remat_map *m, size_t j)
{
	uint64_t k;
	memcpy(&k, at(m, j), sizeof(k));
	return k;
}

/* The slot of key, or of the empty slot that ends its probe. */
static size_t probe(const struct remat_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, j = hash(key) & mask;
	for (uint64_t k; (k = key_at(m, j)) && k != key;)
		j = (j + 1) & mask;
	return j;
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
			memcpy(at(&g, probe(&g, k)), at(m, i), m->elem);
	}
	free(m->slot);
	*m = g;
	return 0;
}

void *remat_map_find(const struct remat_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	size_t j = probe(m, key);
	return key_at(m, j) ? at(m, j) : NULL;
}

void *remat_map_insert(struct remat_map *m, uint64_t key)
{
	if (!key)
		return NULL;
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	size_t j = probe(m, key);
	unsigned char *r = at(m, j);
	if (!key_at(m, j)) {
		memset(r, 0, m->elem);
		memcpy(r, &key, sizeof(key));
		m->n++;
	}
	return r;
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
		size_t home = hash(k) & mask;
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
