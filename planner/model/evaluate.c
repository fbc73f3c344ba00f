/*
 * evaluate.c — runs a plan against the graph the way the runtime will:
 * op by op, frees and allocations, the rebuild steps before the op, the
 * op itself, then the evictions after it.  It tracks which buffers are
 * mapped and which version each holds, so it finds every use of an
 * evicted or wrong buffer, and it sums physical bytes at every step
 * (saved copies and stashes included; a chunk several buffers share from
 * the first of them mapped to the last of them unmapped: shared.c).  The iteration is one turn of a
 * loop: what the plan leaves at the end is what the next iteration
 * starts with.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#define VER_LOST (-3) /* mapped again without being rebuilt: content gone */

/* Where an offloaded buffer's content is (plan version 3). */
enum { OFF_NONE, OFF_LEAVING, OFF_HOST, OFF_COMING };

struct sim {
	const struct pl_graph *g;
	uint8_t *mapped, *saved, *transient, *evicted_once, *stashed, *at_boundary;
	uint8_t *parked; /* on the host over the whole iteration (parked_on_host) */
	int32_t *ver, *saved_ver, *stash_ver;
	int32_t *share; /* per shared chunk group: its buffers mapped */
	int64_t mem;
	int32_t ntransient, nsaved;
	struct pl_eval *e;
	/* Offload: per buffer OFF_*, the version its host copy holds, when its
	 * copy out ends and when its prefetch ends; the compute stream's time
	 * and when each copy engine is free; host bytes held. */
	uint8_t *off;
	int32_t *host_ver;
	int64_t *off_end, *fetch_end;
	int64_t now, dtoh_free, htod_free, host_mem;
	double gbps;
	/* buffers allocated (a) and freed (f) before each op: pl_bufs_by_pos */
	uint32_t *aoff, *foff;
	int32_t *alist, *flist;
};

static int bad(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct sim *s, const char *fmt, ...)
{
	if (s->e->valid) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->e->error, sizeof(s->e->error), fmt, ap);
		va_end(ap);
		s->e->valid = 0;
	}
	return -1;
}

/* Mapping and unmapping b: its bytes, and those of the shared chunks it
 * is the first to need or the last to leave. */
static void map(struct sim *s, int32_t b)
{
	s->mapped[b] = 1;
	s->mem += pl_map_bytes(s->g, s->share, b);
}

static void unmap(struct sim *s, int32_t b)
{
	s->mapped[b] = 0;
	s->mem -= pl_unmap_bytes(s->g, s->share, b);
}

/* Checks and applies op k's references: mapped, real reads see the
 * version they saw in the profiled iteration; then the writes. */
static int run_op(struct sim *s, int32_t k, int32_t p, int replay)
{
	const struct pl_graph *g = s->g;
	const struct pl_op *op = &g->ops[k];
	const char *what = replay ? "replay of op" : "op";
	for (uint32_t i = 0; i < op->nrefs; i++) {
		const struct pl_ref *r = &g->refs[op->ref_off + i];
		if (!s->mapped[r->buf])
			return bad(s, "%s %d (before op %d): buffer %d is not mapped", what, k, p,
			           r->buf);
		if (s->off[r->buf] == OFF_COMING)
			return bad(s, "%s %d (at op %d): buffer %d is being prefetched (no await)",
			           what, k, p, r->buf);
		if (s->off[r->buf] == OFF_LEAVING && (r->flags & PL_REF_WRITE))
			return bad(s,
			           "%s %d (at op %d): writes buffer %d while it is copied to the "
			           "host",
			           what, k, p, r->buf);
		if ((r->flags & PL_REF_READ) && s->ver[r->buf] != r->ver)
			return bad(s,
			           "%s %d (at op %d): reads buffer %d version %d but it holds "
			           "version %d",
			           what, k, p, r->buf, r->ver, s->ver[r->buf]);
	}
	for (uint32_t i = 0; i < op->nrefs; i++) {
		const struct pl_ref *r = &g->refs[op->ref_off + i];
		if (r->flags & PL_REF_WRITE)
			s->ver[r->buf] = k;
	}
	return 0;
}

