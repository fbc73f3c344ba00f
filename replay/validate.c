/*
 * validate.c — a plan is a program libremat is about to run against the
 * user's memory, read from a file any process of the user can write: before
 * it applies, it is run here against the profile, step by step, the way the
 * engine will run it.  Every step must be legal in the state it meets
 * (evict only what is mapped, live and evictable; map only what is
 * unmapped; save/restore and stash/unstash paired; nothing released that is
 * saved), every op and every replay must find each buffer it references
 * mapped and each buffer it reads holding the version it read in the
 * profiled iteration, what outlives the iteration must end it mapped with
 * its final version, and the memory curve must stay within the budget
 * (a chunk regions share counts while one of them is mapped, found by
 * looking at all of them each time, where the evaluator keeps counts).
 * Offload (version 3): the copied-out buffer is not written until its
 * eviction, a prefetch's destination counts from the prefetch and nothing
 * touches it before its await, nothing is left on the host at the end.
 *
 * The planner's evaluator (planner/model/evaluate.c) checks the same things on
 * its own graph model; this is a second implementation on purpose, and a
 * test feeds both the same damaged plans.  One pass, linear in the ops,
 * their references and the plan's steps.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* What a buffer holds, by the op position that wrote it; or: */
#define HOLDS_PRE   (-1) /* its content from before the iteration */
#define HOLDS_FRESH (-2) /* nothing anyone reads (allocated inside, or dead across) */
#define HOLDS_LOST  (-3) /* mapped again, not rebuilt yet */

/* boundary[b]: 1 unmapped at the boundary (dead across it), PARKED on
 * the host while the plan applies (parked_on_host) */
#define PARKED 2

struct check {
	const struct remat_profile *prof;
	const struct pl_plan *plan;
	uint8_t *mapped, *saved, *stashed, *transient, *boundary;
	int32_t *holds, *saved_holds, *stash_holds, *expect;
	int64_t mem, peak;
	int32_t ntransient, nsaved;
	/* offload (plan version 3): where each buffer's content is, and what
	 * its host copy holds */
	uint8_t *off;
	int32_t *host_holds;
	char *why;
	size_t n;
};

static int wrong(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int wrong(struct check *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->n, fmt, ap);
	va_end(ap);
	return -1;
}

int replay_op_replayable(const struct remat_profile *p, int32_t k)
{
	const struct prof_op *q = &p->ops[k];
	return q->replayable && (q->kind != REMAT_OP_KERNEL || q->via_extra ||
	                         (q->kernel >= 0 && p->kernels[q->kernel].layout_known));
}

static int64_t chunk_bytes(const struct check *c, int32_t b)
{
	const struct prof_buf *u = &c->prof->bufs[b];
	return u->small ? 0 : (int64_t)u->rounded;
}

/* Whether a buffer of shared chunk run r other than b is mapped: the run
 * stays while one is (docs/trace-format.md, "Shared chunks"). */
static int run_held(const struct check *c, uint32_t r, int32_t b)
{
	const struct prof_shared *sh = &c->prof->shared[r];
	for (uint32_t k = 0; k < sh->n; k++)
		if (sh->first + (int32_t)k != b && c->mapped[sh->first + (int32_t)k])
			return 1;
	return 0;
}

/* Mapping b adds its whole chunks and the shared runs no other buffer of
 * theirs holds; unmapping it takes away the same. */
static int64_t with_runs(const struct check *c, int32_t b)
{
	const struct prof_buf *u = &c->prof->bufs[b];
	int64_t m = chunk_bytes(c, b);
	for (int k = 0; k < 2; k++)
		if (u->shared[k] && u->shared[k] <= c->prof->nshared &&
		    !run_held(c, u->shared[k] - 1, b))
			m += (int64_t)c->prof->shared[u->shared[k] - 1].bytes;
	return m;
}

static void map_buf(struct check *c, int32_t b)
{
	c->mem += with_runs(c, b);
	c->mapped[b] = 1;
}

static void unmap_buf(struct check *c, int32_t b)
{
	c->mapped[b] = 0;
	c->mem -= with_runs(c, b);
}

/* A copy (saved or stashed) takes whole chunks, a small buffer's too: the
 * buffer's size rounded up (remat_alloc_scratch), more than the chunks a
 * region holds whole when it starts or ends inside one (as the planner's
 * pl_save_bytes counts it). */
