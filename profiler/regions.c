/*
 * regions.c — the buffers of the graph, from the allocations and what the
 * ops did to them (docs/trace-format.md, "Regions"):
 *
 *   - a long-lived allocation (live across the boundary, not packed small)
 *     is cut at every offset a kernel parameter points to, at both ends
 *     of every copy and set inside it, where a kernel's blind write of
 *     one run from a pointer ends (cut_runs), and where a piece's proven
 *     blind changes end before it does (cut_tails): each piece is a region, a
 *     buffer of its own with its own versions;
 *   - an op writes the regions its changes fall in (delta.c), in part when
 *     some bytes of the region kept their value;
 *   - a kernel reads, through a pointer to a region's start, up to its
 *     next pointer into the allocation or the allocation's end (and as
 *     far as any write through that pointer reached), but for regions its
 *     proof of unread bytes showed it does not read (delta.c, unread.c);
 *     and what it wrote, unless its writes there were proven blind and
 *     cover the region whole;
 *   - a copy reads its source range; a copy or set writes its destination;
 *   - a buffer live across the boundary whose first access in the
 *     iteration is a whole, blind write is dead across the boundary.
 *
 * Other allocations stay whole (one region each).  A read below a
 * kernel's lowest pointer or through a pointer in device memory is not
 * seen; REMAT_VERIFY=1 catches a rebuild it makes wrong (docs/run-mode.md).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct split {
	uint64_t *at; /* region starts, ascending, at[0] = 0 */
	/* Per region: how far a read through a pointer to its start reaches
	 * (as far as any write through it went, at least the region's end). */
	uint64_t *ext;
	uint32_t n;
	size_t cap;
	int32_t first; /* buffer id of its first region */
	int whole;     /* never cut */
};

struct idset {
	int32_t *v;
	size_t n, cap;
};

/* State of one run of prof_regions. */
struct regions {
	struct remat_profile *p;
	size_t cap_shared; /* p->shared's */
	struct split *sp;
	size_t nnew;
	int oom;
};

/* Room for one more element after n in arr; 0, or -1 with g->oom. */
#define ROOM(g, arr, n, cap) (REMAT_GROW(arr, n, cap) ? ((g)->oom = 1, -1) : 0)