static void note(struct sim *s, int32_t p)
{
	if (s->mem > s->e->curve[p])
		s->e->curve[p] = s->mem;
}

/* Compute waits for a copy that ends at t. */
static void wait_copy(struct sim *s, int64_t t)
{
	if (t > s->now) {
		s->e->stall_ns += t - s->now;
		s->now = t;
	}
}

static int offload_step(struct sim *s, int kind, int32_t b, int32_t p, int alive)
{
	const struct pl_buffer *bf = &s->g->bufs[b];
	const char *name = pl_step_names[kind];
	if (!(s->gbps > 0))
		return bad(s, "before op %d: %s of buffer %d in a plan without offload_gbps", p,
		           name, b);
	if (bf->small || !alive)
		return bad(s, "before op %d: %s of buffer %d, which is %s", p, name, b,
		           bf->small ? "small (packed)" : "not allocated");
	int64_t copy = pl_copy_ns(bf->size, s->gbps);
	switch (kind) {
	case PL_STEP_OFFLOAD: {
		if (!s->mapped[b] || s->off[b] != OFF_NONE || s->ver[b] == VER_LOST ||
		    s->ver[b] == PL_VER_FRESH || s->saved[b] || s->stashed[b])
			return bad(s, "before op %d: offload of buffer %d, which %s", p, b,
			           !s->mapped[b]                  ? "is not mapped"
			           : s->off[b] != OFF_NONE        ? "is offloaded already"
			           : s->saved[b] || s->stashed[b] ? "has a saved copy"
			                                          : "holds nothing to keep");
		int64_t start = s->now > s->dtoh_free ? s->now : s->dtoh_free;
		s->off_end[b] = s->dtoh_free = start + copy;
		s->off[b] = OFF_LEAVING;
		s->host_ver[b] = s->ver[b];
		s->host_mem += bf->size;
		if (s->host_mem > s->e->host_peak)
			s->e->host_peak = s->host_mem;
		s->e->offloads++;
		return 0;
	}
	case PL_STEP_PREFETCH: {
		if (s->mapped[b] || s->off[b] != OFF_HOST)
			return bad(s, "before op %d: prefetch of buffer %d, which %s", p, b,
			           s->mapped[b] ? "is mapped" : "is not on the host");
		map(s, b);
		s->ver[b] = VER_LOST;
		int64_t start = s->now > s->htod_free ? s->now : s->htod_free;
		if (s->off_end[b] > start)
			start = s->off_end[b];
		s->fetch_end[b] = s->htod_free = start + copy;
		s->off[b] = OFF_COMING;
		return 0;
	}
	default: /* PL_STEP_AWAIT */
		if (s->off[b] != OFF_COMING)
			return bad(
			    s, "before op %d: await of buffer %d, which is not being prefetched", p,
			    b);
		wait_copy(s, s->fetch_end[b]);
		s->ver[b] = s->host_ver[b];
		s->off[b] = OFF_NONE;
		s->host_mem -= bf->size;
		return 0;
	}
}

static int replay_step(struct sim *s, int32_t k, int32_t p)
{
	const struct pl_graph *g = s->g;
	if (k < 0 || k >= p)
		return bad(s, "before op %d: replay of op %d, not an earlier op", p, k);
	if (!g->ops[k].replayable)
		return bad(s, "before op %d: op %d (%s) is not replayable: %s", p, k,
		           g->ops[k].name, g->ops[k].why_not);
	/* A plan file may replay one op any number of times. */
	if (__builtin_add_overflow(s->e->recompute_ns, g->ops[k].duration_ns, &s->e->recompute_ns))
		return bad(s, "before op %d: the replays add up to more than 2^63 ns", p);
	s->e->replays++;
	s->now += g->ops[k].duration_ns;
	return run_op(s, k, p, 1);
}

