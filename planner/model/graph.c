/*
 * graph.c — the op-graph model: construction helpers shared by the
 * loaders, and the derivation of versions, real reads and the baseline
 * memory curve from raw reads/writes.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int pl_errf(char *err, size_t errlen, int status, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return status;
}

uint64_t pl_fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= PL_FNV_PRIME;
	}
	return h;
}

double pl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *pl_hash_str(uint64_t h, char *buf)
{
	snprintf(buf, 19, "0x%016llx", (unsigned long long)h);
	return buf;
}

/* Strings live in 64 KiB blocks chained through their first pointer, so
 * the name pointers stay valid and the graph frees them in one walk. */
#define ARENA_BLOCK 65536

const char *pl_graph_strdup(struct pl_graph *g, const char *s)
{
	size_t n = strlen(s) + 1;
	char **head = &g->strings;
	size_t *fill = (size_t *)(*head ? *head + sizeof(char *) : NULL);
	size_t hdr = sizeof(char *) + sizeof(size_t);
	if (!*head || *fill + n > ARENA_BLOCK) {
		size_t cap = n + hdr > ARENA_BLOCK ? n + hdr : ARENA_BLOCK;
		char *blk = malloc(cap);
		if (!blk)
			return NULL;
		memcpy(blk, head, sizeof(char *));
		fill = (size_t *)(blk + sizeof(char *));
		*fill = hdr;
		*head = blk;
	}
	char *dst = *head + *fill;
	memcpy(dst, s, n);
	*fill += n;
	return dst;
}

struct pl_graph *pl_graph_new(void)
{
	struct pl_graph *g = calloc(1, sizeof(*g));
	if (g) {
		g->granularity = 1;
		/* A graph file says nothing of these. */
		g->trace = (struct pl_trace_info){.device = "",
		                                  .cupti_note = "",
		                                  .duration_ns = -1,
		                                  .peak_bytes = -1,
		                                  .cupti_kernels = -1,
		                                  .cupti_launches = -1};
	}
	return g;
}

int pl_graph_reserve(struct pl_graph *g, int32_t nops, int32_t nbufs, uint32_t nrefs)
{
	g->ops = calloc(nops ? nops : 1, sizeof(*g->ops));
	g->bufs = calloc(nbufs ? nbufs : 1, sizeof(*g->bufs));
	g->refs = calloc(nrefs ? nrefs : 1, sizeof(*g->refs));
	return g->ops && g->bufs && g->refs ? 0 : -1;
}

void pl_graph_free(struct pl_graph *g)
{
	if (!g)
		return;
	char *blk = g->strings;
	while (blk) {
		char *next;
		memcpy(&next, blk, sizeof(char *));
		free(blk);
		blk = next;
	}
	free(g->name);
	free(g->ops);
	free(g->bufs);
	free(g->refs);
	free(g->live);
	free(g->shared);
	free(g->shared_bufs);
	free(g);
}

static uint64_t content_hash(const struct pl_graph *g)
{
	uint64_t h = PL_FNV_OFFSET;
	int32_t n[2] = {g->nops, g->nbufs};
	h = pl_fnv(h, n, sizeof(n));
	for (int32_t i = 0; i < g->nbufs; i++) {
		const struct pl_buffer *b = &g->bufs[i];
		int64_t v[4] = {b->size, b->rounded, b->alloc_at, b->free_at};
		h = pl_fnv(h, v, sizeof(v));
		/* (only when set: hashes of graphs without it stay as they were) */
		if (b->dead_across)
			h = pl_fnv(h, "dead", 4);
	}
	for (int32_t s = 0; s < g->nshared; s++) { /* (none: as before) */
		h = pl_fnv(h, &g->shared[s].bytes, sizeof(g->shared[s].bytes));
		h = pl_fnv(h, g->shared_bufs + g->shared[s].off, sizeof(int32_t) * g->shared[s].n);
	}
	for (int32_t i = 0; i < g->nops; i++) {
		const struct pl_op *op = &g->ops[i];
		h = pl_fnv(h, op->name, strlen(op->name) + 1);
		for (uint32_t k = 0; k < op->nrefs; k++) {
			const struct pl_ref *r = &g->refs[op->ref_off + k];
			int32_t v[2] = {r->buf, (int32_t)r->flags};
			h = pl_fnv(h, v, sizeof(v));
		}
	}
	return h;
}