static int64_t copy_bytes(const struct check *c, int32_t b)
{
	const struct prof_buf *u = &c->prof->bufs[b];
	uint64_t g = c->prof->granularity ? c->prof->granularity : 1;
	uint64_t whole = (u->size + g - 1) / g * g;
	return (int64_t)(u->rounded > whole ? u->rounded : whole);
}

static int alive(const struct prof_buf *u, int32_t pos, int32_t nops)
{
	int64_t lo = u->alloc_at < 0 ? 0 : u->alloc_at, hi = u->free_at < 0 ? nops : u->free_at;
	return pos >= lo && pos < hi;
}

/* Op k, original (at == k) or replayed before op at: each reference
 * mapped, each real read holding the version the profile saw. */
enum { OFF_NONE, OFF_LEAVING, OFF_HOST, OFF_COMING };

static int run_op(struct check *c, int32_t k, int32_t at)
{
	const struct prof_op *o = &c->prof->ops[k];
	const char *what = at == k ? "op" : "replay of op";
	for (size_t i = 0; i < o->nreads + o->nwrites; i++) {
		int32_t b = i < o->nreads ? o->reads[i] : o->writes[i - o->nreads];
		if (c->off[b] == OFF_COMING)
			return wrong(c,
			             "%s %d (before op %d) uses buffer %d before its prefetch is "
			             "awaited",
			             what, k, at, b);
		if (c->off[b] == OFF_LEAVING && i >= o->nreads)
			return wrong(c,
			             "%s %d (before op %d) writes buffer %d while it is copied to "
			             "the host",
			             what, k, at, b);
	}
	for (size_t i = 0; i < o->nreads; i++) {
		int32_t b = o->reads[i];
		if (!c->mapped[b])
			return wrong(c, "%s %d (before op %d) finds buffer %d unmapped", what, k,
			             at, b);
	}
	for (size_t i = 0; i < o->nwrites; i++)
		if (!c->mapped[o->writes[i]])
			return wrong(c, "%s %d (before op %d) finds buffer %d unmapped", what, k,
			             at, o->writes[i]);
	/* expect[] holds, for this op, the version each read needs (a
	 * partial write reads what it leaves in place). */
	for (size_t i = 0; i < o->nreads + o->npartial; i++) {
		int32_t b = i < o->nreads ? o->reads[i] : o->partial[i - o->nreads];
		int32_t want = c->expect[b];
		if (want != HOLDS_FRESH && c->holds[b] != want)
			return wrong(
			    c,
			    "%s %d (before op %d) reads buffer %d as op %d left it, but it "
			    "holds %s (%d)",
			    what, k, at, b, want,
			    c->holds[b] == HOLDS_LOST  ? "nothing: it was mapped again"
			    : c->holds[b] == HOLDS_PRE ? "its content from before the iteration"
			                               : "what another op wrote",
			    c->holds[b]);
	}
	for (size_t i = 0; i < o->nwrites; i++)
		c->holds[o->writes[i]] = k;
	return 0;
}

/* The version each buffer holds just before op k in the profiled
 * iteration, for every op: computed once, kept per reference. */
struct versions {
	uint32_t *off; /* per op, into ver */
	int32_t *ver;  /* per (op, read) */
};

static int versions_of(const struct remat_profile *p, struct versions *v)
{
	size_t total = 0;
	for (size_t k = 0; k < p->nops; k++)
		total += p->ops[k].nreads + p->ops[k].npartial;
	v->off = malloc((p->nops + 1) * sizeof(*v->off));
	v->ver = malloc((total ? total : 1) * sizeof(*v->ver));
	int32_t *cur = malloc((p->nbufs ? p->nbufs : 1) * sizeof(*cur));
	if (!v->off || !v->ver || !cur) {
		free(cur);
		return -1;
	}
	for (size_t b = 0; b < p->nbufs; b++)
		cur[b] =
		    p->bufs[b].alloc_at < 0 && !p->bufs[b].dead_across ? HOLDS_PRE : HOLDS_FRESH;
	uint32_t at = 0;
	for (size_t k = 0; k < p->nops; k++) {
		v->off[k] = at;
		const struct prof_op *o = &p->ops[k];
		for (size_t i = 0; i < o->nreads + o->npartial; i++)
			v->ver[at++] = cur[i < o->nreads ? o->reads[i] : o->partial[i - o->nreads]];
		for (size_t i = 0; i < p->ops[k].nwrites; i++)
			cur[p->ops[k].writes[i]] = (int32_t)k;
	}
	v->off[p->nops] = at;
	free(cur);
	return 0;
}

