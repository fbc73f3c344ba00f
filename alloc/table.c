/*
 * table.c — the live-allocation table (see table.h).
 */
#include <stdlib.h>
#include <string.h>

#include "table.h"

static size_t hash(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

static int grow(struct remat_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	struct remat_entry *s = calloc(cap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slot[i].addr)
			continue;
		size_t j = hash(t->slot[i].addr) & (cap - 1);
		while (s[j].addr)
			j = (j + 1) & (cap - 1);
		s[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = s;
	t->cap = cap;
	return 0;
}

int remat_table_put(struct remat_table *t, struct remat_entry e)
{
	if (!e.addr)
		return -1;
	if ((t->n + 1) * 4 > t->cap * 3 && grow(t))
		return -1;
	size_t j = hash(e.addr) & (t->cap - 1);
	while (t->slot[j].addr && t->slot[j].addr != e.addr)
		j = (j + 1) & (t->cap - 1);
	if (!t->slot[j].addr)
		t->n++;
	t->slot[j] = e;
	return 0;
}

struct remat_entry *remat_table_get(const struct remat_table *t, uint64_t addr)
{
	if (!t->cap || !addr)
		return NULL;
	size_t j = hash(addr) & (t->cap - 1);
	while (t->slot[j].addr) {
		if (t->slot[j].addr == addr)
			return &t->slot[j];
		j = (j + 1) & (t->cap - 1);
	}
	return NULL;
}

int remat_table_del(struct remat_table *t, uint64_t addr, struct remat_entry *out)
{
	struct remat_entry *e = remat_table_get(t, addr);
	if (!e)
		return -1;
	if (out)
		*out = *e;
	size_t i = (size_t)(e - t->slot), mask = t->cap - 1;
	/* Backward shift: pull later members of the cluster into the hole
	 * when the hole lies between their home slot and where they sit. */
	for (size_t j = (i + 1) & mask; t->slot[j].addr; j = (j + 1) & mask) {
		size_t home = hash(t->slot[j].addr) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i].addr = 0;
	t->n--;
	return 0;
}