static void push_at(struct regions *g, struct split *s, uint64_t off)
{
	if (!ROOM(g, s->at, s->n, s->cap))
		s->at[s->n++] = off;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Index of the region of s holding offset off. */
static uint32_t region_of(const struct split *s, uint64_t off)
{
	uint32_t lo = 0, hi = s->n;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (s->at[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t region_end(const struct split *s, uint32_t i, uint64_t size)
{
	return i + 1 < s->n ? s->at[i + 1] : size;
}

static int cut_allowed(const struct remat_profile *p, int32_t a)
{
	const struct prof_buf *u = &p->bufs[a];
	return u->persistent && !u->small && u->size;
}

/* What delta.c knows of op k. */
struct op_view {
	const struct prof_op *o;
	const struct prof_change *c, *src; /* changes; a copy's source range */
	uint32_t n, ns;
	int blind; /* -1: its changes are unknown */
	int kernel;
};

static struct op_view view(const struct regions *g, size_t k)
{
	struct op_view v = {.o = &g->p->ops[k]};
	v.c = prof_delta_changes(k, &v.n, &v.blind);
	v.src = prof_delta_source(k, &v.ns);
	v.kernel = v.o->kind == REMAT_OP_KERNEL;
	return v;
}

/* The cuts of allocation a in order, each once, inside it. */
static void sort_cuts(const struct remat_profile *p, struct split *s, size_t a)
{
	qsort(s->at, s->n, sizeof(*s->at), cmp_u64);
	uint32_t m = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->at[i] < p->bufs[a].size && (!m || s->at[i] != s->at[m - 1]))
			s->at[m++] = s->at[i];
	s->n = m ? m : 1; /* a zero-byte allocation: one empty region */
}

/* A cut where the changes in a region end, when they end before the
 * region does and are proven blind (every byte written is known): what
 * lies beyond (free space of the program's pool after its last tensor, a
 * block freed before the iteration) no op changes in the iteration, so it
 * is no part of the tensor's versions.  Left in the tensor's region it
 * would make every write of the tensor a write in part, and the region
 * live across the boundary.  The piece cut off keeps its content through
 * the iteration: it is never dead across the boundary, and so never
 * evicted. */
static void cut_tails(struct regions *g)
{
	struct remat_profile *p = g->p;
	for (size_t a = 0; a < p->nbufs && !g->oom; a++)
		if (!g->sp[a].whole && !(g->sp[a].ext = calloc(g->sp[a].n, sizeof(uint64_t))))
			g->oom = 1;
	for (size_t k = 0; k < p->nops && !g->oom; k++) {
		struct op_view v = view(g, k);
		for (uint32_t i = 0; i < v.n; i++) {
			const struct prof_change *x = &v.c[i];
			struct split *s = &g->sp[x->buf];
			uint64_t size = p->bufs[x->buf].size;
			for (uint32_t ri = s->whole ? s->n : region_of(s, x->lo);
			     ri < s->n && s->at[ri] < x->hi; ri++) {
				uint64_t end = region_end(s, ri, size);
				/* An update's changes are only the bytes whose value
				 * changed: it may write further. */
				uint64_t hi = x->hi < end && x->blind ? x->hi : end;
				if (hi > s->ext[ri])
					s->ext[ri] = hi;
			}
		}
	}
	for (size_t a = 0; a < p->nbufs; a++) {
		struct split *s = &g->sp[a];
		uint32_t n = s->n;
		for (uint32_t i = 0; s->ext && !g->oom && i < n; i++)
			if (s->ext[i] > s->at[i] && s->ext[i] < region_end(s, i, p->bufs[a].size))
				push_at(g, s, s->ext[i]);
		free(s->ext);
		s->ext = NULL;
		if (s->n != n)
			sort_cuts(p, s, a);
	}
}

/* A cut where a kernel's write through a pointer ends, when it is proven
 * blind and is one run from the pointer: a tensor written whole.  A
 * program's own pool gives one block to tensors of several sizes in one
 * iteration (a caching allocator's reuse): without the cut, the smaller
 * tensor's region would take in the start of the next one, its write
 * would be one in part, and the region live across the boundary.  A
 * write of scattered runs (a triangle, a strided slice) cuts nothing. */
static void cut_runs(struct regions *g)
{
	struct remat_profile *p = g->p;
	for (size_t k = 0; k < p->nops; k++) {
		struct op_view v = view(g, k);
		for (uint32_t i = 0; v.kernel && i < v.n; i++) {
			const struct prof_change *x = &v.c[i];
			size_t via = 0;
			if (g->sp[x->buf].whole || !x->blind ||
			    prof_delta_via(v.o, x->buf, x->lo, &via) != (int64_t)x->lo)
				continue;
			if (i + 1 < v.n && v.c[i + 1].buf == x->buf &&
			    prof_delta_via(v.o, x->buf, v.c[i + 1].lo, &via) == (int64_t)x->lo)
				continue; /* more runs through the same pointer */
			push_at(g, &g->sp[x->buf], x->hi);
		}
	}
	for (size_t a = 0; a < p->nbufs; a++)
		if (!g->sp[a].whole)
			sort_cuts(p, &g->sp[a], a);
}

/* Where each allocation is cut. */
static void cuts(struct regions *g)
{
	struct remat_profile *p = g->p;
	for (size_t k = 0; k < p->nops; k++) {
		struct op_view v = view(g, k);
		const struct prof_op *o = v.o;
		if (v.blind < 0) { /* what it changed is not known byte by byte */
			for (size_t r = 0; r < o->nreads; r++)
				g->sp[o->reads[r]].whole = 1;
			for (size_t w = 0; w < o->nwrites; w++)
				g->sp[o->writes[w]].whole = 1;
		}
		if (v.kernel) {
			for (size_t r = 0; r < o->nrefs; r++)
				push_at(g, &g->sp[o->refs[r].buf], o->refs[r].off);
			continue;
		}
		for (uint32_t i = 0; i < v.n + v.ns; i++) {
			const struct prof_change *x = i < v.n ? &v.c[i] : &v.src[i - v.n];
			push_at(g, &g->sp[x->buf], x->lo);
			push_at(g, &g->sp[x->buf], x->hi);
		}
	}
	for (size_t a = 0; a < p->nbufs; a++) {
		struct split *s = &g->sp[a];
		if (!cut_allowed(p, (int32_t)a))
			s->whole = 1;
		if (s->whole)
			s->n = 0;
		push_at(g, s, 0);
		sort_cuts(p, s, a);
	}
	if (!g->oom)
		cut_runs(g);
	if (!g->oom)
		cut_tails(g);
	for (size_t a = 0; a < p->nbufs && !g->oom; a++) {
		struct split *s = &g->sp[a];
		s->first = (int32_t)g->nnew;
		g->nnew += s->n;
		if (!(s->ext = calloc(s->n, sizeof(*s->ext)))) {
			g->oom = 1;
			return;
		}
		for (uint32_t i = 0; i < s->n; i++)
			s->ext[i] = region_end(s, i, p->bufs[a].size);
	}
}

/* How far a pointer to a region's start reaches: as far as anything
 * written through it went in the iteration (a kernel's changes from the
 * nearest pointer at or below them, a set's or a copy's whole range).
 * Not only the last write before a read: an arena's first tensor and
 * the whole arena share their address. */
static void reach(struct regions *g)
{
	struct remat_profile *p = g->p;
	for (size_t k = 0; k < p->nops; k++) {
		struct op_view v = view(g, k);
		for (uint32_t i = 0; i < v.n + (v.kernel ? 0 : v.ns); i++) {
			const struct prof_change *x = i < v.n ? &v.c[i] : &v.src[i - v.n];
			struct split *s = &g->sp[x->buf];
			size_t via = 0;
			int64_t from =
			    v.kernel ? prof_delta_via(v.o, x->buf, x->lo, &via) : (int64_t)x->lo;
			if (from < 0 || s->whole)
				continue;
			uint32_t ri = region_of(s, (uint64_t)from);
			if (x->hi > s->ext[ri])
				s->ext[ri] = x->hi;
		}
	}
}

static void set_add(struct regions *g, struct idset *v, int32_t id)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] == id)
			return;
	if (!ROOM(g, v->v, v->n, v->cap))
		v->v[v->n++] = id;
}