static void expect_for(struct check *c, const struct versions *v, int32_t k)
{
	const struct prof_op *o = &c->prof->ops[k];
	for (size_t i = 0; i < o->nreads + o->npartial; i++)
		c->expect[i < o->nreads ? o->reads[i] : o->partial[i - o->nreads]] =
		    v->ver[v->off[k] + i];
}

/* OFFLOAD, PREFETCH and AWAIT (docs/plan-format.md): the copy out leaves
 * the buffer mapped until its eviction; the prefetch's destination counts
 * from the prefetch; nothing touches it before the await. */
static int offload_step(struct check *c, int kind, int32_t b, int32_t pos, uint32_t idx, int live)
{
	const struct prof_buf *u = &c->prof->bufs[b];
	const char *name = pl_step_names[kind];
	if (!(c->plan->offload_gbps > 0))
		return wrong(c, "step %u before op %d is \"%s\" in a plan without offload_gbps",
		             idx, pos, name);
	if (u->small || !live)
		return wrong(c, "step %u before op %d: %s of buffer %d, which is %s", idx, pos,
		             name, b, u->small ? "small (shares its chunk)" : "not allocated");
	switch (kind) {
	case PL_STEP_OFFLOAD:
		if (!c->mapped[b] || c->off[b] != OFF_NONE || c->holds[b] == HOLDS_LOST ||
		    c->holds[b] == HOLDS_FRESH || c->saved[b] || c->stashed[b])
			return wrong(c, "step %u before op %d: offload of buffer %d, which %s", idx,
			             pos, b,
			             !c->mapped[b]                  ? "is not mapped"
			             : c->off[b] != OFF_NONE        ? "is offloaded already"
			             : c->saved[b] || c->stashed[b] ? "has a copy aside"
			                                            : "holds nothing to keep");
		c->off[b] = OFF_LEAVING;
		c->host_holds[b] = c->holds[b];
		return 0;
	case PL_STEP_PREFETCH:
		if (c->mapped[b] || c->off[b] != OFF_HOST)
			return wrong(c, "step %u before op %d: prefetch of buffer %d, which %s",
			             idx, pos, b,
			             c->mapped[b] ? "is mapped" : "is not on the host");
		map_buf(c, b);
		c->holds[b] = HOLDS_LOST;
		c->off[b] = OFF_COMING;
		return 0;
	default: /* PL_STEP_AWAIT */
		if (c->off[b] != OFF_COMING)
			return wrong(c,
			             "step %u before op %d: await of buffer %d, which is not being "
			             "prefetched",
			             idx, pos, b);
		c->holds[b] = c->host_holds[b];
		c->off[b] = OFF_NONE;
		return 0;
	}
}

static const char *step_name(int kind)
{
	return kind >= 0 && kind < PL_STEP_KINDS ? pl_step_names[kind] : "?";
}

/* MAP, SAVE, STASH, RESTORE, UNSTASH, RELEASE of an existing, resident
 * buffer (live: allocated at pos). */
static int memory_step(struct check *c, const struct pl_step *st, int32_t pos, uint32_t idx,
                       int live)
{
	int32_t b = st->arg;
	const struct prof_buf *u = &c->prof->bufs[b];
	const char *name = step_name(st->kind);
	switch (st->kind) {
	case PL_STEP_MAP:
		if (u->small || c->mapped[b])
			return wrong(c, "step %u before op %d maps buffer %d, which is %s", idx,
			             pos, b, u->small ? "small (shares its chunk)" : "mapped");
		map_buf(c, b);
		c->holds[b] = HOLDS_LOST;
		if (!live) {
			c->transient[b] = 1;
			c->ntransient++;
		}
		return 0;
	case PL_STEP_SAVE:
	case PL_STEP_STASH: {
		uint8_t *flag = st->kind == PL_STEP_SAVE ? c->saved : c->stashed;
		if (!c->mapped[b] || flag[b])
			return wrong(c, "step %u before op %d: %s of buffer %d, which is %s", idx,
			             pos, name, b, flag[b] ? "done already" : "not mapped");
		flag[b] = 1;
		(st->kind == PL_STEP_SAVE ? c->saved_holds : c->stash_holds)[b] = c->holds[b];
		c->nsaved += st->kind == PL_STEP_SAVE;
		c->mem += copy_bytes(c, b);
		return 0;
	}
	case PL_STEP_RESTORE:
	case PL_STEP_UNSTASH: {
		uint8_t *flag = st->kind == PL_STEP_RESTORE ? c->saved : c->stashed;
		if (!c->mapped[b] || !flag[b])
			return wrong(c, "step %u before op %d: %s of buffer %d, which is %s", idx,
			             pos, name, b, flag[b] ? "not mapped" : "not saved or stashed");
		flag[b] = 0;
		c->holds[b] = (st->kind == PL_STEP_RESTORE ? c->saved_holds : c->stash_holds)[b];
		c->nsaved -= st->kind == PL_STEP_RESTORE;
		c->mem -= copy_bytes(c, b);
		return 0;
	}
	case PL_STEP_RELEASE:
		/* Stashed is no reason to keep it mapped (as for an eviction). */
		if (u->small || !c->mapped[b] || c->saved[b])
			return wrong(c, "step %u before op %d releases buffer %d, which is %s", idx,
			             pos, b,
			             u->small      ? "small (shares its chunk)"
			             : c->saved[b] ? "saved"
			                           : "not mapped");
		unmap_buf(c, b);
		c->holds[b] = HOLDS_LOST;
		if (c->transient[b]) {
			c->transient[b] = 0;
			c->ntransient--;
		}
		return 0;
	}
	return wrong(c, "step %u before op %d has unknown kind %d", idx, pos, st->kind);
}