static int map_step(struct sim *s, int32_t b, int32_t p, int alive)
{
	if (s->g->bufs[b].small)
		return bad(s, "before op %d: buffer %d is small (packed), it is never mapped", p,
		           b);
	if (s->mapped[b])
		return bad(s, "before op %d: map of buffer %d, which is mapped", p, b);
	map(s, b);
	s->ver[b] = VER_LOST;
	if (!alive) {
		s->transient[b] = 1;
		s->ntransient++;
	}
	return 0;
}

static int release_step(struct sim *s, int32_t b, int32_t p)
{
	const struct pl_graph *g = s->g;
	if (!s->mapped[b] || s->saved[b] || g->bufs[b].small)
		return bad(s, "before op %d: release of buffer %d, which is %s", p, b,
		           g->bufs[b].small ? "small"
		           : s->saved[b]    ? "saved"
		                            : "not mapped");
	unmap(s, b);
	s->ver[b] = VER_LOST;
	if (s->transient[b]) {
		s->transient[b] = 0;
		s->ntransient--;
	} else {
		s->evicted_once[b] = 1;
	}
	return 0;
}

/* Save and restore (around replays that write a buffer in use), stash
 * and unstash (content from before the iteration): a copy inside device
 * memory, held until it is taken back. */
static int copy_step(struct sim *s, int kind, int32_t b, int32_t p)
{
	int64_t bytes = pl_save_bytes(s->g, &s->g->bufs[b]);
	switch (kind) {
	case PL_STEP_SAVE:
		if (!s->mapped[b] || s->saved[b])
			return bad(s, "before op %d: save of buffer %d, which is %s", p, b,
			           s->saved[b] ? "saved already" : "not mapped");
		s->saved[b] = 1;
		s->saved_ver[b] = s->ver[b];
		s->nsaved++;
		s->mem += bytes;
		return 0;
	case PL_STEP_RESTORE:
		if (!s->saved[b] || !s->mapped[b])
			return bad(s, "before op %d: restore of buffer %d, which is %s", p, b,
			           s->saved[b] ? "not mapped" : "not saved");
		s->saved[b] = 0;
		s->nsaved--;
		s->ver[b] = s->saved_ver[b];
		s->mem -= bytes;
		return 0;
	case PL_STEP_STASH:
		if (!s->mapped[b] || s->stashed[b])
			return bad(s, "before op %d: stash of buffer %d, which is %s", p, b,
			           s->stashed[b] ? "stashed already" : "not mapped");
		s->stashed[b] = 1;
		s->stash_ver[b] = s->ver[b];
		s->mem += bytes;
		return 0;
	default: /* PL_STEP_UNSTASH */
		if (!s->stashed[b] || !s->mapped[b])
			return bad(s, "before op %d: unstash of buffer %d, which is %s", p, b,
			           s->stashed[b] ? "not mapped" : "not stashed");
		s->stashed[b] = 0;
		s->ver[b] = s->stash_ver[b];
		s->mem -= bytes;
		return 0;
	}
}

static int step(struct sim *s, const struct pl_step *st, int32_t p)
{
	const struct pl_graph *g = s->g;
	int32_t b = st->arg;
	if (st->kind == PL_STEP_REPLAY)
		return replay_step(s, b, p);
	if (b < 0 || b >= g->nbufs)
		return bad(s, "before op %d: step names buffer %d, which does not exist", p, b);
	if (s->parked[b])
		return bad(s, "before op %d: %s of buffer %d, which is parked on the host", p,
		           pl_step_names[st->kind], b);
	int alive = pl_buf_alive(&g->bufs[b], p, g->nops);
	if (PL_STEP_IS_OFFLOAD(st->kind))
		return offload_step(s, st->kind, b, p, alive);
	if (s->off[b] != OFF_NONE)
		return bad(s, "before op %d: %s of buffer %d, which is offloaded", p,
		           pl_step_names[st->kind], b);
	switch (st->kind) {
	case PL_STEP_MAP:
		return map_step(s, b, p, alive);
	case PL_STEP_RELEASE:
		return release_step(s, b, p);
	case PL_STEP_SAVE:
	case PL_STEP_RESTORE:
	case PL_STEP_STASH:
	case PL_STEP_UNSTASH: {
		/* a copy on the compute stream: it takes its time like a replay */
		int64_t copy = pl_dev_copy_ns(g, &g->bufs[b]);
		if (__builtin_add_overflow(s->e->recompute_ns, copy, &s->e->recompute_ns))
			return bad(s, "before op %d: the copies add up to more than 2^63 ns", p);
		s->now += copy;
		return copy_step(s, st->kind, b, p);
	}
	default:
		return bad(s, "before op %d: unknown step kind %d", p, st->kind);
	}
}

