/*
 * graph_read.c — the parts a graph file (graph_json.c) and a trace
 * (trace_load.c) lay out alike: the array sizes, a buffer's place in the
 * op sequence, the op list with its buffer references and the chunks
 * buffers share.  The two formats differ only in which members are
 * required, so one reader keeps their messages and checks the same.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int pl_jreserve(struct jctx *c, struct pl_graph *g, json_t *bufs, json_t *ops, const char *what)
{
	size_t nb = json_array_size(bufs), no = json_array_size(ops), nrefs = 0, k;
	if (no == 0)
		return pl_jfail(c, "$.ops", "empty: the %s has no ops", what);
	if (nb > INT32_MAX / 2 || no > INT32_MAX / 2)
		return pl_jfail(c, "$", "too many ops or buffers");
	json_t *v;
	/* One pass to size refs exactly: the op loop fills it in place. */
	json_array_foreach(ops, k, v)
	{
		static const char *lists[] = {"reads", "writes", "refs", "partial"};
		for (int l = 0; l < 4; l++)
			nrefs += json_array_size(json_object_get(v, lists[l]));
		/* (refs are counted in 32 bits; each term is below INT32_MAX) */
		if (nrefs > INT32_MAX)
			return pl_jfail(c, "$.ops", "more than %d buffer references", INT32_MAX);
	}
	g->nops = (int32_t)no;
	g->nbufs = (int32_t)nb;
	if (pl_graph_reserve(g, g->nops, g->nbufs, (uint32_t)nrefs))
		return pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
	return 0;
}

int pl_jbuffer_set(struct jobj o, struct pl_graph *g, size_t k, const struct jbuf *jb)
{
	struct jctx *c = o.c;
	const char *where = o.where;
	int64_t id = jb->id, alloc_at = jb->alloc_at, free_at = jb->free_at;
	struct pl_buffer *b = &g->bufs[k];
	int64_t no = g->nops;
	if (id != (int64_t)k)
		return pl_jfail(c, where, "id is %lld, expected %zu (ids are positions)",
		                (long long)id, k);
	/* free_at == nops: freed after the last op; -1: never allocated or freed. */
	if (alloc_at < -1 || alloc_at >= no || free_at < -1 || free_at > no ||
	    (free_at >= 0 && free_at < alloc_at))
		return pl_jfail(c, where, "bad lifetime: alloc_at %lld, free_at %lld",
		                (long long)alloc_at, (long long)free_at);
	if (b->size < 0 || b->rounded < 0)
		return pl_jfail(c, where, "negative size");
	int dead, rc;
	if ((rc = pl_jbool(o, "dead_across_boundary", &dead, 0, 0)))
		return rc;
	/* Only a buffer live across the boundary has content there. */
	if (dead && (alloc_at != -1 || free_at != -1))
		return pl_jfail(c, where,
		                "dead_across_boundary on a buffer not live across the iteration "
		                "boundary (alloc_at %lld, free_at %lld; both must be -1)",
		                (long long)alloc_at, (long long)free_at);
	b->alloc_at = (int32_t)alloc_at;
	b->free_at = (int32_t)free_at;
	b->small = (uint8_t)jb->small;
	b->persistent = (uint8_t)jb->persistent;
	b->dead_across = (uint8_t)dead;
	return 0;
}

static enum pl_kind parse_kind(const char *s)
{
	if (!strcmp(s, "kernel"))
		return PL_KIND_KERNEL;
	if (!strcmp(s, "memcpy"))
		return PL_KIND_MEMCPY;
	if (!strcmp(s, "memset"))
		return PL_KIND_MEMSET;
	if (!strcmp(s, "host_func"))
		return PL_KIND_HOST_FUNC;
	return PL_KIND_OTHER;
}

/* Reading $.ops: where the op's buffers already are in its refs
 * (seen[b], -1 none), and whether the file is a trace (its members
 * required, a list element may be an [id, offset, ...] ref). */