static int step(struct check *c, const struct versions *v, const struct pl_step *st, int32_t pos,
                uint32_t idx)
{
	const struct remat_profile *p = c->prof;
	int32_t b = st->arg;
	if (st->kind == PL_STEP_REPLAY) {
		if (b < 0 || b >= pos)
			return wrong(c, "step %u before op %d replays op %d, not an earlier op",
			             idx, pos, b);
		if (!replay_op_replayable(p, b))
			return wrong(c,
			             "step %u before op %d replays op %d, which cannot be replayed",
			             idx, pos, b);
		expect_for(c, v, b);
		return run_op(c, b, pos);
	}
	if (b < 0 || b >= (int32_t)p->nbufs)
		return wrong(c, "step %u before op %d names buffer %d, which does not exist", idx,
		             pos, b);
	const struct prof_buf *u = &p->bufs[b];
	int live = alive(u, pos, (int32_t)p->nops);
	const char *name = step_name(st->kind);
	if (c->boundary[b] == PARKED)
		return wrong(c,
		             "step %u before op %d: %s of buffer %d, which is parked on the host",
		             idx, pos, name, b);
	if (PL_STEP_IS_OFFLOAD(st->kind))
		return offload_step(c, st->kind, b, pos, idx, live);
	if (c->off[b] != OFF_NONE)
		return wrong(c, "step %u before op %d: %s of buffer %d, which is offloaded", idx,
		             pos, name, b);
	return memory_step(c, st, pos, idx, live);
}

/* Frees before op pos, then allocations, as the program makes them. */
static int lifetimes(struct check *c, int32_t pos)
{
	const struct remat_profile *p = c->prof;
	for (size_t b = 0; b < p->nbufs; b++) {
		const struct prof_buf *u = &p->bufs[b];
		if (u->free_at == pos) {
			if (c->saved[b] || c->transient[b] || c->stashed[b] || c->off[b])
				return wrong(c,
				             "buffer %zu is freed before op %d while a copy, a "
				             "transient mapping or an offload of it is left",
				             b, pos);
			if (c->mapped[b])
				unmap_buf(c, (int32_t)b);
		}
		if (u->alloc_at == pos) {
			if (c->mapped[b])
				return wrong(c,
				             "buffer %zu is mapped by the plan when the program "
				             "allocates it before op %d",
				             b, pos);
			map_buf(c, (int32_t)b);
			c->holds[b] = HOLDS_FRESH;
		}
	}
	return 0;
}

/* Parked buffers: each once, live across the boundary, referenced by no
 * op of the profile, in a plan that offloads (the pinned pool holds
 * them).  Unmapped from start to end, like those kept unmapped at the
 * boundary; no step may name them. */
