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

/* The record of key, or NULL. */
void *remat_map_find(const struct remat_map *m, uint64_t key);
/* The record of key, made (zeroed, with its key) when it was not there;
 * NULL for key 0 or out of memory (the map is then as it was). */
void *remat_map_insert(struct remat_map *m, uint64_t key);
/* Removes key's record, copied to out first when out is not NULL; -1 when
 * it was not there. */
int remat_map_remove(struct remat_map *m, uint64_t key, void *out);
/* Iteration: start with *i = 0; the next record, or NULL at the end.  The
 * map must not change during the walk. */
void *remat_map_next(const struct remat_map *m, size_t *i);
/* Frees the slots: the map is empty again. */
void remat_map_clear(struct remat_map *m);

#endif