struct jops {
	struct jctx *c;
	struct pl_graph *g;
	int32_t *seen;
	int trace;
};

/* Adds the buffer ids of a JSON array to op opi's refs; a buffer listed
 * twice (read and written) gets one ref with both flags. */
static int add_refs(struct jops *in, int32_t opi, json_t *arr, const char *where, uint32_t flags)
{
	struct jctx *c = in->c;
	struct pl_graph *g = in->g;
	int32_t *seen = in->seen;
	int pairs = in->trace;
	size_t k;
	json_t *v;
	json_array_foreach(arr, k, v)
	{
		json_t *idv = pairs && json_is_array(v) ? json_array_get(v, 0) : v;
		if (!json_is_integer(idv))
			return pl_jfail(c, where, "element %zu must be a buffer id", k);
		int64_t id = json_integer_value(idv);
		if (id < 0 || id >= g->nbufs)
			return pl_jfail(c, where,
			                "element %zu: buffer %lld does not exist (%d buffers)", k,
			                (long long)id, g->nbufs);
		struct pl_op *op = &g->ops[opi];
		if (seen[id] >= 0) {
			g->refs[seen[id]].flags |= flags;
			continue;
		}
		seen[id] = (int32_t)(op->ref_off + op->nrefs);
		g->refs[op->ref_off + op->nrefs++] = (struct pl_ref){(int32_t)id, 0, flags};
		g->nrefs++;
	}
	return 0;
}

