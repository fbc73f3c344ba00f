/*
 * boundary.c — where the iteration should begin, from the profile's data
 * flow: the cut with the least data live across it, a value written in one
 * iteration and read in the next (issue 31).  The detector guesses the
 * boundary from the memory level or, where it is flat, from the copies to
 * and from the host; a program that reads its loss back after the forward
 * pass (llm.c, mnist-cuda) then has every activation live across it.  A
 * cut that halves what lives across it, not counting what lives across
 * every cut (weights, a dataset on the device), moves the boundary there,
 * once, and the iteration is profiled again (detect.c).
 */
#include <stdlib.h>

#include "internal.h"

struct access {
	uint32_t op;
	int need; /* it needs the content before it: a read, a write in part */
};

/* What the counting sort of accesses by buffer needs. */
struct sort {
	size_t *start; /* per buffer: its first access (+1 while counting) */
	struct access *acc;
	uint32_t op;
	int fill;
};

static void count_or_fill(struct sort *s, int32_t b, int need)
{
	if (s->fill)
		s->acc[s->start[b]++] = (struct access){s->op, need};
	else
		s->start[b + 1]++;
}

/* Op o's accesses, each buffer once: a read (or a write in part) needs
 * the content before it, a whole write does not. */
static void each_access(const struct prof_op *o, struct sort *s)
{
	for (size_t i = 0; i < o->nreads; i++)
		count_or_fill(s, o->reads[i], 1);
	for (size_t i = 0; i < o->nwrites; i++) {
		int32_t b = o->writes[i];
		int read = 0, part = 0;
		for (size_t j = 0; j < o->nreads && !read; j++)
			read = o->reads[j] == b;
		for (size_t j = 0; j < o->npartial && !part; j++)
			part = o->partial[j] == b;
		if (!read)
			count_or_fill(s, b, part);
	}
}

/* Adds bytes to cuts (x, y] of n, going round (y <= x wraps). */
static void add_span(int64_t *diff, size_t n, size_t x, size_t y, int64_t bytes)
{
	size_t s = (x + 1) % n;
	diff[s] += bytes;
	diff[y + 1] -= bytes;
	if (s > y) { /* wraps: [s, n) and [0, y] */
		diff[n] -= bytes;
		diff[0] += bytes;
	}
}

size_t prof_better_boundary(const struct remat_profile *p, int64_t *now, int64_t *best)
{
	size_t n = p->nops, nb = p->nbufs, cut = 0;
	int64_t always = 0;
	*now = *best = 0;
	struct sort s = {.start = calloc(nb + 2, sizeof(size_t))};
	int64_t *diff = calloc(n + 1, sizeof(*diff));
	if (!n || !s.start || !diff)
		goto out;
	for (size_t k = 0; k < n; k++)
		each_access(&p->ops[k], &s);
	for (size_t b = 0; b < nb; b++)
		s.start[b + 1] += s.start[b];
	if (!(s.acc = malloc((s.start[nb] ? s.start[nb] : 1) * sizeof(*s.acc))))
		goto out;
	s.fill = 1; /* in op order: start[b] ends where b + 1 starts */
	for (s.op = 0; s.op < n; s.op++)
		each_access(&p->ops[s.op], &s);
	for (size_t b = nb; b > 0; b--)
		s.start[b] = s.start[b - 1];
	s.start[0] = 0;
	/* A buffer is live across every cut whose next access to it needs its
	 * content: between consecutive accesses x < y (the last wrapping to
	 * the first a period later), the cuts in (x, y] when y needs it. */
	/* always: bytes live across every cut (weights, a dataset). */
	for (size_t b = 0; b < nb; b++) {
		size_t spans = 0;
		for (size_t i = s.start[b]; i < s.start[b + 1]; i++) {
			if (!s.acc[i].need)
				continue;
			size_t x = s.acc[i > s.start[b] ? i - 1 : s.start[b + 1] - 1].op,
			       y = s.acc[i].op;
			add_span(diff, n, x, y, (int64_t)p->bufs[b].size);
			spans += x == y ? n : (y + n - x) % n;
		}
		always += spans == n ? (int64_t)p->bufs[b].size : 0;
	}
	int64_t live = 0, least = INT64_MAX;
	for (size_t c = 0; c < n; c++) {
		live += diff[c];
		if (!c)
			*now = live;
		if (live < least) {
			least = live;
			cut = c;
		}
	}
	*best = least;
out:
	free(s.start);
	free(s.acc);
	free(diff);
	/* Worth a second profile only when it halves what lives across and
	 * not across every cut (the values a cut can leave out). */
	return *now > always && 2 * (*best - always) <= *now - always ? cut : 0;
}
