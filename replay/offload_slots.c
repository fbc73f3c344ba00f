/*
 * offload_slots.c — where each host copy of a plan lives in the pinned
 * pool.  A copy (one OFFLOAD step) holds its slot from the offload to the
 * await of its buffer, in plan order; a copy whose await has passed leaves
 * its bytes to a later one.  Slots are placed first-fit in plan order, so
 * the pool is the most bytes held at once when copies are of one size (the
 * layers of a model), and at most the sum otherwise.
 *
 * Sharing bytes needs an order on the device too: the copy out into a slot
 * must not start before the copy back of the slot's last user (this
 * iteration's, or, for a user later in the plan, the previous iteration's)
 * has ended.  Each copy keeps the list of copies it follows that way: for
 * each part of its slot, the last copy before it (cyclically, itself last)
 * that used that part.  Those copies followed their own predecessors, so
 * following the last user of every part orders it after all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SLOT_ALIGN 4096

struct held {
	uint64_t lo, hi;
};

/* First fit among the held ranges (sorted by lo): the lowest offset with
 * bytes free. */
static uint64_t first_fit(const struct held *h, int32_t n, uint64_t bytes, int32_t *at)
{
	uint64_t lo = 0;
	int32_t i = 0;
	for (; i < n && h[i].lo < lo + bytes; i++)
		if (h[i].hi > lo)
			lo = h[i].hi;
	*at = i;
	return lo;
}

/* The cyclic predecessors copy j follows (see the top): the part of its
 * slot no later copy covered yet is in one of two scratch arrays (room for
 * ncopies + 2 ranges: each copy looked at splits at most one range). */
static int32_t followed(const struct replay_slots *s, int32_t j, struct held *cur,
                        struct held *next, int32_t *out)
{
	int32_t nu = 1, nout = 0;
	cur[0] = (struct held){s->slot[j], s->slot[j] + s->bytes[j]};
	for (int32_t back = 1; back <= s->ncopies && nu; back++) {
		int32_t o = (j - back + s->ncopies) % s->ncopies; /* j itself last */
		uint64_t lo = s->slot[o], hi = s->slot[o] + s->bytes[o];
		int32_t n = 0;
		int hit = 0;
		for (int32_t u = 0; u < nu; u++) {
			struct held r = cur[u];
			if (r.hi <= lo || r.lo >= hi) {
				next[n++] = r;
				continue;
			}
			hit = 1;
			if (r.lo < lo)
				next[n++] = (struct held){r.lo, lo};
			if (r.hi > hi)
				next[n++] = (struct held){hi, r.hi};
		}
		if (hit)
			out[nout++] = o;
		struct held *t = cur;
		cur = next;
		next = t;
		nu = n;
	}
	return nout;
}

/* Scratch of replay_slots_plan: the ranges held now (sorted by lo), the
 * copy holding each, the open copy of each buffer. */
struct placing {
	struct held *held, *spare;
	int32_t *holder, *open, *tmp;
	int32_t nheld, ncopy;
	uint64_t live;
};

/* Copy number pg->ncopy, of buffer b for plan step i, takes the first
 * slot that fits. */
static void place(struct replay_slots *s, struct placing *pg, uint32_t i, int32_t b, uint64_t bytes)
{
	int32_t at, c = pg->ncopy++;
	uint64_t lo = first_fit(pg->held, pg->nheld, bytes, &at);
	size_t after = (size_t)(pg->nheld - at);
	memmove(pg->held + at + 1, pg->held + at, after * sizeof(*pg->held));
	memmove(pg->holder + at + 1, pg->holder + at, after * sizeof(*pg->holder));
	pg->held[at] = (struct held){lo, lo + bytes};
	pg->holder[at] = c;
	pg->nheld++;
	s->copy_of_step[i] = c;
	s->buf[c] = b;
	s->slot[c] = lo;
	s->bytes[c] = bytes;
	pg->open[b] = c;
	s->sum += bytes;
	pg->live += bytes;
	if (lo + bytes > s->pool_bytes)
		s->pool_bytes = lo + bytes;
	if (pg->live > s->live_peak)
		s->live_peak = pg->live;
}

