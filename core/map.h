/*
 * map.h — a hash table of records keyed by a 64-bit address or id: open
 * addressing, linear probing, backward-shift deletion (no tombstones to
 * pile up in a long run).  The records live in the table itself, each
 * starting with its uint64_t key; key 0 marks an empty slot, so 0 is no
 * key.  A record's address is valid until the next insert or remove.
 * Not thread-safe: the caller locks.
 */
#ifndef REMAT_CORE_MAP_H
#define REMAT_CORE_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct remat_map {
	void *slot;    /* cap records of elem bytes */
	size_t cap, n; /* cap: 0 or a power of two */
	size_t elem;   /* bytes of a record, its key first */
};

/* An empty map of records of type T (whose first member is the key). */
#define REMAT_MAP_INIT(T)                                                                          \
	{                                                                                          \
		NULL, 0, 0, sizeof(T)                                                              \
	}

/* The lookups are inline (the profiler's detector looks one up per op);
 * growing is apart, in map.c.  remat_map_*_ (trailing underscore)
 * are theirs, not the callers'. */
static inline unsigned char *remat_map_slot_(const struct remat_map *m, size_t j)
{
	return (unsigned char *)m->slot + j * m->elem;
}

/* The first half of MurmurHash3's finaliser: enough to spread the aligned
 * addresses and small ids used as keys. */
static inline size_t remat_map_hash_(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	return (size_t)(a ^ a >> 33);
}

/* The slot of key, or the empty slot that ends its probe (cap > 0). */
static inline size_t remat_map_probe_(const struct remat_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, j = remat_map_hash_(key) & mask;
	for (uint64_t k; memcpy(&k, remat_map_slot_(m, j), sizeof(k)), k && k != key;)
		j = (j + 1) & mask;
	return j;
}

/* The record of key, or NULL. */
static inline void *remat_map_find(const struct remat_map *m, uint64_t key)
{
	if (!m->cap || !key)
		return NULL;
	unsigned char *r = remat_map_slot_(m, remat_map_probe_(m, key));
	uint64_t k;
	memcpy(&k, r, sizeof(k));
	return k ? r : NULL;
}

/* remat_map_insert when the map must grow first, or key is 0. */
void *remat_map_insert_grow(struct remat_map *m, uint64_t key);

/* The record of key, made (zeroed, with its key) when it was not there;
 * NULL for key 0 or out of memory (the map is then as it was).  The map
 * grows at 3/4 full. */
static inline void *remat_map_insert(struct remat_map *m, uint64_t key)
{
	if (!key || (m->n + 1) * 4 > m->cap * 3)
		return remat_map_insert_grow(m, key);
	unsigned char *r = remat_map_slot_(m, remat_map_probe_(m, key));
	uint64_t k;
	memcpy(&k, r, sizeof(k));
	if (!k) {
		memset(r, 0, m->elem);
		memcpy(r, &key, sizeof(key));
		m->n++;
	}
	return r;
}
/* Removes key's record, copied to out first when out is not NULL; -1 when
 * it was not there. */
int remat_map_remove(struct remat_map *m, uint64_t key, void *out);
/* Iteration: start with *i = 0; the next record, or NULL at the end.  The
 * map must not change during the walk. */
void *remat_map_next(const struct remat_map *m, size_t *i);
/* Frees the slots: the map is empty again. */
void remat_map_clear(struct remat_map *m);

#endif
