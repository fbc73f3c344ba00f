/*
 * table.h — live allocations by address (open addressing, linear probing,
 * backward-shift deletion: no tombstones to pile up in a long run).
 */
#ifndef REMAT_TABLE_H
#define REMAT_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct remat_entry {
	uint64_t addr; /* 0 = empty slot */
	uint64_t size;
	int32_t dev;
	int32_t small;
	/* swap.c: when the op checks last saw it used (or it was allocated),
	 * ops in flight that reference it, and its host copy while swapped. */
	uint64_t used;
	int32_t pins;
	void *host;
};

struct remat_table {
	struct remat_entry *slot;
	size_t cap, n; /* cap is a power of two */
};

int remat_table_put(struct remat_table *t, struct remat_entry e);
struct remat_entry *remat_table_get(const struct remat_table *t, uint64_t addr);
int remat_table_del(struct remat_table *t, uint64_t addr, struct remat_entry *out);

#endif
