/*
 * shared.c — chunks that several buffers share (docs/graph-format.md,
 * "shared_chunks"): a long-lived allocation cut into regions at 512-byte
 * steps has chunks that two regions (or a region and the allocation's
 * padding) each hold a part of.  Such a chunk is needed while one of its
 * buffers is mapped and can go once all of them are out: every memory
 * curve counts it by a reference count, here.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static int64_t own_bytes(const struct pl_buffer *b)
{
	return b->small ? 0 : b->rounded;
}

int64_t pl_map_bytes(const struct pl_graph *g, int32_t *count, int32_t b)
{
	const struct pl_buffer *bf = &g->bufs[b];
	int64_t d = own_bytes(bf);
	for (int k = 0; k < 2 && bf->shared[k]; k++)
		if (count[bf->shared[k] - 1]++ == 0)
			d += g->shared[bf->shared[k] - 1].bytes;
	return d;
}

int64_t pl_unmap_bytes(const struct pl_graph *g, int32_t *count, int32_t b)
{
	const struct pl_buffer *bf = &g->bufs[b];
	int64_t d = own_bytes(bf);
	for (int k = 0; k < 2 && bf->shared[k]; k++)
		if (--count[bf->shared[k] - 1] == 0)
			d += g->shared[bf->shared[k] - 1].bytes;
	return d;
}

int64_t pl_map_need(const struct pl_graph *g, const int32_t *count, int32_t b)
{
	const struct pl_buffer *bf = &g->bufs[b];
	int64_t d = own_bytes(bf);
	for (int k = 0; k < 2 && bf->shared[k]; k++)
		if (!count[bf->shared[k] - 1])
			d += g->shared[bf->shared[k] - 1].bytes;
	return d;
}

int pl_shared_freeable(const struct pl_graph *g, int32_t s)
{
	const struct pl_shared *sh = &g->shared[s];
	for (uint32_t i = 0; i < sh->n; i++) {
		const struct pl_buffer *o = &g->bufs[g->shared_bufs[sh->off + i]];
		if (!pl_buf_evictable(o) || (o->alloc_at < 0 && !o->dead_across))
			return 0;
	}
	return 1;
}

int64_t pl_model_bytes(const struct pl_graph *g, int32_t b)
{
	const struct pl_buffer *bf = &g->bufs[b];
	int64_t d = own_bytes(bf);
	for (int k = 0; k < 2 && bf->shared[k]; k++) {
		const struct pl_shared *sh = &g->shared[bf->shared[k] - 1];
		if (pl_shared_freeable(g, (int32_t)bf->shared[k] - 1))
			d += sh->bytes / sh->n;
	}
	return d;
}

int64_t pl_evict_gain(const struct pl_graph *g, const int32_t *count, int32_t b)
{
	const struct pl_buffer *bf = &g->bufs[b];
	int64_t d = own_bytes(bf);
	for (int k = 0; k < 2 && bf->shared[k]; k++) {
		const struct pl_shared *sh = &g->shared[bf->shared[k] - 1];
		int32_t held = count[bf->shared[k] - 1];
		if (held > 0 && pl_shared_freeable(g, (int32_t)bf->shared[k] - 1))
			d += sh->bytes / held;
	}
	return d;
}

static int cmp_lo(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;
	return (x[0] > y[0]) - (x[0] < y[0]);
}

int pl_shared_baseline(const struct pl_graph *g, int64_t *diff)
{
	uint32_t most = 0;
	for (int32_t s = 0; s < g->nshared; s++)
		most = g->shared[s].n > most ? g->shared[s].n : most;
	int32_t(*iv)[2] = malloc(sizeof(*iv) * (most ? most : 1));
	if (!iv)
		return -1;
	for (int32_t s = 0; s < g->nshared; s++) {
		const struct pl_shared *sh = &g->shared[s];
		if (!sh->n)
			continue; /* (every buffer of it parked: park.c) */
		for (uint32_t i = 0; i < sh->n; i++) {
			const struct pl_buffer *b = &g->bufs[g->shared_bufs[sh->off + i]];
			iv[i][0] = b->alloc_at < 0 ? 0 : b->alloc_at;
			iv[i][1] = b->free_at < 0 ? g->nops : b->free_at;
		}
		qsort(iv, sh->n, sizeof(*iv), cmp_lo);
		/* the union of the lifetimes, interval by interval */
		int32_t lo = iv[0][0], hi = iv[0][1];
		for (uint32_t i = 1; i <= sh->n; i++) {
			if (i < sh->n && iv[i][0] <= hi) {
				hi = iv[i][1] > hi ? iv[i][1] : hi;
				continue;
			}
			if (hi > lo) {
				diff[lo] += sh->bytes;
				diff[hi] -= sh->bytes;
			}
			if (i < sh->n) {
				lo = iv[i][0];
				hi = iv[i][1];
			}
		}
	}
	free(iv);
	return 0;
}
