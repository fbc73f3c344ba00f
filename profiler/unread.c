/*
 * unread.c — where the proof of unread bytes (delta.c) looks: for each
 * pointer of a kernel into an allocation made before the iteration, from
 * the first place a region can end above it (an offset some op so far
 * pointed to, copied or set, or where a proven blind write ended, past
 * what the kernel changed there; none known, the byte after the pointer)
 * up to the kernel's next pointer into the allocation or its end: a read's
 * reach (regions.c), which only this proof narrows.  A guess too short
 * fails, and delta.c bisects for the tail that passes; what passes is exact.
 * The offsets where the iteration's pointers, copies and sets begin are
 * known before it from the one before (detect.c; each op repeats it), so
 * a guess starts at the next tensor even when only a later op points there.
 */
#include <stdlib.h>

#include "internal.h"

struct seen_cuts {
	uint64_t *at; /* ascending, each once */
	uint32_t n;
	size_t cap;
};

static uint64_t cut_at(const void *at, size_t i)
{
	return ((const uint64_t *)at)[i];
}

/* The offsets seen, by trace buffer id. */
static struct prof_unread {
	struct seen_cuts *seen;
	size_t nseen, cap;
} ur;

void prof_unread_reset(void)
{
	for (size_t i = 0; i < ur.nseen; i++)
		free(ur.seen[i].at);
	free(ur.seen);
	ur.seen = NULL;
	ur.nseen = ur.cap = 0;
}

void prof_unread_cut(int32_t buf, uint64_t off)
{
	if (buf < 0)
		return;
	if ((size_t)buf >= ur.nseen) {
		if (REMAT_RESERVE(ur.seen, (size_t)buf + 1, ur.cap))
			return; /* a cut not seen: guesses go further, nothing worse */
		for (size_t i = ur.nseen; i <= (size_t)buf; i++)
			ur.seen[i] = (struct seen_cuts){0};
		ur.nseen = (size_t)buf + 1;
	}
	struct seen_cuts *s = &ur.seen[buf];
	uint32_t lo = (uint32_t)remat_search_from(s->at, s->n, cut_at, off);
	if (lo < s->n && s->at[lo] == off)
		return;
	if (REMAT_GROW(s->at, s->n, s->cap))
		return;
	for (uint32_t i = s->n; i > lo; i--)
		s->at[i] = s->at[i - 1];
	s->at[lo] = off;
	s->n++;
}

void prof_unread_expect(const uint64_t (*at)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct prof_live *b = prof_live_find(at[i][0]);
		if (!b || b->trace_id < 0)
			continue;
		prof_unread_cut(b->trace_id, at[i][0] - b->addr);
		if (at[i][1])
			prof_unread_cut(b->trace_id, at[i][0] - b->addr + at[i][1]);
	}
}

uint32_t prof_unread_cuts_in(int32_t buf, uint64_t lo, uint64_t hi, const uint64_t **at)
{
	*at = NULL;
	if (buf < 0 || (size_t)buf >= ur.nseen)
		return 0;
	const struct seen_cuts *s = &ur.seen[buf];
	size_t a = remat_search_after(s->at, s->n, cut_at, lo);
	size_t e = remat_search_from(s->at, s->n, cut_at, hi);
	*at = s->at + a;
	return e > a ? (uint32_t)(e - a) : 0;
}

/* The first cut seen in buf above off, or UINT64_MAX. */
static uint64_t cut_above(int32_t buf, uint64_t off)
{
	if (buf < 0 || (size_t)buf >= ur.nseen)
		return UINT64_MAX;
	const struct seen_cuts *s = &ur.seen[buf];
	size_t i = remat_search_after(s->at, s->n, cut_at, off);
	return i < s->n ? s->at[i] : UINT64_MAX;
}

uint32_t prof_unread_ranges(const struct prof_op *o, struct prof_live *const *pb,
                            const struct prof_change *chg, uint32_t nchg, struct prof_change **out)
{
	*out = NULL;
	uint32_t n = 0;
	size_t cap = 0;
	for (size_t r = 0; r < o->nrefs; r++) {
		int32_t buf = o->refs[r].buf;
		const struct prof_live *b = pb[buf];
		uint64_t off = o->refs[r].off;
		/* Only where regions are cut: allocations live since before
		 * the iteration that can be evicted. */
		if (b->alloc_at >= 0 || b->small || !b->size || off >= b->size)
			continue;
		int dup = 0;
		uint64_t stop = b->size;
		for (size_t q = 0; q < o->nrefs; q++) {
			if (o->refs[q].buf != buf)
				continue;
			dup |= q < r && o->refs[q].off == off;
			if (o->refs[q].off > off && o->refs[q].off < stop)
				stop = o->refs[q].off;
		}
		if (dup)
			continue;
		/* What it changed through this pointer is no part of the test. */
		uint64_t from = off;
		for (uint32_t c = 0; c < nchg; c++)
			if (chg[c].buf == buf && chg[c].lo >= off && chg[c].lo < stop &&
			    chg[c].hi - 1 > from)
				from = chg[c].hi - 1;
		/* No end seen yet: from just past the pointer (what it reads of
		 * that is found by delta.c's search). */
		uint64_t lo = cut_above(buf, from);
		if (lo >= stop)
			lo = from + 1;
		if (lo >= stop)
			continue;
		if (REMAT_GROW(*out, n, cap)) {
			free(*out);
			*out = NULL;
			return 0;
		}
		(*out)[n++] = (struct prof_change){buf, lo, stop, 0};
	}
	return n;
}