static void set_del(struct idset *v, int32_t id)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i] == id) {
			v->v[i] = v->v[--v->n];
			return;
		}
}

/* The regions of allocation a overlapping [lo, hi). */
static void add_range(struct regions *g, struct idset *v, int32_t a, uint64_t lo, uint64_t hi)
{
	const struct split *s = &g->sp[a];
	uint64_t size = g->p->bufs[a].size;
	if (hi > size)
		hi = size;
	uint32_t i = region_of(s, lo);
	do
		set_add(g, v, s->first + (int32_t)i);
	while (++i < s->n && s->at[i] < hi);
}

static void add_all(struct regions *g, struct idset *v, int32_t a)
{
	add_range(g, v, a, 0, g->p->bufs[a].size);
}

/* Region id of allocation a: its index and whether changes cover it. */
static int covered(const struct regions *g, int32_t a, uint32_t ri, const struct prof_change *c,
                   uint32_t n)
{
	const struct split *s = &g->sp[a];
	uint64_t cur = s->at[ri], end = region_end(s, ri, g->p->bufs[a].size);
	for (uint32_t i = 0; i < n && cur < end; i++)
		if (c[i].buf == a && c[i].lo <= cur && c[i].hi > cur)
			cur = c[i].hi;
	return cur >= end;
}

/* The op's writes to region ri of allocation a were proven blind: every
 * change that falls in it (delta.c proves them a pointer at a time when
 * the allocation holds an update in place too). */
static int blind_in(const struct regions *g, int32_t a, uint32_t ri, const struct prof_change *c,
                    uint32_t n)
{
	const struct split *s = &g->sp[a];
	uint64_t lo = s->at[ri], hi = region_end(s, ri, g->p->bufs[a].size);
	int any = 0;
	for (uint32_t i = 0; i < n; i++)
		if (c[i].buf == a && c[i].lo < hi && c[i].hi > lo) {
			if (!c[i].blind)
				return 0;
			any = 1;
		}
	return any;
}

