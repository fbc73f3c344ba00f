/*
 * shared.c — chunks that several buffers share (docs/graph-format.md,
 * "shared_chunks"): a long-lived allocation cut into regions at 512-byte
 * steps has chunks that two regions (or a region and the allocation's
 * padding) each hold a part of.  Such a chunk is needed while one of its
 * buffers is mapped and can go once all of them are out: every memory
 * curve counts it by a reference count, here.
 */
#include "json_util.h"

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

int pl_jshared(struct jctx *c, struct pl_graph *g, void *root_v)
{
	json_t *root = root_v, *arr;
	int rc;
	if ((rc = pl_jarr(c, root, "$", "shared_chunks", &arr, 0)) || !arr || !json_array_size(arr))
		return rc;
	size_t n = json_array_size(arr), nlist = 0, k;
	json_t *v;
	char where[96];
	if (n > INT32_MAX)
		return pl_jfail(c, "$.shared_chunks", "more than 2^31 elements");
	json_array_foreach(arr, k, v)
	{
		json_t *list = json_object_get(v, "buffers");
		if (!json_is_array(list)) {
			snprintf(where, sizeof(where), "$.shared_chunks[%zu]", k);
			return pl_jfail(c, where, "missing array member \"buffers\"");
		}
		nlist += json_array_size(list); /* each element a buffer: bounded by the file */
	}
	g->shared = calloc(n, sizeof(*g->shared));
	g->shared_bufs = malloc(sizeof(int32_t) * (nlist ? nlist : 1));
	if (!g->shared || !g->shared_bufs)
		return pl_jfail(c, "$.shared_chunks", "out of memory");
	g->nshared = (int32_t)n;
	int64_t total = 0;
	uint32_t off = 0;
	json_array_foreach(arr, k, v)
	{
		snprintf(where, sizeof(where), "$.shared_chunks[%zu]", k);
		struct pl_shared *s = &g->shared[k];
		if ((rc = pl_jint_in(c, v, where, "bytes", &s->bytes, 1, 0, 0, PL_MAX_AMOUNT)))
			return rc;
		if ((total += s->bytes) > g->const_bytes)
			return pl_jfail(c, where,
			                "the shared chunks add up to more than the constant bytes "
			                "(%lld) that hold them",
			                (long long)g->const_bytes);
		s->off = off;
		json_t *list = json_object_get(v, "buffers"), *e;
		size_t i;
		json_array_foreach(list, i, e)
		{
			json_int_t id = json_is_integer(e) ? json_integer_value(e) : -1;
			if (id < 0 || id >= g->nbufs)
				return pl_jfail(c, where,
				                "buffers[%zu]: no buffer %lld (%d buffers)", i,
				                (long long)id, g->nbufs);
			struct pl_buffer *b = &g->bufs[id];
			int slot = !b->shared[0] ? 0 : !b->shared[1] ? 1 : -1;
			if (slot < 0 || b->shared[0] == k + 1)
				return pl_jfail(c, where, "buffers[%zu]: buffer %lld is %s", i,
				                (long long)id,
				                slot < 0 ? "in more than two shared chunk groups"
				                         : "listed twice");
			b->shared[slot] = (uint32_t)k + 1;
			g->shared_bufs[off++] = (int32_t)id;
		}
		s->n = off - s->off;
		if (!s->n)
			return pl_jfail(c, where, "no buffers");
	}
	g->const_bytes -= total;
	return 0;
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