/* Buffer b's copy is awaited: its slot is free again. */
static void release(const struct replay_slots *s, struct placing *pg, int32_t b)
{
	int32_t done = pg->open[b];
	pg->open[b] = -1;
	for (int32_t k = 0; k < pg->nheld; k++)
		if (pg->holder[k] == done) {
			size_t after = (size_t)(pg->nheld - k - 1);
			memmove(pg->held + k, pg->held + k + 1, after * sizeof(*pg->held));
			memmove(pg->holder + k, pg->holder + k + 1, after * sizeof(*pg->holder));
			pg->nheld--;
			break;
		}
	pg->live -= s->bytes[done];
}

/* The lists of copies each copy follows, in two passes: their total
 * length, then the lists.  0, or -1 out of memory. */
static int followed_lists(struct replay_slots *s, struct placing *pg)
{
	uint32_t total = 0;
	for (int32_t j = 0; j < s->ncopies; j++) {
		s->after_off[j] = total;
		total += (uint32_t)followed(s, j, pg->held, pg->spare, pg->tmp);
	}
	s->after_off[s->ncopies] = total;
	s->after = malloc((total ? total : 1) * sizeof(int32_t));
	if (!s->after)
		return -1;
	for (int32_t j = 0; j < s->ncopies; j++)
		followed(s, j, pg->held, pg->spare, s->after + s->after_off[j]);
	return 0;
}

int replay_slots_plan(const struct remat_profile *prof, const struct pl_plan *pl,
                      struct replay_slots *s)
{
	memset(s, 0, sizeof(*s));
	uint32_t nsteps = pl->step_off[pl->nops];
	for (uint32_t i = 0; i < nsteps; i++)
		s->ncopies += pl->steps[i].kind == PL_STEP_OFFLOAD;
	size_t nc = s->ncopies ? (size_t)s->ncopies : 1;
	size_t nb = prof->nbufs ? prof->nbufs : 1;
	s->copy_of_step = malloc((nsteps ? nsteps : 1) * sizeof(int32_t));
	s->buf = malloc(nc * sizeof(int32_t));
	s->slot = malloc(nc * sizeof(uint64_t));
	s->bytes = malloc(nc * sizeof(uint64_t));
	s->after_off = malloc((nc + 1) * sizeof(uint32_t));
	struct placing pg = {.held = malloc((nc + 2) * sizeof(*pg.held)),
	                     .spare = malloc((nc + 2) * sizeof(*pg.spare)),
	                     .holder = malloc((nc + 1) * sizeof(int32_t)),
	                     .open = malloc(nb * sizeof(int32_t)),
	                     .tmp = malloc(nc * sizeof(int32_t))};
	int rc = -1;
	if (!s->copy_of_step || !s->buf || !s->slot || !s->bytes || !s->after_off || !pg.held ||
	    !pg.spare || !pg.holder || !pg.open || !pg.tmp)
		goto out;
	memset(pg.open, 0xff, nb * sizeof(int32_t));
	for (uint32_t i = 0; i < nsteps; i++) {
		const struct pl_step *st = &pl->steps[i];
		s->copy_of_step[i] = -1;
		if (st->kind == PL_STEP_OFFLOAD)
			place(s, &pg, i, st->arg,
			      (prof->bufs[st->arg].size + SLOT_ALIGN - 1) / SLOT_ALIGN *
			          SLOT_ALIGN);
		else if (st->kind == PL_STEP_AWAIT && pg.open[st->arg] >= 0)
			release(s, &pg, st->arg);
	}
	rc = followed_lists(s, &pg);
out:
	free(pg.held);
	free(pg.spare);
	free(pg.holder);
	free(pg.open);
	free(pg.tmp);
	if (rc)
		replay_slots_free(s);
	return rc;
}

void replay_slots_free(struct replay_slots *s)
{
	free(s->copy_of_step);
	free(s->buf);
	free(s->slot);
	free(s->bytes);
	free(s->after_off);
	free(s->after);
	memset(s, 0, sizeof(*s));
}