/* What pl_graph_finish works with: the version each buffer holds so
 * far (cur), the baseline's changes by position (diff, nops + 1), the
 * bytes counted so far (total). */
struct finish {
	struct pl_graph *g;
	const char *src;
	char *err;
	size_t errlen;
	int32_t *cur;
	int64_t *diff, total;
};

/* Lifetimes and sizes; each buffer's bytes into the baseline. */
static int finish_buffers(struct finish *f)
{
	struct pl_graph *g = f->g;
	for (int32_t b = 0; b < g->nbufs; b++) {
		struct pl_buffer *bf = &g->bufs[b];
		if (bf->alloc_at < -1 || bf->alloc_at >= g->nops || bf->free_at < -1 ||
		    bf->free_at > g->nops || (bf->free_at >= 0 && bf->free_at < bf->alloc_at) ||
		    bf->size < 0 || bf->rounded < 0 || bf->size > PL_MAX_AMOUNT ||
		    bf->rounded > PL_MAX_AMOUNT)
			return pl_errf(
			    f->err, f->errlen, PL_EINPUT,
			    "%s: buffer %d: bad lifetime or size (alloc_at %d, free_at %d)", f->src,
			    b, bf->alloc_at, bf->free_at);
		if (bf->dead_across && (bf->alloc_at != -1 || bf->free_at != -1))
			return pl_errf(
			    f->err, f->errlen, PL_EINPUT,
			    "%s: buffer %d: dead across the boundary but not live across "
			    "it (alloc_at %d, free_at %d)",
			    f->src, b, bf->alloc_at, bf->free_at);
		if (bf->small)
			bf->rounded = 0;
		if ((f->total += bf->rounded) > PL_MAX_AMOUNT)
			return pl_errf(f->err, f->errlen, PL_EINPUT,
			               "%s: $.buffers[%d]: the buffers' \"rounded\" sizes and "
			               "const_bytes add up to more than 2^53 bytes",
			               f->src, b);
		if (!bf->site)
			bf->site = "";
		f->cur[b] = pl_ver_initial(bf);
		int32_t lo = bf->alloc_at < 0 ? 0 : bf->alloc_at;
		int32_t hi = bf->free_at < 0 ? g->nops : bf->free_at;
		f->diff[lo] += bf->rounded;
		f->diff[hi] -= bf->rounded;
	}
	return PL_OK;
}

/* The mean of the known durations, which unknown ones get (*mean). */
static int finish_mean(struct finish *f, int64_t *mean)
{
	const struct pl_graph *g = f->g;
	int64_t known = 0, nknown = 0;
	for (int32_t i = 0; i < g->nops; i++)
		if (g->ops[i].duration_ns >= 0) {
			if (g->ops[i].duration_ns > PL_MAX_AMOUNT ||
			    (known += g->ops[i].duration_ns) > PL_MAX_AMOUNT)
				return pl_errf(f->err, f->errlen, PL_EINPUT,
				               "%s: $.ops[%d]: the ops' \"duration_ns\" add up to "
				               "more than 2^53 ns",
				               f->src, i);
			nknown++;
		}
	*mean = nknown ? known / nknown : 1;
	return PL_OK;
}

/* Reference r of op i: checked, given the version it sees, its read
 * flag made real. */