/* Buffers the plan parks on the host (parked_on_host): each once, live
 * across the boundary, referenced by no op (so no step needs it either),
 * not also kept unmapped at the boundary, in a plan that may use host
 * memory.  They are unmapped from the start of the iteration to its end
 * (their shared chunks held by the others only) and their bytes are on
 * the host all along. */
static int park_check(struct sim *s, const struct pl_plan *p)
{
	const struct pl_graph *g = s->g;
	if (p->nparked && !(p->offload_gbps > 0))
		return bad(s, "the plan parks buffers on the host but has no offload_gbps");
	for (int32_t i = 0; i < p->nparked; i++) {
		int32_t b = p->parked[i];
		const struct pl_buffer *bf = b >= 0 && b < g->nbufs ? &g->bufs[b] : NULL;
		const char *why = !bf                 ? "it does not exist"
		                  : s->parked[b]      ? "listed twice"
		                  : s->at_boundary[b] ? "it is unmapped at the boundary"
		                  : bf->alloc_at >= 0 || bf->free_at >= 0
		                      ? "it is not live across the "
		                        "boundary"
		                  : bf->excluded ? "it is excluded"
		                                 : NULL;
		if (why)
			return bad(s, "buffer %d cannot be parked on the host: %s", b, why);
		s->parked[b] = 1;
		s->host_mem += bf->size;
	}
	for (int32_t k = 0; k < g->nops; k++)
		for (uint32_t i = 0; i < g->ops[k].nrefs; i++) {
			int32_t b = g->refs[g->ops[k].ref_off + i].buf;
			if (s->parked[b])
				return bad(s,
				           "buffer %d cannot be parked on the host: op %d "
				           "references it",
				           b, k);
		}
	s->e->host_peak = s->host_mem;
	return 0;
}

void pl_eval_free(struct pl_eval *e)
{
	free(e->curve);
	e->curve = NULL;
}

static int sim_alloc(struct sim *s)
{
	const struct pl_graph *g = s->g;
	int32_t nb = g->nbufs ? g->nbufs : 1;
	s->alist = pl_bufs_by_pos(g, 0, &s->aoff);
	s->flist = pl_bufs_by_pos(g, 1, &s->foff);
	s->mapped = calloc(nb, 1);
	s->saved = calloc(nb, 1);
	s->transient = calloc(nb, 1);
	s->evicted_once = calloc(nb, 1);
	s->stashed = calloc(nb, 1);
	s->at_boundary = calloc(nb, 1);
	s->parked = calloc(nb, 1);
	s->ver = malloc(sizeof(int32_t) * nb);
	s->saved_ver = malloc(sizeof(int32_t) * nb);
	s->stash_ver = malloc(sizeof(int32_t) * nb);
	s->off = calloc(nb, 1);
	s->host_ver = malloc(sizeof(int32_t) * nb);
	s->off_end = calloc(nb, sizeof(int64_t));
	s->fetch_end = calloc(nb, sizeof(int64_t));
	s->share = calloc(g->nshared ? g->nshared : 1, sizeof(int32_t));
	s->e->curve = calloc(g->nops ? g->nops : 1, sizeof(int64_t));
	return !s->alist || !s->flist || !s->mapped || !s->saved || !s->transient ||
	       !s->evicted_once || !s->stashed || !s->at_boundary || !s->parked || !s->ver ||
	       !s->saved_ver || !s->stash_ver || !s->e->curve || !s->off || !s->host_ver ||
	       !s->off_end || !s->fetch_end || !s->share;
}