static int check_parked(struct check *c)
{
	const struct remat_profile *p = c->prof;
	const struct pl_plan *pl = c->plan;
	if (pl->nparked && !(pl->offload_gbps > 0))
		return wrong(c, "it parks buffers on the host but has no offload_gbps");
	for (int32_t i = 0; i < pl->nparked; i++) {
		int32_t b = pl->parked[i];
		const struct prof_buf *u = b >= 0 && b < (int32_t)p->nbufs ? &p->bufs[b] : NULL;
		const char *why = !u               ? "it does not exist"
		                  : c->boundary[b] ? "it is listed twice"
		                  : u->alloc_at >= 0 || u->free_at >= 0
		                      ? "it is not live across the "
		                        "boundary"
		                      : NULL;
		if (why)
			return wrong(c, "buffer %d cannot be parked on the host: %s", b, why);
		c->boundary[b] = PARKED;
	}
	for (size_t k = 0; pl->nparked && k < p->nops; k++) {
		const struct prof_op *o = &p->ops[k];
		for (size_t i = 0; i < o->nreads + o->nwrites; i++) {
			int32_t b = i < o->nreads ? o->reads[i] : o->writes[i - o->nreads];
			if (c->boundary[b] == PARKED)
				return wrong(
				    c, "buffer %d cannot be parked on the host: op %zu uses it", b,
				    k);
		}
	}
	return 0;
}

/* The buffers the plan keeps unmapped at the boundary: each once, dead
 * across it. */
static int check_boundary(struct check *c)
{
	const struct remat_profile *p = c->prof;
	const struct pl_plan *pl = c->plan;
	for (int32_t i = 0; i < pl->nboundary; i++) {
		int32_t b = pl->boundary[i];
		if (b < 0 || b >= (int32_t)p->nbufs || c->boundary[b] || !p->bufs[b].dead_across)
			return wrong(
			    c, "buffer %d cannot be unmapped at the iteration boundary: %s", b,
			    b < 0 || b >= (int32_t)p->nbufs ? "it does not exist"
			    : c->boundary[b]                ? "it is listed twice"
			                                    : "its content there is live");
		c->boundary[b] = 1;
	}
	return 0;
}

/* Memory and buffers as the iteration starts. */
static void start_iteration(struct check *c)
{
	const struct remat_profile *p = c->prof;
	/* edge_bytes holds the shared runs: they count from their first
	 * buffer mapped on */
	c->mem = (int64_t)(p->small_pool_bytes + p->edge_bytes);
	for (size_t r = 0; r < p->nshared; r++)
		c->mem -= (int64_t)p->shared[r].bytes;
	for (size_t b = 0; b < p->nbufs; b++) {
		const struct prof_buf *u = &p->bufs[b];
		c->holds[b] = u->alloc_at < 0 && !u->dead_across ? HOLDS_PRE : HOLDS_FRESH;
		if (u->alloc_at < 0 && !c->boundary[b])
			map_buf(c, (int32_t)b);
	}
}

/* The evictions after op pos. */
static int evictions(struct check *c, int32_t pos)
{
	const struct remat_profile *p = c->prof;
	const struct pl_plan *pl = c->plan;
	int32_t nops = (int32_t)p->nops;
	for (uint32_t i = pl->evict_off[pos]; i < pl->evict_off[pos + 1]; i++) {
		int32_t b = pl->evict[i];
		const struct prof_buf *u = b >= 0 && b < (int32_t)p->nbufs ? &p->bufs[b] : NULL;
		/* A stashed buffer may go: its copy stays aside until the
		 * UNSTASH that puts it back once it is mapped again (the
		 * planner's evaluator allows it too). */
		if (!u || u->small || !c->mapped[b] || !alive(u, pos, nops) || c->saved[b] ||
		    c->off[b] == OFF_COMING)
			return wrong(c, "eviction after op %d of buffer %d, which is %s", pos, b,
			             !u                     ? "not a buffer"
			             : u->small             ? "small (shares its chunk)"
			             : !alive(u, pos, nops) ? "not allocated"
			             : !c->mapped[b]        ? "not mapped"
			             : c->off[b]            ? "being prefetched"
			                                    : "saved");
		/* its content stays on the host when it was copied out */
		if (c->off[b] == OFF_LEAVING)
			c->off[b] = OFF_HOST;
		unmap_buf(c, b);
		c->holds[b] = HOLDS_LOST;
	}
	return 0;
}

/* Position pos: frees and allocations, the steps before the op, the op,
 * the evictions after it, within the budget. */
static int run_position(struct check *c, const struct versions *v, int32_t pos, int64_t budget)
{
	const struct pl_plan *pl = c->plan;
	if (lifetimes(c, pos))
		return -1;
	for (uint32_t i = pl->step_off[pos]; i < pl->step_off[pos + 1]; i++) {
		if (step(c, v, &pl->steps[i], pos, i - pl->step_off[pos]))
			return -1;
		if (c->mem > c->peak)
			c->peak = c->mem;
	}
	if (c->ntransient || c->nsaved)
		return wrong(c,
		             "op %d runs with %d transient mapping(s) and %d saved copies "
		             "left by the steps before it",
		             pos, c->ntransient, c->nsaved);
	expect_for(c, v, pos);
	if (run_op(c, pos, pos))
		return -1;
	if (c->mem > c->peak)
		c->peak = c->mem;
	if (evictions(c, pos))
		return -1;
	if (c->peak > budget)
		return wrong(c, "at op %d the plan needs %lld bytes, over the budget of %lld", pos,
		             (long long)c->peak, (long long)budget);
	return 0;
}