static int finish_ref(struct finish *f, int32_t i, struct pl_ref *r)
{
	const struct pl_graph *g = f->g;
	if (r->buf < 0 || r->buf >= g->nbufs)
		return pl_errf(f->err, f->errlen, PL_EINPUT,
		               "%s: op %d references buffer %d, which does not exist (%d buffers)",
		               f->src, i, r->buf, g->nbufs);
	if ((r->flags & PL_REF_PARTIAL) && !(r->flags & PL_REF_WRITE))
		return pl_errf(f->err, f->errlen, PL_EINPUT,
		               "%s: op %d writes buffer %d partially but does not write it", f->src,
		               i, r->buf);
	/* The bytes a partial write leaves keep the prior version. */
	if (r->flags & PL_REF_PARTIAL)
		r->flags |= PL_REF_READ;
	if (!pl_buf_alive(&g->bufs[r->buf], i, g->nops))
		return pl_errf(f->err, f->errlen, PL_EINPUT,
		               "%s: op %d references buffer %d outside its lifetime "
		               "(alloc_at %d, free_at %d)",
		               f->src, i, r->buf, g->bufs[r->buf].alloc_at,
		               g->bufs[r->buf].free_at);
	r->ver = f->cur[r->buf];
	/* Content dead across the boundary is never read: its first access
	 * overwrites all of it. */
	if (g->bufs[r->buf].dead_across && r->ver == PL_VER_FRESH && (r->flags & PL_REF_READ) &&
	    (!(r->flags & PL_REF_WRITE) || (r->flags & PL_REF_PARTIAL)))
		return pl_errf(f->err, f->errlen, PL_EINPUT,
		               "%s: buffer %d is dead across the boundary, but op %d reads it "
		               "before writing all of it",
		               f->src, r->buf, i);
	/* A fresh allocation holds nothing the op could depend on. */
	if (r->ver == PL_VER_FRESH)
		r->flags &= ~PL_REF_READ;
	return PL_OK;
}

/* Durations (the unknown ones get the mean), the strings' defaults, the
 * versions each op reads and writes. */
static int finish_ops(struct finish *f, int64_t mean)
{
	struct pl_graph *g = f->g;
	g->iteration_ns = 0;
	for (int32_t i = 0; i < g->nops; i++) {
		struct pl_op *op = &g->ops[i];
		/* The iteration time counts measured ops only; the estimate only
		 * weighs replays of unmeasured ones. */
		op->measured = op->duration_ns >= 0;
		if (op->duration_ns < 0)
			op->duration_ns = mean;
		else
			g->iteration_ns += op->duration_ns;
		if (!op->name)
			op->name = "";
		if (!op->why_not)
			op->why_not = "";
		if (!op->via)
			op->via = "";
		if (!op->copy)
			op->copy = "";
		int rc;
		for (uint32_t k = 0; k < op->nrefs; k++)
			if ((rc = finish_ref(f, i, &g->refs[op->ref_off + k])))
				return rc;
		for (uint32_t k = 0; k < op->nrefs; k++) {
			struct pl_ref *r = &g->refs[op->ref_off + k];
			if (r->flags & PL_REF_WRITE)
				f->cur[r->buf] = i;
		}
	}
	return PL_OK;
}

int pl_graph_baseline(struct pl_graph *g, int64_t *diff)
{
	if (pl_shared_baseline(g, diff))
		return -1;
	int64_t acc = g->const_bytes;
	g->baseline_peak = 0;
	for (int32_t p = 0; p < g->nops; p++) {
		acc += diff[p];
		g->live[p] = acc;
		if (acc > g->baseline_peak)
			g->baseline_peak = acc;
	}
	return 0;
}

/* The baseline memory curve and its peak. */
static int finish_live(struct finish *f)
{
	struct pl_graph *g = f->g;
	free(g->live);
	g->live = malloc(sizeof(int64_t) * g->nops);
	if (!g->live || pl_graph_baseline(g, f->diff))
		return pl_errf(f->err, f->errlen, PL_EINTERNAL, "out of memory");
	return PL_OK;
}

int pl_graph_finish(struct pl_graph *g, int has_hash, const char *src, char *err, size_t errlen)
{
	if (g->nops <= 0)
		return pl_errf(err, errlen, PL_EINPUT, "%s: the graph has no ops", src);
	if (g->granularity <= 0)
		g->granularity = 1;
	struct finish f = {.g = g, .src = src, .err = err, .errlen = errlen};
	f.cur = malloc(sizeof(int32_t) * (g->nbufs ? g->nbufs : 1));
	f.diff = calloc((size_t)g->nops + 1, sizeof(int64_t));
	int64_t mean = 0;
	/* Sizes and durations are at most 2^53 each (the loaders see to it);
	 * their sums must stay there too, so no curve or cost overflows. */
	f.total = g->const_bytes;
	int rc;
	if (!f.cur || !f.diff)
		rc = pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	else if (f.total < 0 || f.total > PL_MAX_AMOUNT)
		rc = pl_errf(err, errlen, PL_EINPUT, "%s: const_bytes %lld is outside 0..2^53", src,
		             (long long)f.total);
	else if (!(rc = finish_buffers(&f)) && !(rc = finish_mean(&f, &mean)) &&
	         !(rc = finish_ops(&f, mean)) && !(rc = finish_live(&f)) && !has_hash)
		g->hash = content_hash(g);
	free(f.cur);
	free(f.diff);
	return rc;
}