static void sim_free(struct sim *s)
{
	free(s->alist);
	free(s->flist);
	free(s->aoff);
	free(s->foff);
	free(s->mapped);
	free(s->saved);
	free(s->transient);
	free(s->evicted_once);
	free(s->stashed);
	free(s->at_boundary);
	free(s->parked);
	free(s->ver);
	free(s->saved_ver);
	free(s->stash_ver);
	free(s->off);
	free(s->host_ver);
	free(s->off_end);
	free(s->fetch_end);
	free(s->share);
}

/* Buffers the plan keeps unmapped at the boundary: their content there
 * must be dead, and they start the iteration unmapped. */
static int boundary_check(struct sim *s, const struct pl_plan *p)
{
	const struct pl_graph *g = s->g;
	for (int32_t i = 0; i < p->nboundary; i++) {
		int32_t b = p->boundary[i];
		if (b < 0 || b >= g->nbufs || s->at_boundary[b] || !g->bufs[b].dead_across)
			return bad(s, "buffer %d cannot be unmapped at the iteration boundary: %s",
			           b,
			           b < 0 || b >= g->nbufs ? "it does not exist"
			           : s->at_boundary[b]    ? "listed twice"
			                                  : "its content there is live");
		s->at_boundary[b] = 1;
	}
	return 0;
}

/* The frees and then the allocations before op pos. */
static int free_and_alloc(struct sim *s, int32_t pos)
{
	for (uint32_t i = s->foff[pos]; i < s->foff[pos + 1]; i++) {
		int32_t b = s->flist[i];
		if (s->saved[b] || s->transient[b] || s->off[b] != OFF_NONE)
			return bad(s,
			           "buffer %d is freed before op %d while saved, transient or "
			           "offloaded",
			           b, pos);
		if (s->mapped[b])
			unmap(s, b);
	}
	for (uint32_t i = s->aoff[pos]; i < s->aoff[pos + 1]; i++) {
		int32_t b = s->alist[i];
		if (s->mapped[b])
			return bad(s,
			           "buffer %d is mapped (transient) when it is allocated before "
			           "op %d",
			           b, pos);
		map(s, b);
		s->ver[b] = PL_VER_FRESH;
	}
	return 0;
}

static int evict(struct sim *s, int32_t b, int32_t pos)
{
	const struct pl_graph *g = s->g;
	if (b < 0 || b >= g->nbufs)
		return bad(s, "evict after op %d: buffer %d does not exist", pos, b);
	if (!s->mapped[b] || g->bufs[b].small || g->bufs[b].excluded ||
	    !pl_buf_alive(&g->bufs[b], pos, g->nops))
		return bad(s, "evict after op %d: buffer %d is %s", pos, b,
		           g->bufs[b].small      ? "small (packed), never evicted"
		           : g->bufs[b].excluded ? "excluded, never evicted"
		           : !pl_buf_alive(&g->bufs[b], pos, g->nops) ? "not allocated"
		                                                      : "not mapped");
	if (s->off[b] == OFF_LEAVING) {
		/* the device copy goes once the copy out is over */
		wait_copy(s, s->off_end[b]);
		s->off[b] = OFF_HOST;
	} else if (s->off[b] != OFF_NONE) {
		return bad(s, "evict after op %d: buffer %d is being prefetched", pos, b);
	}
	unmap(s, b);
	s->ver[b] = VER_LOST;
	s->evicted_once[b] = 1;
	s->e->evictions++;
	return 0;
}

/* Position pos: frees, allocations, the steps, the op, the evictions. */
static int position(struct sim *s, const struct pl_plan *p, int32_t pos)
{
	struct pl_eval *e = s->e;
	if (free_and_alloc(s, pos))
		return -1;
	e->curve[pos] = s->mem;
	for (uint32_t i = p->step_off[pos]; i < p->step_off[pos + 1]; i++) {
		if (step(s, &p->steps[i], pos))
			return -1;
		note(s, pos);
	}
	if (s->ntransient || s->nsaved)
		return bad(s, "op %d runs with %d transient mappings and %d saved copies left", pos,
		           s->ntransient, s->nsaved);
	if (run_op(s, pos, pos, 0))
		return -1;
	s->now += s->g->ops[pos].duration_ns;
	note(s, pos);
	for (uint32_t i = p->evict_off[pos]; i < p->evict_off[pos + 1]; i++)
		if (evict(s, p->evict[i], pos))
			return -1;
	if (e->curve[pos] > e->peak) {
		e->peak = e->curve[pos];
		e->peak_at = pos;
	}
	return 0;
}