/* What outlives the iteration: there, with the content the next one
 * reads; no copy left. */
static int check_end(struct check *c)
{
	const struct remat_profile *p = c->prof;
	int32_t *final = c->saved_holds;
	for (size_t b = 0; b < p->nbufs; b++)
		final[b] =
		    p->bufs[b].alloc_at < 0 && !p->bufs[b].dead_across ? HOLDS_PRE : HOLDS_FRESH;
	for (int32_t k = 0; k < (int32_t)p->nops; k++)
		for (size_t i = 0; i < p->ops[k].nwrites; i++)
			final[p->ops[k].writes[i]] = k;
	for (size_t b = 0; b < p->nbufs; b++) {
		const struct prof_buf *u = &p->bufs[b];
		if (c->stashed[b])
			return wrong(c, "buffer %zu is still stashed at the end of the iteration",
			             b);
		if (c->off[b])
			return wrong(c, "buffer %zu is still offloaded at the end of the iteration",
			             b);
		if (u->free_at >= 0)
			continue;
		if (c->boundary[b] ? c->mapped[b] : !c->mapped[b])
			return wrong(c, "buffer %zu ends the iteration %s", b,
			             c->boundary[b]
			                 ? "mapped, though the plan keeps it unmapped there"
			                 : "evicted");
		if (!c->boundary[b] && !u->dead_across && c->holds[b] != final[b])
			return wrong(
			    c,
			    "buffer %zu ends the iteration holding what op %d wrote instead "
			    "of what op %d wrote",
			    b, c->holds[b], final[b]);
	}
	return 0;
}

static int run_plan(struct check *c, const struct versions *v, int64_t budget)
{
	if (check_boundary(c) || check_parked(c))
		return -1;
	start_iteration(c);
	for (int32_t pos = 0; pos < (int32_t)c->prof->nops; pos++)
		if (run_position(c, v, pos, budget))
			return -1;
	return check_end(c);
}

int replay_plan_validate(const struct remat_profile *prof, const struct pl_plan *pl, int64_t budget,
                         int64_t *peak, char *why, size_t n)
{
	if (pl->nops != (int32_t)prof->nops || pl->graph_hash != prof->graph_hash) {
		snprintf(why, n,
		         "made for graph 0x%016llx with %d ops, this one is 0x%016llx with %zu",
		         (unsigned long long)pl->graph_hash, pl->nops,
		         (unsigned long long)prof->graph_hash, prof->nops);
		return -1;
	}
	size_t nb = prof->nbufs ? prof->nbufs : 1;
	struct check c = {.prof = prof, .plan = pl, .why = why, .n = n};
	struct versions v = {0};
	c.mapped = calloc(nb, 1);
	c.saved = calloc(nb, 1);
	c.stashed = calloc(nb, 1);
	c.transient = calloc(nb, 1);
	c.boundary = calloc(nb, 1);
	c.holds = malloc(nb * sizeof(int32_t));
	c.saved_holds = malloc(nb * sizeof(int32_t));
	c.stash_holds = malloc(nb * sizeof(int32_t));
	c.expect = malloc(nb * sizeof(int32_t));
	c.off = calloc(nb, 1);
	c.host_holds = malloc(nb * sizeof(int32_t));
	int rc = -1;
	if (!c.mapped || !c.saved || !c.stashed || !c.transient || !c.boundary || !c.holds ||
	    !c.saved_holds || !c.stash_holds || !c.expect || !c.off || !c.host_holds ||
	    versions_of(prof, &v))
		snprintf(why, n, "out of host memory to check it");
	else
		rc = run_plan(&c, &v, budget);
	if (peak)
		*peak = c.peak;
	free(v.off);
	free(v.ver);
	free(c.mapped);
	free(c.saved);
	free(c.stashed);
	free(c.transient);
	free(c.boundary);
	free(c.holds);
	free(c.saved_holds);
	free(c.stash_holds);
	free(c.expect);
	free(c.off);
	free(c.host_holds);
	return rc;
}