/* The allocation holding new buffer id b, and the region's index in it. */
static int32_t owner(const struct regions *g, int32_t b, uint32_t *ri)
{
	int32_t lo = 0, hi = (int32_t)g->p->nbufs;
	while (hi - lo > 1) {
		int32_t mid = (lo + hi) / 2;
		if (g->sp[mid].first <= b)
			lo = mid;
		else
			hi = mid;
	}
	*ri = (uint32_t)(b - g->sp[lo].first);
	return lo;
}

static int32_t *take(struct idset *v, size_t *n)
{
	*n = v->n;
	if (!v->n) {
		free(v->v);
		return NULL;
	}
	return v->v;
}

static int has(const int32_t *v, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

/* Regions that lie whole in bytes the proof of unread bytes showed op k
 * does not read (delta.c) are no reads of it, however far a pointer's
 * reach went; it writes none of them (the proof perturbs no byte it
 * changed). */
static void drop_unread(const struct regions *g, size_t k, struct idset *rd, const struct idset *wr)
{
	uint32_t n;
	const struct prof_change *u = prof_delta_unread(k, &n);
	for (size_t i = 0; n && i < rd->n;) {
		uint32_t ri;
		int32_t a = owner(g, rd->v[i], &ri), id = rd->v[i];
		const struct split *s = &g->sp[a];
		uint64_t lo = s->at[ri], hi = region_end(s, ri, g->p->bufs[a].size);
		int gone = !has(wr->v, wr->n, id) && !s->whole;
		int inside = 0;
		for (uint32_t j = 0; gone && j < n && !inside; j++)
			inside = u[j].buf == a && u[j].lo <= lo && u[j].hi >= hi;
		if (gone && inside)
			set_del(rd, id);
		else
			i++;
	}
}

static void rewrite_op(struct regions *g, size_t k)
{
	struct remat_profile *p = g->p;
	struct prof_op *o = &p->ops[k];
	struct op_view v = view(g, k);
	uint32_t n = v.n, ns = v.ns;
	int blind = v.blind;
	const struct prof_change *c = v.c, *src = v.src;
	struct idset rd = {0}, wr = {0}, part = {0};
	int kernel = o->kind == REMAT_OP_KERNEL;
	if (kernel) {
		for (size_t r = 0; r < o->nrefs; r++) {
			int32_t a = o->refs[r].buf;
			const struct split *s = &g->sp[a];
			uint32_t ri = region_of(s, o->refs[r].off);
			/* Up to its next pointer into a, or a's end: not only as far
			 * as writes went (an optimizer only reads a gradient), as
			 * "not proven read" is not "unread"; only the proof of
			 * unread bytes takes regions out (drop_unread). */
			uint64_t stop = prof_delta_next_ref(o, a, o->refs[r].off, p->bufs[a].size);
			add_range(g, &rd, a, s->at[ri], s->ext[ri] > stop ? s->ext[ri] : stop);
		}
		/* Buffers it references with no parameter pointing at them
		 * (none today) and small ones, written whole or not at all. */
		for (size_t r = 0; r < o->nreads; r++)
			if (g->sp[o->reads[r]].whole && g->sp[o->reads[r]].n == 1)
				set_add(g, &rd, g->sp[o->reads[r]].first);
	} else {
		for (uint32_t i = 0; i < ns; i++)
			add_range(g, &rd, src[i].buf, src[i].lo, src[i].hi);
		if (!ns)
			for (size_t r = 0; r < o->nreads; r++)
				add_all(g, &rd, o->reads[r]);
	}
	for (uint32_t i = 0; i < n; i++)
		add_range(g, &wr, c[i].buf, c[i].lo, c[i].hi);
	/* Writes the changes do not show: buffers packed small (changed or
	 * not), or an op whose changes are unknown. */
	for (size_t w = 0; w < o->nwrites; w++) {
		const struct prof_buf *u = &p->bufs[o->writes[w]];
		if (blind < 0 || u->small || !u->size || (!kernel && !n))
			add_all(g, &wr, o->writes[w]);
	}
	for (size_t w = 0; w < wr.n; w++) {
		uint32_t ri;
		int32_t a = owner(g, wr.v[w], &ri);
		const struct prof_buf *u = &p->bufs[a];
		int known = blind >= 0 && !u->small && u->size && (kernel || n);
		int whole = known && covered(g, a, ri, c, n);
		if (kernel && !(whole && blind_in(g, a, ri, c, n)))
			set_add(g, &rd, wr.v[w]);
		if (known && !whole)
			set_add(g, &part, wr.v[w]);
	}
	/* A blind whole write is no read, even through a pointer to it. */
	for (size_t w = 0; kernel && blind >= 0 && w < wr.n; w++) {
		uint32_t ri;
		int32_t a = owner(g, wr.v[w], &ri);
		if (!p->bufs[a].small && blind_in(g, a, ri, c, n) && covered(g, a, ri, c, n))
			set_del(&rd, wr.v[w]);
	}
	if (kernel)
		drop_unread(g, k, &rd, &wr);
	for (size_t r = 0; r < o->nrefs; r++) {
		const struct split *s = &g->sp[o->refs[r].buf];
		uint32_t ri = region_of(s, o->refs[r].off);
		o->refs[r].buf = s->first + (int32_t)ri;
		o->refs[r].off -= s->at[ri];
	}
	free(o->reads);
	free(o->writes);
	free(o->partial);
	o->reads = take(&rd, &o->nreads);
	o->writes = take(&wr, &o->nwrites);
	o->partial = take(&part, &o->npartial);
}

/* The chunks of allocation a (cut in s->n > 1 regions, now nb[s->first ..])
 * that no region holds whole, as runs with the same regions in each chunk.
 * Regions partition the allocation, so every byte of such a chunk up to
 * the allocation's end is one of theirs, and the regions of a chunk are
 * consecutive ids.  Each region is in at most two runs: its first and its
 * last chunk.  Returns the bytes put in runs; they stay in edge_bytes,
 * the conservative figure for a reader that ignores the runs. */
static uint64_t share_chunks(struct regions *g, struct prof_buf *nb, const struct split *s,
                             const struct prof_buf *u, uint64_t gran)
{
	struct remat_profile *p = g->p;
	if (gran <= 1 || u->addr % gran || u->rounded < u->size)
		return 0;
	uint64_t end = u->addr + u->size, put = 0;
	uint32_t i = 0; /* region holding the chunk's first byte */
	for (uint64_t c = u->addr; c < end && !g->oom; c += gran) {
		while (i + 1 < s->n && nb[s->first + (int32_t)i + 1].addr <= c)
			i++;
		uint32_t j = i; /* region holding its last byte */
		uint64_t last = (c + gran < end ? c + gran : end) - 1;
		while (j + 1 < s->n && nb[s->first + (int32_t)j + 1].addr <= last)
			j++;
		const struct prof_buf *r = &nb[s->first + (int32_t)i];
		if (i == j && r->addr <= c && r->addr + r->size >= c + gran)
			continue; /* held whole */
		int32_t first = s->first + (int32_t)i;
		uint32_t n = j - i + 1;
		struct prof_shared *run = p->nshared ? &p->shared[p->nshared - 1] : NULL;
		if (run && run->first == first && run->n == n && run->addr + run->bytes == c) {
			run->bytes += gran;
			put += gran;
			continue;
		}
		if (ROOM(g, p->shared, p->nshared, g->cap_shared))
			break;
		uint32_t idx = (uint32_t)p->nshared;
		p->shared[p->nshared++] = (struct prof_shared){c, gran, first, n};
		put += gran;
		for (uint32_t k = 0; k < n; k++) {
			struct prof_buf *m = &nb[first + (int32_t)k];
			m->shared[m->shared[0] ? 1 : 0] = idx + 1;
		}
	}
	return put;
}

static int build_bufs(struct regions *g)
{
	struct remat_profile *p = g->p;
	struct prof_buf *nb = calloc(g->nnew ? g->nnew : 1, sizeof(*nb));
	if (!nb)
		return -1;
	uint64_t gran = p->granularity ? p->granularity : 1;
	for (size_t a = 0; a < p->nbufs; a++) {
		const struct split *s = &g->sp[a];
		struct prof_buf *u = &p->bufs[a];
		uint64_t held = 0;
		for (uint32_t i = 0; i < s->n; i++) {
			struct prof_buf *r = &nb[s->first + (int32_t)i];
			*r = *u;
			r->map_addr = u->addr;
			r->alloc_addr = u->addr;
			if (s->n == 1) {
				u->site = NULL; /* moved */
				u->nsite = 0;
				continue;
			}
			uint64_t end = region_end(s, i, u->size);
			r->region = 1;
			r->alloc_off = s->at[i];
			r->addr = u->addr + s->at[i];
			r->size = end - s->at[i];
			uint64_t lo = (r->addr + gran - 1) / gran * gran,
			         hi = (r->addr + r->size) / gran * gran;
			r->map_addr = lo;
			r->rounded = hi > lo ? hi - lo : 0;
			r->small = !r->rounded;
			held += r->rounded;
			r->site = u->nsite ? calloc(u->nsite, sizeof(char *)) : NULL;
			r->nsite = r->site ? u->nsite : 0;
			for (size_t q = 0; q < r->nsite; q++)
				if (!(r->site[q] = strdup(u->site[q] ? u->site[q] : "")))
					r->nsite = q;
		}
		if (s->n > 1) {
			p->edge_bytes += u->rounded - held;
			share_chunks(g, nb, s, u, gran);
			/* A region with no whole chunk still frees the chunks it
			 * shares once the others there are out: evictable. */
			for (uint32_t i = 0; i < s->n; i++) {
				struct prof_buf *r = &nb[s->first + (int32_t)i];
				r->small = !r->rounded && !r->shared[0];
			}
		}
	}
	for (size_t a = 0; a < p->nbufs; a++) {
		for (size_t q = 0; q < p->bufs[a].nsite; q++)
			free(p->bufs[a].site[q]);
		free(p->bufs[a].site);
	}
	free(p->bufs);
	p->bufs = nb;
	p->nbufs = g->nnew;
	return 0;
}

/* First access of each buffer live across the boundary: a whole blind
 * write (in writes, not read, not partial) makes it dead across. */
static void dead_across(struct remat_profile *p)
{
	uint8_t *seen = calloc(p->nbufs ? p->nbufs : 1, 1);
	if (!seen)
		return;
	for (size_t k = 0; k < p->nops; k++) {
		const struct prof_op *o = &p->ops[k];
		for (int pass = 0; pass < 3; pass++) {
			size_t n = pass == 0 ? o->nwrites : pass == 1 ? o->nreads : o->nrefs;
			for (size_t i = 0; i < n; i++) {
				int32_t b = pass == 0   ? o->writes[i]
				            : pass == 1 ? o->reads[i]
				                        : o->refs[i].buf;
				if (seen[b])
					continue;
				seen[b] = 1;
				struct prof_buf *u = &p->bufs[b];
				u->dead_across = u->persistent && !u->small && pass == 0 &&
				                 !has(o->reads, o->nreads, b) &&
				                 !has(o->partial, o->npartial, b);
			}
		}
	}
	free(seen);
}

int prof_regions(struct remat_profile *p)
{
	struct regions g = {.p = p};
	size_t nalloc = p->nbufs;
	g.sp = calloc(nalloc ? nalloc : 1, sizeof(*g.sp));
	int rc = -1;
	if (!g.sp)
		return -1;
	cuts(&g);
	if (g.oom)
		goto out;
	reach(&g);
	for (size_t k = 0; k < p->nops && !g.oom; k++)
		rewrite_op(&g, k);
	if (g.oom || build_bufs(&g) || g.oom)
		goto out;
	dead_across(p);
	rc = 0;
out:
	for (size_t a = 0; a < nalloc; a++) {
		free(g.sp[a].at);
		free(g.sp[a].ext);
	}
	free(g.sp);
	return rc;
}