static int load_op(struct jops *in, json_t *v, size_t k)
{
	struct jctx *c = in->c;
	struct pl_graph *g = in->g;
	int trace = in->trace;
	char where[96];
	snprintf(where, sizeof(where), "$.ops[%zu]", k);
	struct pl_op *op = &g->ops[k];
	int64_t i, dur, stream, bytes;
	const char *kind, *name, *why, *via, *copy;
	int repl, coll, rc;
	json_t *reads, *writes, *refs, *partial;
	/* A graph file may leave out what a trace always writes. */
	if ((rc = pl_jint(pl_jo(c, v, where), "i", &i, 1, 0)) ||
	    (rc = pl_jstr(pl_jo(c, v, where), "kind", &kind, trace, "kernel")) ||
	    (rc = pl_jstr(pl_jo(c, v, where), "name", &name, 0, "")) ||
	    (rc = pl_jint_in(pl_jo(c, v, where), "duration_ns", &dur,
	                     (struct jint){1, 0, -1, PL_MAX_AMOUNT})) ||
	    (rc = pl_jbool(pl_jo(c, v, where), "replayable", &repl, trace, 1)) ||
	    (rc = pl_jbool(pl_jo(c, v, where), "collective", &coll, 0, 0)) ||
	    (rc = pl_jstr(pl_jo(c, v, where), "why_not", &why, 0, "")) ||
	    (rc = pl_jarr(pl_jo(c, v, where), "reads", &reads, 1)) ||
	    (rc = pl_jarr(pl_jo(c, v, where), "writes", &writes, 1)) ||
	    (rc = pl_jarr(pl_jo(c, v, where), "refs", &refs, 0)) ||
	    (rc = pl_jarr(pl_jo(c, v, where), "partial", &partial, 0)) ||
	    (rc = pl_jint_in(pl_jo(c, v, where), "stream", &stream,
	                     (struct jint){0, 0, 0, INT32_MAX})) ||
	    (rc = pl_jint_in(pl_jo(c, v, where), "bytes", &bytes,
	                     (struct jint){0, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jstr(pl_jo(c, v, where), "via", &via, 0, "")) ||
	    (rc = pl_jstr(pl_jo(c, v, where), "copy", &copy, 0, "")))
		return rc;
	if (i != (int64_t)k)
		return pl_jfail(c, where, "\"i\" is %lld, expected %zu", (long long)i, k);
	op->kind = (uint8_t)parse_kind(kind);
	op->name = pl_graph_strdup(g, name);
	op->why_not = pl_graph_strdup(g, why);
	op->duration_ns = dur;
	op->stream = (int32_t)stream;
	op->bytes = bytes;
	op->via = pl_graph_strdup(g, via);
	op->copy = pl_graph_strdup(g, copy);
	op->replayable = (uint8_t)repl && !coll;
	op->collective = (uint8_t)coll;
	op->ref_off = g->nrefs;
	char w2[128];
	snprintf(w2, sizeof(w2), "%s.reads", where);
	if ((rc = add_refs(in, (int32_t)k, reads, w2, PL_REF_READ)))
		return rc;
	snprintf(w2, sizeof(w2), "%s.writes", where);
	if ((rc = add_refs(in, (int32_t)k, writes, w2, PL_REF_WRITE)))
		return rc;
	if (refs) {
		snprintf(w2, sizeof(w2), "%s.refs", where);
		if ((rc = add_refs(in, (int32_t)k, refs, w2, 0)))
			return rc;
	}
	if (partial) {
		snprintf(w2, sizeof(w2), "%s.partial", where);
		uint32_t before = op->nrefs;
		if ((rc = add_refs(in, (int32_t)k, partial, w2, PL_REF_PARTIAL)))
			return rc;
		/* A partial write leaves the rest of the buffer as it was: the
		 * op depends on the prior version. */
		for (uint32_t r = 0; r < op->nrefs; r++) {
			struct pl_ref *ref = &g->refs[op->ref_off + r];
			if (!(ref->flags & PL_REF_PARTIAL))
				continue;
			if (r >= before || !(ref->flags & PL_REF_WRITE))
				return pl_jfail(c, w2, "buffer %d is not in \"writes\"", ref->buf);
			ref->flags |= PL_REF_READ;
		}
	}
	/* Only this op's buffers were marked: unmarking them is cheaper than
	 * clearing all of seen for the next op. */
	for (uint32_t r = 0; r < op->nrefs; r++)
		in->seen[g->refs[op->ref_off + r].buf] = -1;
	return 0;
}

int pl_jops(struct jctx *c, struct pl_graph *g, json_t *ops, int trace)
{
	size_t nb = (size_t)g->nbufs, k;
	int32_t *seen = malloc(sizeof(int32_t) * (nb ? nb : 1));
	if (!seen)
		return pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
	for (size_t b = 0; b < nb; b++)
		seen[b] = -1;
	g->nrefs = 0;
	int rc = 0;
	json_t *v;
	struct jops in = {c, g, seen, trace};
	json_array_foreach(ops, k, v)
	{
		if ((rc = load_op(&in, v, k)))
			break;
	}
	free(seen);
	return rc;
}

int pl_jdevice_copy(struct jctx *c, struct pl_graph *g, json_t *root)
{
	json_t *dc = json_object_get(root, "device_copy");
	if (!dc)
		return 0; /* not measured: copies count as free */
	if (!json_is_object(dc))
		return pl_jfail(c, "$.device_copy", "must be an object");
	/* At least a byte per ns and at most a second of fixed cost: with
	 * sizes below 2^53 a copy's ns then stay below 2^54. */
	int rc;
	if ((rc = pl_jint_in(pl_jo(c, dc, "$.device_copy"), "fixed_ns", &g->copy_fixed_ns,
	                     (struct jint){1, 0, 0, 1000000000})) ||
	    (rc = pl_jint_in(pl_jo(c, dc, "$.device_copy"), "bytes_per_us", &g->copy_bytes_per_us,
	                     (struct jint){1, 0, 1000, PL_MAX_AMOUNT})))
		return rc;
	return 0;
}

int pl_jshared(struct jctx *c, struct pl_graph *g, void *root_v)
{
	json_t *root = root_v, *arr;
	int rc;
	if ((rc = pl_jarr(pl_jo(c, root, "$"), "shared_chunks", &arr, 0)) || !arr ||
	    !json_array_size(arr))
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
		if ((rc = pl_jint_in(pl_jo(c, v, where), "bytes", &s->bytes,
		                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})))
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