/* Whatever outlives the iteration must be there, with its final
 * content, unless the plan keeps it unmapped at the boundary; no stash
 * is left behind. */
static void end_check(struct sim *s)
{
	const struct pl_graph *g = s->g;
	for (int32_t b = 0; b < g->nbufs && s->e->valid; b++) {
		if (s->stashed[b])
			bad(s, "buffer %d is still stashed at the end of the iteration", b);
		else if (s->off[b] != OFF_NONE)
			bad(s, "buffer %d is still offloaded at the end of the iteration", b);
		else if (g->bufs[b].free_at < 0 && s->at_boundary[b] && s->mapped[b])
			bad(s,
			    "buffer %d is mapped at the end of the iteration but the plan keeps "
			    "it unmapped at the boundary",
			    b);
		else if (g->bufs[b].free_at < 0 && !s->at_boundary[b] && !s->parked[b] &&
		         !s->mapped[b])
			bad(s, "buffer %d is still evicted at the end of the iteration", b);
	}
	if (!s->e->valid)
		return;
	int32_t *final = s->saved_ver; /* reuse: the original final versions */
	for (int32_t b = 0; b < g->nbufs; b++)
		final[b] = pl_ver_initial(&g->bufs[b]);
	for (int32_t i = 0; i < g->nops; i++)
		for (uint32_t k = 0; k < g->ops[i].nrefs; k++) {
			const struct pl_ref *r = &g->refs[g->ops[i].ref_off + k];
			if (r->flags & PL_REF_WRITE)
				final[r->buf] = i;
		}
	/* (content dead across the boundary is never read again) */
	for (int32_t b = 0; b < g->nbufs; b++)
		if (g->bufs[b].free_at < 0 && !g->bufs[b].dead_across && s->ver[b] != final[b]) {
			bad(s,
			    "buffer %d ends the iteration with version %d instead of %d "
			    "(a replay changed it)",
			    b, s->ver[b], final[b]);
			break;
		}
}

/* The plan over the iteration; a violation ends it (s->e->valid 0). */
static void run_plan(struct sim *s, const struct pl_plan *p)
{
	const struct pl_graph *g = s->g;
	if (p->nops != g->nops) {
		bad(s, "the plan is for %d ops, the graph has %d", p->nops, g->nops);
		return;
	}
	if (boundary_check(s, p) || park_check(s, p))
		return;
	s->mem = g->const_bytes;
	for (int32_t b = 0; b < g->nbufs; b++) {
		s->ver[b] = pl_ver_initial(&g->bufs[b]);
		if (g->bufs[b].alloc_at < 0 && !s->at_boundary[b] && !s->parked[b])
			map(s, b);
	}
	for (int32_t pos = 0; pos < g->nops; pos++)
		if (position(s, p, pos))
			return;
	end_check(s);
	for (int32_t b = 0; b < g->nbufs; b++)
		s->e->evicted_buffers += s->evicted_once[b];
	s->e->time_ns = s->now;
}

int pl_evaluate(const struct pl_graph *g, const struct pl_plan *p, struct pl_eval *e)
{
	memset(e, 0, sizeof(*e));
	e->valid = 1;
	e->peak_at = -1;
	struct sim s = {.g = g, .e = e, .gbps = p->offload_gbps};
	int rc = sim_alloc(&s) ? PL_EINTERNAL : PL_OK;
	if (!rc)
		run_plan(&s, p);
	sim_free(&s);
	if (rc)
		pl_eval_free(e);
	return rc;
}
