/*
 * park.c — buffers a plan keeps on the host for as long as it applies
 * (parked_on_host, docs/plan-format.md): live across the boundary and
 * referenced by no op of the iteration, so nothing in the iteration needs
 * them and nothing proves their content dead (a program may use a buffer
 * every N iterations).  The runtime copies them out once when it starts
 * applying the plan and back when it stops: no cost per iteration, only
 * host memory.
 *
 * The planners plan on a view of the graph without them: the same graph
 * with those buffers holding no bytes and in no shared chunk group, so
 * the memory curve every planner and the evaluator sees is the one the
 * runtime has with them parked (a group they all were in holds nothing).
 * Plans made on the view are valid on the graph once they list the
 * parked buffers (the evaluator checks that again).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

/* Worth parking: live across the boundary, no op references it, not
 * excluded nor packed small (the small pool's chunks stay whatever it
 * holds), with chunks of its own or chunks it shares with other regions
 * (a region with no whole chunk: those can go once the others are out). */
static int parkable(const struct pl_buffer *b, const uint8_t *touched, int32_t id)
{
	return b->alloc_at < 0 && b->free_at < 0 && !touched[id] && !b->excluded &&
	       !b->dead_across && !b->small && (b->rounded > 0 || b->shared[0] != 0);
}

void pl_park_free(struct pl_park *pk)
{
	free(pk->bufs);
	free(pk->view_bufs);
	free(pk->view_shared);
	free(pk->view_shared_bufs);
	free(pk->view_live);
	memset(pk, 0, sizeof(*pk));
}

/* The view's buffers: the parked ones hold nothing (touched[b] 2). */
static void park_bufs(const struct pl_graph *g, struct pl_park *pk, uint8_t *touched)
{
	memcpy(pk->view_bufs, g->bufs, sizeof(struct pl_buffer) * (size_t)g->nbufs);
	for (int32_t b = 0; b < g->nbufs; b++) {
		struct pl_buffer *v = &pk->view_bufs[b];
		if (parkable(&g->bufs[b], touched, b)) {
			pk->bufs[pk->n++] = b;
			touched[b] = 2; /* parked */
			pk->host_bytes += v->size;
			v->rounded = 0;
			v->small = 1; /* holds nothing: never evicted nor mapped */
			v->shared[0] = v->shared[1] = 0;
		}
	}
}

/* The groups without their parked buffers; one left with none holds
 * nothing (no buffer names it any more). */
static void park_groups(const struct pl_graph *g, struct pl_park *pk, const uint8_t *touched)
{
	uint32_t off = 0;
	for (int32_t s = 0; s < g->nshared; s++) {
		const struct pl_shared *sh = &g->shared[s];
		struct pl_shared *vs = &pk->view_shared[s];
		vs->off = off;
		for (uint32_t i = 0; i < sh->n; i++) {
			int32_t b = g->shared_bufs[sh->off + i];
			if (touched[b] != 2)
				pk->view_shared_bufs[off++] = b;
		}
		vs->n = off - vs->off;
		vs->bytes = vs->n ? sh->bytes : 0;
	}
}

/* The view of g with the n parkable buffers parked; -1 out of memory. */
static int park(const struct pl_graph *g, struct pl_park *pk, uint8_t *touched, int32_t n)
{
	size_t nsb = 0;
	for (int32_t s = 0; s < g->nshared; s++)
		nsb += g->shared[s].n;
	pk->bufs = malloc(sizeof(int32_t) * (size_t)n);
	pk->view_bufs = calloc(g->nbufs > 0 ? (size_t)g->nbufs : 1, sizeof(struct pl_buffer));
	pk->view_shared = calloc(g->nshared > 0 ? (size_t)g->nshared : 1, sizeof(struct pl_shared));
	pk->view_shared_bufs = malloc(sizeof(int32_t) * (nsb ? nsb : 1));
	pk->view_live = malloc(sizeof(int64_t) * (size_t)g->nops);
	int64_t *diff = calloc((size_t)g->nops + 1, sizeof(int64_t));
	int rc = -1;
	if (pk->bufs && pk->view_bufs && pk->view_shared && pk->view_shared_bufs && pk->view_live &&
	    diff) {
		park_bufs(g, pk, touched);
		park_groups(g, pk, touched);
		pk->view = *g;
		pk->view.bufs = pk->view_bufs;
		pk->view.shared = pk->view_shared;
		pk->view.shared_bufs = pk->view_shared_bufs;
		pk->view.live = pk->view_live;
		for (int32_t b = 0; b < g->nbufs; b++) {
			const struct pl_buffer *v = &pk->view_bufs[b];
			diff[v->alloc_at < 0 ? 0 : v->alloc_at] += v->rounded;
			diff[v->free_at < 0 ? g->nops : v->free_at] -= v->rounded;
		}
		rc = pl_graph_baseline(&pk->view, diff);
	}
	free(diff);
	return rc;
}

int pl_park_view(const struct pl_graph *g, struct pl_park *pk)
{
	memset(pk, 0, sizeof(*pk));
	uint8_t *touched = calloc(g->nbufs ? (size_t)g->nbufs : 1, 1);
	if (!touched)
		return -1;
	for (uint32_t r = 0; r < g->nrefs; r++)
		touched[g->refs[r].buf] = 1;
	int32_t n = 0;
	for (int32_t b = 0; b < g->nbufs; b++)
		n += parkable(&g->bufs[b], touched, b);
	int rc = n ? park(g, pk, touched, n) : 0;
	free(touched);
	if (rc)
		pl_park_free(pk);
	return rc;
}