/* Buffers by alloc_at and by free_at, as CSR lists over positions. */
int32_t *pl_bufs_by_pos(const struct pl_graph *g, int use_free, uint32_t **off_out)
{
	uint32_t *off = calloc((size_t)g->nops + 2, sizeof(uint32_t));
	int32_t *list = malloc(sizeof(int32_t) * (g->nbufs ? g->nbufs : 1));
	if (!off || !list) {
		free(off);
		free(list);
		return NULL;
	}
	for (int32_t b = 0; b < g->nbufs; b++) {
		int32_t at = use_free ? g->bufs[b].free_at : g->bufs[b].alloc_at;
		if (at >= 0 && at < g->nops)
			off[at + 1]++;
	}
	for (int32_t p = 0; p < g->nops; p++)
		off[p + 1] += off[p];
	uint32_t *fill = malloc(sizeof(uint32_t) * ((size_t)g->nops + 1));
	if (!fill) {
		free(off);
		free(list);
		return NULL;
	}
	memcpy(fill, off, sizeof(uint32_t) * ((size_t)g->nops + 1));
	for (int32_t b = 0; b < g->nbufs; b++) {
		int32_t at = use_free ? g->bufs[b].free_at : g->bufs[b].alloc_at;
		if (at >= 0 && at < g->nops)
			list[fill[at]++] = b;
	}
	free(fill);
	*off_out = off;
	return list;
}

static int pl_graph_kept_whole(const struct pl_buffer *b)
{
	return b->persistent && !b->dead_across && b->alloc_at < 0 && b->free_at < 0;
}

int64_t pl_graph_lower_bound(const struct pl_graph *g)
{
	/* Persistent content stays (unless dead across the boundary); an op
	 * needs all it references mapped at once.  Only what lives through the
	 * whole iteration counts as kept everywhere: a file may mark a buffer
	 * persistent that it frees or allocates inside the iteration, and the
	 * baseline does not count it outside its lifetime. */
	int64_t kept = g->const_bytes, best = 0;
	/* A shared chunk group counts where one of its buffers must be
	 * mapped: kept throughout, or referenced by the op (mark[s]: the op
	 * that counted it last, or nops for always).  Out of memory: groups
	 * are left out, which only lowers the bound. */
	int32_t *mark = malloc(sizeof(int32_t) * (g->nshared ? g->nshared : 1));
	for (int32_t s = 0; mark && s < g->nshared; s++)
		mark[s] = -1;
	for (int32_t b = 0; b < g->nbufs; b++)
		if (pl_graph_kept_whole(&g->bufs[b])) {
			kept += g->bufs[b].rounded;
			for (int k = 0; mark && k < 2 && g->bufs[b].shared[k]; k++)
				if (mark[g->bufs[b].shared[k] - 1] != g->nops) {
					mark[g->bufs[b].shared[k] - 1] = g->nops;
					kept += g->shared[g->bufs[b].shared[k] - 1].bytes;
				}
		}
	for (int32_t i = 0; i < g->nops; i++) {
		int64_t need = kept;
		for (uint32_t k = 0; k < g->ops[i].nrefs; k++) {
			const struct pl_buffer *b = &g->bufs[g->refs[g->ops[i].ref_off + k].buf];
			if (!pl_graph_kept_whole(b))
				need += b->rounded;
			for (int j = 0; mark && j < 2 && b->shared[j]; j++) {
				int32_t s = (int32_t)b->shared[j] - 1;
				if (mark[s] != g->nops && mark[s] != i) {
					mark[s] = i;
					need += g->shared[s].bytes;
				}
			}
		}
		best = need > best ? need : best;
	}
	free(mark);
	return best;
}
