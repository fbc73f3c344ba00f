/* The figures every view shows, computed once from a loaded trace. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* An activation: allocated inside the iteration, or a long-lived region
 * the profile proved dead across the boundary (a pool's or an arena's
 * tensor), which a plan evicts the same way. */
static bool activation(const struct pl_buffer *b)
{
	return !b->persistent || b->dead_across;
}

const char *rr_buf_role(const struct pl_buffer *b)
{
	if (b->persistent && b->dead_across)
		return b->small ? "long-lived, small, dead across the boundary"
		                : "long-lived, dead across the boundary";
	if (b->persistent)
		return b->small ? "persistent, small" : "persistent";
	return b->small ? "per-iteration, small" : "per-iteration";
}

static int copy_index(const char *dir)
{
	static const char *dirs[] = {"HtoD", "DtoH", "DtoD", "HtoH"};
	for (int i = 0; i < 4; i++)
		if (strcmp(dir, dirs[i]) == 0)
			return i;
	return -1;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct rr_kernel_stat *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void count_kernels(const struct rr_trace *t, struct rr_stats *s)
{
	s->kernels = calloc((size_t)t->nops + 1, sizeof(*s->kernels));
	for (int i = 0; i < t->nops; i++) {
		const struct pl_op *o = &t->ops[i];
		int k;
		if (rr_op_kind(o) != PL_KIND_KERNEL)
			continue;
		for (k = 0; k < s->nkernels; k++)
			if (strcmp(s->kernels[k].name, o->name) == 0)
				break;
		if (k == s->nkernels)
			s->kernels[s->nkernels++].name = o->name;
		s->kernels[k].count++;
		if (rr_op_ns(o) > 0)
			s->kernels[k].total_ns += rr_op_ns(o);
	}
	qsort(s->kernels, (size_t)s->nkernels, sizeof(*s->kernels), by_total_desc);
}

/* Ops never replayed, by reason: buffers they write cannot be rebuilt. */
static void count_reasons(const struct rr_trace *t, struct rr_stats *s)
{
	s->reasons = calloc((size_t)t->nops + 1, sizeof(*s->reasons));
	for (int i = 0; i < t->nops; i++) {
		const struct pl_op *o = &t->ops[i];
		const char *why = o->why_not && *o->why_not ? o->why_not : "no reason given";
		int k;
		if (o->replayable)
			continue;
		s->not_replayable++;
		for (k = 0; k < s->nreasons; k++)
			if (strcmp(s->reasons[k].why, why) == 0)
				break;
		if (k == s->nreasons)
			s->reasons[s->nreasons++].why = why;
		s->reasons[k].count++;
	}
	for (int i = 1; i < s->nreasons; i++)
		for (int j = i; j > 0 && s->reasons[j].count > s->reasons[j - 1].count; j--) {
			struct rr_reason tmp = s->reasons[j];
			s->reasons[j] = s->reasons[j - 1];
			s->reasons[j - 1] = tmp;
		}
}

static void count_vias(const struct rr_trace *t, struct rr_stats *s)
{
	s->vias = calloc((size_t)t->nops + 1, sizeof(*s->vias));
	for (int i = 0; i < t->nops; i++) {
		const char *via = *t->ops[i].via ? t->ops[i].via : "?";
		int k;
		for (k = 0; k < s->nvias; k++)
			if (strcmp(s->vias[k].via, via) == 0)
				break;
		if (k == s->nvias)
			s->vias[s->nvias++].via = via;
		s->vias[k].count++;
	}
	/* insertion sort: a handful of entry points, most used first */
	for (int i = 1; i < s->nvias; i++)
		for (int j = i; j > 0 && s->vias[j].count > s->vias[j - 1].count; j--) {
			__typeof__(s->vias[0]) tmp = s->vias[j];
			s->vias[j] = s->vias[j - 1];
			s->vias[j - 1] = tmp;
		}
}

/* The op whose output a gap holds: the last write at or before `at`.  A
 * plan rebuilds the buffer by replaying it (and what it depends on). */
static int producer(const struct rr_trace *t, int b, int at)
{
	for (int i = at; i >= 0; i--)
		for (uint32_t k = 0; k < t->ops[i].nrefs; k++)
			if (rr_ref_buf(t, &t->ops[i], k) == b && rr_ref_writes(t, &t->ops[i], k))
				return i;
	return -1;
}

/* For every evictable buffer, the longest stretch of ops during which it
 * sits unused between two uses: the window in which a plan could drop it.
 * One pass over the ops, remembering each buffer's last use; elapsed[i] is
 * the known time of ops 0..i-1, so a gap's time is one subtraction. */
static void longest_gaps(const struct rr_trace *t, struct rr_stats *s)
{
	int *last = malloc(((size_t)t->nbufs + 1) * sizeof(*last));
	struct rr_gap *best = calloc((size_t)t->nbufs + 1, sizeof(*best));
	int64_t *elapsed = calloc((size_t)t->nops + 1, sizeof(*elapsed));

	for (int b = 0; b < t->nbufs; b++)
		last[b] = -1;
	for (int i = 0; i < t->nops; i++)
		elapsed[i + 1] = elapsed[i] + (rr_op_ns(&t->ops[i]) > 0 ? rr_op_ns(&t->ops[i]) : 0);
	for (int i = 0; i < t->nops; i++) {
		const struct pl_op *o = &t->ops[i];
		for (uint32_t k = 0; k < o->nrefs; k++) {
			int b = rr_ref_buf(t, o, k), l;
			if (b < 0 || b >= t->nbufs)
				continue;
			l = last[b];
			last[b] = i;
			if (l < 0 || i - l - 1 == 0)
				continue;
			struct rr_gap g = {b, l, i, i - l - 1, elapsed[i] - elapsed[l + 1], -1};
			if (g.ops > best[b].ops || (g.ops == best[b].ops && g.ns > best[b].ns))
				best[b] = g;
		}
	}
	s->gaps = calloc((size_t)t->nbufs + 1, sizeof(*s->gaps));
	for (int b = 0; b < t->nbufs; b++)
		if (activation(&t->bufs[b]) && !t->bufs[b].small && best[b].ops > 0) {
			best[b].producer = producer(t, b, best[b].after_op);
			s->gaps[s->ngaps++] = best[b];
		}
	free(last);
	free(best);
	free(elapsed);
}

static const struct rr_trace *sort_trace;
static int by_size_then_gap(const void *a, const void *b)
{
	const struct rr_gap *x = a, *y = b;
	const struct pl_buffer *bx = &sort_trace->bufs[x->buf], *by = &sort_trace->bufs[y->buf];
	if (bx->rounded != by->rounded)
		return bx->rounded < by->rounded ? 1 : -1;
	if (bx->size != by->size)
		return bx->size < by->size ? 1 : -1;
	if (x->ops != y->ops)
		return x->ops < y->ops ? 1 : -1;
	return x->buf - y->buf;
}

/* How many leading frames all large per-iteration buffers share (at least
 * two buffers, and each keeps one frame of its own). */
static int common_site_frames(const struct rr_trace *t)
{
	const struct pl_buffer *first = NULL;
	int common = 0, n = 0;

	for (int i = 0; i < t->nbufs; i++) {
		const struct pl_buffer *b = &t->bufs[i];
		if (!activation(b) || b->small)
			continue;
		int nb = rr_nframes(b);
		if (!first) {
			first = b;
			common = nb - 1;
		}
		int k = 0;
		for (; k < common && k < nb - 1; k++) {
			size_t la, lb;
			const char *fa = rr_frame(b, k, &la), *fb = rr_frame(first, k, &lb);
			if (la != lb || memcmp(fa, fb, la))
				break;
		}
		common = k;
		n++;
	}
	return n >= 2 && common > 0 ? common : 0;
}

/* Ops by kind, copies by direction, streams, unknown durations. */
static void count_ops(const struct rr_trace *t, struct rr_stats *s)
{
	for (int i = 0; i < t->nops; i++) {
		const struct pl_op *o = &t->ops[i];
		s->kinds[rr_op_kind(o)]++;
		if (o->kind == PL_KIND_MEMCPY && copy_index(o->copy) >= 0) {
			s->copies[copy_index(o->copy)]++;
			s->copy_bytes[copy_index(o->copy)] += o->bytes;
		}
		bool seen = false; /* streams are small ids: a quadratic scan is fine */
		for (int j = 0; j < i && !seen; j++)
			seen = t->ops[j].stream == o->stream;
		if (!seen)
			s->streams++;
		if (rr_op_ns(o) < 0)
			s->unknown_duration_ops++;
	}
}

/* Buffers by kind: regions dead across the boundary, large persistent
 * ones (and those no op touches), small ones, per-iteration ones. */
static void count_buffers(const struct rr_trace *t, struct rr_stats *s)
{
	bool *touched = calloc((size_t)t->nbufs + 1, sizeof(bool));
	for (int i = 0; touched && i < t->nops; i++)
		for (uint32_t k = 0; k < t->ops[i].nrefs; k++) {
			int b = rr_ref_buf(t, &t->ops[i], k);
			if (b >= 0 && b < t->nbufs)
				touched[b] = true;
		}
	for (int i = 0; i < t->nbufs; i++) {
		const struct pl_buffer *b = &t->bufs[i];
		if (b->persistent && b->dead_across && !b->small) {
			s->regions_dead += b->rounded;
			s->nregions_dead++;
		} else if (b->persistent && !b->small) {
			s->persistent_large += b->rounded;
			s->npersistent_large++;
			if (touched && !touched[i]) {
				s->untouched += b->size;
				s->nuntouched++;
			}
		} else if (b->persistent) {
			s->persistent_small_req += b->size;
			s->npersistent_small++;
		} else if (b->small) {
			s->periter_small_req += b->size;
			s->nperiter_small++;
		} else {
			s->nperiter_large++;
		}
	}
	free(touched);
}

/* const_bytes: the small pool, and the chunks of split allocations no
 * region holds whole (at least the small pool); those regions share
 * (not in the graph's const_bytes) are mapped all through the
 * unmodified iteration, and persistent where one of their regions lives
 * across the boundary. */
static void count_shared(const struct rr_trace *t, struct rr_stats *s)
{
	for (int32_t i = 0; i < t->g->nshared; i++) {
		const struct pl_shared *sh = &t->g->shared[i];
		bool dead = true;
		for (uint32_t k = 0; k < sh->n && dead; k++)
			dead = activation(&t->bufs[t->g->shared_bufs[sh->off + k]]);
		if (dead) {
			s->shared_dead += sh->bytes;
			s->nshared_dead++;
		} else {
			s->shared_live += sh->bytes;
			s->nshared_live++;
		}
	}
}

void rr_analyze(const struct rr_trace *t, struct rr_stats *s)
{
	memset(s, 0, sizeof(*s));
	count_ops(t, s);
	count_kernels(t, s);
	count_vias(t, s);
	count_reasons(t, s);
	count_buffers(t, s);
	count_shared(t, s);
	int64_t fixed = t->g->const_bytes + s->shared_live;
	s->persistent_level =
	    s->persistent_large + (fixed > t->g->small_pool_bytes ? fixed : t->g->small_pool_bytes);
	s->peak_op = -1;
	for (int i = 0; i < t->nops; i++)
		if (s->peak_op < 0 || t->mem[i] > s->peak) {
			s->peak = t->mem[i];
			s->peak_op = i;
		}
	longest_gaps(t, s);
	s->site_skip = common_site_frames(t);
	sort_trace = t;
	qsort(s->gaps, (size_t)s->ngaps, sizeof(*s->gaps), by_size_then_gap);
	rr_classify(t, s);
}

void rr_stats_free(struct rr_stats *s)
{
	free(s->kernels);
	free(s->vias);
	free(s->reasons);
	free(s->gaps);
	free(s->buf_class);
	memset(s, 0, sizeof(*s));
}
