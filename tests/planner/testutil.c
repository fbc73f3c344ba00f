/*
 * testutil.c — random graphs and the reference simulator (see testutil.h).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t tu_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int pick(uint64_t *s, int n)
{
	return (int)(tu_rand(s) % (uint64_t)n);
}

/* Graph under construction: ops with read/write lists, buffers. */
struct gb {
	struct pl_graph *g;
	int capops, capbufs, caprefs;
};

static int32_t new_buf(struct gb *b, int64_t size, int small, int persistent, int32_t at)
{
	struct pl_graph *g = b->g;
	int32_t id = g->nbufs++;
	g->bufs[id] = (struct pl_buffer){.size = size,
	                                 .rounded = small ? 0 : pl_round_up(size, g->granularity),
	                                 .alloc_at = persistent ? -1 : at,
	                                 .free_at = -1,
	                                 .small = (uint8_t)small,
	                                 .persistent = (uint8_t)persistent,
	                                 .name = ""};
	return id;
}

/* Group g->nshared: bytes shared by buffers x and y (arrays sized by the
 * caller); 0, or -1 when one of them is in two groups already. */
static int add_share(struct pl_graph *g, int64_t bytes, int32_t x, int32_t y)
{
	if (g->bufs[x].shared[1] || g->bufs[y].shared[1])
		return -1;
	int32_t i = g->nshared++;
	g->shared[i] = (struct pl_shared){bytes, 2 * (uint32_t)i, 2};
	g->shared_bufs[2 * i] = x;
	g->shared_bufs[2 * i + 1] = y;
	g->bufs[x].shared[g->bufs[x].shared[0] ? 1 : 0] = (uint32_t)i + 1;
	g->bufs[y].shared[g->bufs[y].shared[0] ? 1 : 0] = (uint32_t)i + 1;
	return 0;
}

static void ref(struct gb *b, int32_t buf, uint32_t flags)
{
	struct pl_graph *g = b->g;
	struct pl_op *op = &g->ops[g->nops - 1];
	for (uint32_t k = 0; k < op->nrefs; k++)
		if (g->refs[op->ref_off + k].buf == buf) {
			g->refs[op->ref_off + k].flags |= flags;
			return;
		}
	g->refs[g->nrefs++] = (struct pl_ref){buf, 0, flags};
	op->nrefs++;
}

static void new_op(struct gb *b, uint64_t *s, int replayable)
{
	struct pl_graph *g = b->g;
	struct pl_op *op = &g->ops[g->nops++];
	*op = (struct pl_op){.name = "op",
	                     .duration_ns = 1 + pick(s, 100),
	                     .ref_off = g->nrefs,
	                     .replayable = (uint8_t)replayable,
	                     .why_not = replayable ? "" : "test"};
}

struct pl_graph *tu_random_graph(uint64_t seed, const struct rg_opts *o)
{
	uint64_t s = seed * 2654435761u + 12345;
	struct gb b = {0};
	struct pl_graph *g = pl_graph_new();
	int L = o->layers;
	int maxops = 2 * L + 10, maxbufs = 6 * L + 12;
	if (!g || pl_graph_reserve(g, maxops, maxbufs, (uint32_t)maxops * 8)) {
		pl_graph_free(g);
		return NULL;
	}
	b.g = g;
	g->granularity = 1024;
	g->name = strdup("random");
	g->const_bytes = 4096;
	int32_t *act = calloc(L + 1, sizeof(int32_t)), *lastuse = NULL;
	int32_t w = new_buf(&b, 4096, 0, 1, -1);
	int32_t stats = new_buf(&b, 512, 1, 1, -1);
	int32_t wgrad = new_buf(&b, 4096, 0, 1, -1);
	/* input: a copy from the host, never replayable */
	new_op(&b, &s, 0);
	act[0] = new_buf(&b, 1024 * (1 + pick(&s, 4)), 0, 0, 0);
	ref(&b, act[0], PL_REF_WRITE);
	int32_t logits = -1, zeroed = -1;
	if (o->reuse) {
		/* an arena's memset: the logits' region (overwritten before it
		 * is read) and one that a partial write below keeps zeros of */
		logits = new_buf(&b, 1024 * (1 + pick(&s, 3)), 0, 1, -1);
		zeroed = new_buf(&b, 1024 * (1 + pick(&s, 3)), 0, 1, -1);
		g->bufs[logits].dead_across = g->bufs[zeroed].dead_across = 1;
		new_op(&b, &s, 1);
		ref(&b, logits, PL_REF_WRITE);
		ref(&b, zeroed, PL_REF_WRITE);
	}
	for (int i = 1; i <= L; i++) {
		int p = g->nops;
		new_op(&b, &s, !(o->nonreplay && pick(&s, 8) == 0));
		ref(&b, act[i - 1], PL_REF_READ);
		if (i >= 2 && pick(&s, 4) == 0)
			ref(&b, act[i - 2], PL_REF_READ); /* skip connection */
		ref(&b, w, PL_REF_READ);
		if (o->dead && pick(&s, 4) == 0) {
			/* allocated once, rewritten whole every iteration */
			act[i] = new_buf(&b, 1024 * (1 + pick(&s, 6)), 0, 1, -1);
			g->bufs[act[i]].dead_across = 1;
		} else {
			act[i] = new_buf(&b, 1024 * (1 + pick(&s, 6)), pick(&s, 10) == 0, 0, p);
		}
		ref(&b, act[i], PL_REF_READ | PL_REF_WRITE); /* conservative read of a fresh one */
		if (o->side_writes && pick(&s, 6) == 0) {
			int32_t ws = new_buf(&b, 1024 * (1 + pick(&s, 3)), 0, 0, p);
			g->bufs[ws].free_at = p + 1; /* a workspace */
			ref(&b, ws, PL_REF_READ | PL_REF_WRITE);
		}
		if (o->side_writes && pick(&s, 8) == 0)
			ref(&b, stats, PL_REF_READ | PL_REF_WRITE); /* running statistics */
		if (o->inplace && pick(&s, 5) == 0) {
			new_op(&b, &s, 1);
			ref(&b, act[i], PL_REF_READ | PL_REF_WRITE);
		}
		if (o->partial && pick(&s, 5) == 0) {
			/* updates part of the activation from the weights */
			new_op(&b, &s, 1);
			ref(&b, w, PL_REF_READ);
			ref(&b, act[i], PL_REF_WRITE | PL_REF_PARTIAL);
		}
	}
	if (o->reuse) {
		/* the zeroed region, partly written (its zeros kept), read late */
		new_op(&b, &s, 1);
		ref(&b, act[L], PL_REF_READ);
		ref(&b, zeroed, PL_REF_WRITE | PL_REF_PARTIAL);
		/* logits into their region, read into probabilities, then the
		 * region overwritten whole with their gradient (gpt's pool) */
		new_op(&b, &s, 1);
		ref(&b, act[L], PL_REF_READ);
		ref(&b, w, PL_REF_READ);
		ref(&b, logits, PL_REF_WRITE);
		new_op(&b, &s, 1);
		int32_t probs = new_buf(&b, 1024 * (1 + pick(&s, 3)), 0, 0, g->nops - 1);
		ref(&b, logits, PL_REF_READ);
		ref(&b, probs, PL_REF_WRITE);
		new_op(&b, &s, 1);
		ref(&b, w, PL_REF_READ);
		new_op(&b, &s, 1);
		ref(&b, probs, PL_REF_READ);
		ref(&b, zeroed, PL_REF_READ);
		ref(&b, logits, PL_REF_WRITE);
	}
	/* backward: gradient chain reading the activations in reverse */
	new_op(&b, &s, 1);
	int32_t grad = new_buf(&b, 1024, 0, 0, g->nops - 1);
	ref(&b, act[L], PL_REF_READ);
	if (o->reuse) {
		ref(&b, logits, PL_REF_READ);
		ref(&b, zeroed, PL_REF_READ);
	}
	ref(&b, grad, PL_REF_WRITE);
	for (int i = L; i >= 1 && g->nops < maxops; i--) {
		new_op(&b, &s, 1);
		int32_t ng = new_buf(&b, 1024 * (1 + pick(&s, 3)), 0, 0, g->nops - 1);
		ref(&b, grad, PL_REF_READ);
		ref(&b, act[i], PL_REF_READ);
		ref(&b, act[i - 1], PL_REF_READ);
		ref(&b, w, PL_REF_READ);
		ref(&b, wgrad, PL_REF_READ | PL_REF_WRITE); /* gradient accumulation */
		ref(&b, ng, PL_REF_WRITE);
		grad = ng;
	}
	/* Frees after the last use (some buffers stay allocated longer). */
	lastuse = malloc(sizeof(int32_t) * g->nbufs);
	for (int32_t x = 0; x < g->nbufs; x++)
		lastuse[x] = -1;
	for (int32_t i = 0; i < g->nops; i++)
		for (uint32_t k = 0; k < g->ops[i].nrefs; k++)
			lastuse[g->refs[g->ops[i].ref_off + k].buf] = i;
	for (int32_t x = 0; x < g->nbufs; x++) {
		struct pl_buffer *bf = &g->bufs[x];
		if (bf->persistent || bf->free_at >= 0)
			continue;
		int32_t f = lastuse[x] + 1 + (pick(&s, 4) == 0 ? pick(&s, 3) : 0);
		bf->free_at = f >= g->nops ? -1 : f;
	}
	free(act);
	free(lastuse);
	/* Neighbours sharing a chunk, as regions of one allocation do. */
	if (o->shared && g->nbufs > 1) {
		g->shared = calloc((size_t)g->nbufs, sizeof(*g->shared));
		g->shared_bufs = malloc(sizeof(int32_t) * 2 * (size_t)g->nbufs);
		for (int32_t x = 0; g->shared && g->shared_bufs && x + 1 < g->nbufs; x++)
			if (pick(&s, 3) == 0)
				add_share(g, 256 * (1 + pick(&s, 4)), x, x + 1);
	}
	char err[256];
	if (pl_graph_finish(g, 0, "random", err, sizeof(err))) {
		fprintf(stderr, "tu_random_graph: %s\n", err);
		pl_graph_free(g);
		return NULL;
	}
	return g;
}

struct pl_plan *tu_random_selection(const struct pl_graph *g, const struct pl_cands *cs,
                                    uint64_t *s, struct pl_selection *sel)
{
	if (pl_sel_init(sel, cs))
		return NULL;
	for (int32_t j = 0; j < cs->ncands; j++)
		if (tu_rand(s) % 3 == 0 && pl_sel_compatible(sel, j))
			pl_sel_take(sel, cs, j);
	return pl_sel_plan(g, cs, sel->chosen);
}

/* ---- reference simulator ---- */

#define LOST (-3)

struct st {
	const struct pl_graph *g;
	char *present, *copy, *stash;
	int32_t *content, *copy_content, *stash_content;
	int valid;
};

static int alive(const struct pl_buffer *b, int32_t p, int32_t n)
{
	int32_t from = b->alloc_at == -1 ? 0 : b->alloc_at;
	int32_t to = b->free_at == -1 ? n : b->free_at;
	return from <= p && p < to;
}

static int64_t mem(const struct st *s)
{
	int64_t m = s->g->const_bytes;
	/* a shared chunk: while any buffer of it is present */
	for (int32_t i = 0; i < s->g->nshared; i++) {
		const struct pl_shared *sh = &s->g->shared[i];
		int any = 0;
		for (uint32_t k = 0; k < sh->n; k++)
			any |= s->present[s->g->shared_bufs[sh->off + k]];
		if (any)
			m += sh->bytes;
	}
	for (int32_t b = 0; b < s->g->nbufs; b++) {
		const struct pl_buffer *bf = &s->g->bufs[b];
		if (s->present[b] && !bf->small)
			m += bf->rounded;
		int64_t copy =
		    bf->rounded > 0 ? bf->rounded : pl_round_up(bf->size, s->g->granularity);
		if (s->copy[b])
			m += copy;
		if (s->stash[b])
			m += copy;
	}
	return m;
}

static void exec(struct st *s, int32_t k)
{
	const struct pl_graph *g = s->g;
	const struct pl_op *op = &g->ops[k];
	for (uint32_t i = 0; i < op->nrefs; i++) {
		const struct pl_ref *r = &g->refs[op->ref_off + i];
		if (!s->present[r->buf])
			s->valid = 0;
		else if ((r->flags & PL_REF_READ) && s->content[r->buf] != r->ver)
			s->valid = 0;
	}
	for (uint32_t i = 0; i < op->nrefs; i++) {
		const struct pl_ref *r = &g->refs[op->ref_off + i];
		if (r->flags & PL_REF_WRITE)
			s->content[r->buf] = k;
	}
}

void tu_simulate(const struct pl_graph *g, const struct pl_plan *p, struct tu_sim *r)
{
	int32_t n = g->nops, nb = g->nbufs;
	struct st s = {g,
	               calloc(nb + 1, 1),
	               calloc(nb + 1, 1),
	               calloc(nb + 1, 1),
	               calloc(nb + 1, sizeof(int32_t)),
	               calloc(nb + 1, sizeof(int32_t)),
	               calloc(nb + 1, sizeof(int32_t)),
	               1};
	char *unmapped_at_start = calloc(nb + 1, 1);
	r->curve = calloc(n, sizeof(int64_t));
	r->peak = 0;
	r->recompute = 0;
	/* only a buffer whose content is dead across the boundary may be unmapped there */
	for (int32_t i = 0; i < p->nboundary; i++) {
		int32_t b = p->boundary[i];
		if (b < 0 || b >= nb || unmapped_at_start[b] || !g->bufs[b].dead_across)
			s.valid = 0;
		else
			unmapped_at_start[b] = 1;
	}
	for (int32_t b = 0; b < nb; b++) {
		s.present[b] = g->bufs[b].alloc_at == -1 && !unmapped_at_start[b];
		/* dead content: nothing may read it, like a fresh allocation */
		s.content[b] = g->bufs[b].dead_across ? PL_VER_FRESH : PL_VER_PRE;
	}
	for (int32_t pos = 0; pos < n && s.valid; pos++) {
		for (int32_t b = 0; b < nb; b++) {
			if (g->bufs[b].free_at == pos) {
				if (s.copy[b])
					s.valid = 0;
				s.present[b] = 0;
			}
		}
		for (int32_t b = 0; b < nb; b++) {
			if (g->bufs[b].alloc_at == pos) {
				if (s.present[b])
					s.valid = 0;
				s.present[b] = 1;
				s.content[b] = PL_VER_FRESH;
			}
		}
		int64_t hi = mem(&s);
		for (uint32_t i = p->step_off[pos]; i < p->step_off[pos + 1] && s.valid; i++) {
			int32_t a = p->steps[i].arg;
			int k = p->steps[i].kind;
			/* copies in device memory take time like replays (the
			 * graph's device_copy model) */
			if ((k == PL_STEP_SAVE || k == PL_STEP_RESTORE || k == PL_STEP_STASH ||
			     k == PL_STEP_UNSTASH) &&
			    a >= 0 && a < nb && g->copy_bytes_per_us > 0)
				r->recompute += g->copy_fixed_ns + (g->bufs[a].size * 1000 +
				                                    g->copy_bytes_per_us / 2) /
				                                       g->copy_bytes_per_us;
			switch (k) {
			case PL_STEP_MAP:
				if (a < 0 || a >= nb || s.present[a] || g->bufs[a].small)
					s.valid = 0;
				else {
					s.present[a] = 1;
					s.content[a] = LOST;
				}
				break;
			case PL_STEP_SAVE:
				if (a < 0 || a >= nb || !s.present[a] || s.copy[a])
					s.valid = 0;
				else {
					s.copy[a] = 1;
					s.copy_content[a] = s.content[a];
				}
				break;
			case PL_STEP_RESTORE:
				if (a < 0 || a >= nb || !s.present[a] || !s.copy[a])
					s.valid = 0;
				else {
					s.copy[a] = 0;
					s.content[a] = s.copy_content[a];
				}
				break;
			case PL_STEP_STASH:
				if (a < 0 || a >= nb || !s.present[a] || s.stash[a])
					s.valid = 0;
				else {
					s.stash[a] = 1;
					s.stash_content[a] = s.content[a];
				}
				break;
			case PL_STEP_UNSTASH:
				if (a < 0 || a >= nb || !s.present[a] || !s.stash[a])
					s.valid = 0;
				else {
					s.stash[a] = 0;
					s.content[a] = s.stash_content[a];
				}
				break;
			case PL_STEP_RELEASE:
				if (a < 0 || a >= nb || !s.present[a] || s.copy[a] ||
				    g->bufs[a].small)
					s.valid = 0;
				else {
					s.present[a] = 0;
					s.content[a] = LOST;
				}
				break;
			case PL_STEP_REPLAY:
				if (a < 0 || a >= pos || !g->ops[a].replayable) {
					s.valid = 0;
				} else {
					exec(&s, a);
					r->recompute += g->ops[a].duration_ns;
				}
				break;
			default:
				s.valid = 0;
			}
			int64_t m = mem(&s);
			hi = m > hi ? m : hi;
		}
		if (!s.valid)
			break;
		for (int32_t b = 0; b < nb; b++)
			if (s.copy[b] || (s.present[b] && !alive(&g->bufs[b], pos, n)))
				s.valid = 0;
		exec(&s, pos);
		int64_t m = mem(&s);
		hi = m > hi ? m : hi;
		r->curve[pos] = hi;
		r->peak = hi > r->peak ? hi : r->peak;
		for (uint32_t i = p->evict_off[pos]; i < p->evict_off[pos + 1]; i++) {
			int32_t a = p->evict[i];
			if (a < 0 || a >= nb || !s.present[a] || g->bufs[a].small ||
			    !alive(&g->bufs[a], pos, n))
				s.valid = 0;
			else {
				s.present[a] = 0;
				s.content[a] = LOST;
			}
		}
	}
	/* final state: no stash left; what outlives the iteration is mapped
	 * as it was at the start and holds its last version, unless its
	 * content is dead across the boundary */
	for (int32_t b = 0; b < nb && s.valid; b++) {
		if (s.stash[b])
			s.valid = 0;
		if (g->bufs[b].free_at != -1)
			continue;
		if (unmapped_at_start[b]) {
			if (s.present[b])
				s.valid = 0;
			continue;
		}
		int32_t last = g->bufs[b].alloc_at == -1 && !g->bufs[b].dead_across ? PL_VER_PRE
		                                                                    : PL_VER_FRESH;
		for (int32_t i = 0; i < n; i++)
			for (uint32_t k = 0; k < g->ops[i].nrefs; k++)
				if (g->refs[g->ops[i].ref_off + k].buf == b &&
				    (g->refs[g->ops[i].ref_off + k].flags & PL_REF_WRITE))
					last = i;
		if (!s.present[b] || (!g->bufs[b].dead_across && s.content[b] != last))
			s.valid = 0;
	}
	r->valid = s.valid;
	free(unmapped_at_start);
	free(s.present);
	free(s.copy);
	free(s.stash);
	free(s.content);
	free(s.copy_content);
	free(s.stash_content);
}

struct pl_graph *tu_hand_graph(const char *name, int32_t nops, const struct pl_buffer *bufs,
                               int32_t nbufs, const struct tu_ref *refs, size_t nrefs, int64_t dur0,
                               int64_t dur_step)
{
	return tu_hand_graph_shared(name, nops, bufs, nbufs, refs, nrefs, dur0, dur_step, NULL, 0);
}

struct pl_graph *tu_hand_graph_shared(const char *name, int32_t nops, const struct pl_buffer *bufs,
                                      int32_t nbufs, const struct tu_ref *refs, size_t nrefs,
                                      int64_t dur0, int64_t dur_step, const struct tu_share *sh,
                                      size_t nsh)
{
	struct pl_graph *g = pl_graph_new();
	if (!g || pl_graph_reserve(g, nops, nbufs, (uint32_t)nrefs)) {
		pl_graph_free(g);
		return NULL;
	}
	g->name = strdup(name);
	g->nops = nops;
	g->nbufs = nbufs;
	for (int32_t b = 0; b < nbufs; b++) {
		g->bufs[b] = bufs[b];
		g->bufs[b].rounded = bufs[b].size;
	}
	for (int32_t i = 0; i < nops; i++)
		g->ops[i] = (struct pl_op){.name = name,
		                           .duration_ns = dur0 + i * dur_step,
		                           .replayable = 1,
		                           .why_not = ""};
	for (size_t i = 0; i < nrefs; i++) {
		struct pl_op *op = &g->ops[refs[i].op];
		if (op->nrefs == 0)
			op->ref_off = g->nrefs;
		g->refs[g->nrefs++] = (struct pl_ref){refs[i].buf, 0, refs[i].flags};
		op->nrefs++;
	}
	if (nsh) {
		g->shared = calloc(nsh, sizeof(*g->shared));
		g->shared_bufs = malloc(sizeof(int32_t) * 2 * nsh);
		if (!g->shared || !g->shared_bufs) {
			pl_graph_free(g);
			return NULL;
		}
		for (size_t i = 0; i < nsh; i++)
			if (add_share(g, sh[i].bytes, sh[i].a, sh[i].b)) {
				pl_graph_free(g);
				return NULL;
			}
	}
	char err[256];
	if (pl_graph_finish(g, 0, name, err, sizeof(err))) {
		fprintf(stderr, "tu_hand_graph: %s\n", err);
		pl_graph_free(g);
		return NULL;
	}
	return g;
}

char *tu_replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	if (!at)
		return NULL;
	size_t a = (size_t)(at - text), nf = strlen(from), nt = strlen(to), n = strlen(text);
	char *s = malloc(n - nf + nt + 1);
	if (!s)
		return NULL;
	memcpy(s, text, a);
	memcpy(s + a, to, nt);
	memcpy(s + a + nt, at + nf, n - a - nf + 1);
	return s;
}

const char *tu_write(const char *dir, const char *name, const char *text)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

char *tu_tmpdir(void)
{
	char tmpl[] = "/tmp/planner-test-XXXXXX";
	char *d = mkdtemp(tmpl);
	return d ? strdup(d) : NULL;
}

void tu_rmdir(char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(dir);
}

/* A copy of plan p with one random change. */
struct pl_plan *tu_mutate(const struct pl_graph *g, const struct pl_plan *p, uint64_t *s)
{
	struct pl_plan_builder *b = pl_builder_new(p->nops);
	uint32_t ns = p->step_off[p->nops], ne = p->evict_off[p->nops];
	int what = (int)(tu_rand(s) % 5);
	uint32_t victim_s = ns ? (uint32_t)(tu_rand(s) % ns) : 0;
	uint32_t victim_e = ne ? (uint32_t)(tu_rand(s) % ne) : 0;
	for (int32_t pos = 0; pos < p->nops; pos++) {
		for (uint32_t i = p->step_off[pos]; i < p->step_off[pos + 1]; i++) {
			if (what == 0 && i == victim_s)
				continue; /* drop a step */
			pl_builder_step(b, pos, p->steps[i].kind, p->steps[i].arg);
		}
		for (uint32_t i = p->evict_off[pos]; i < p->evict_off[pos + 1]; i++) {
			if (what == 1 && i == victim_e)
				continue; /* drop an eviction */
			int32_t at = pos;
			if (what == 2 && i == victim_e && pos + 1 < p->nops)
				at = pos + 1; /* evict later */
			pl_builder_evict(b, at, p->evict[i]);
		}
	}
	int32_t pos = (int32_t)(tu_rand(s) % (uint64_t)p->nops);
	int32_t buf = (int32_t)(tu_rand(s) % (uint64_t)g->nbufs);
	struct pl_plan *q;
	if (what == 3)
		pl_builder_evict(b, pos, buf); /* a random eviction */
	if (what == 4 && pos > 0) {
		/* a random step */
		/* (offload steps only into plans that offload) */
		int kind = (int)(tu_rand(s) % (p->offload_gbps > 0 ? PL_STEP_KINDS : 7));
		int32_t arg = kind == PL_STEP_REPLAY ? (int32_t)(tu_rand(s) % (uint64_t)pos) : buf;
		pl_builder_step(b, pos, kind, arg);
	}
	q = pl_builder_finish(b);
	q->offload_gbps = p->offload_gbps;
	/* the boundary list: kept, dropped, or one buffer added */
	int keep = what != 0 || tu_rand(s) % 2;
	q->boundary = malloc(sizeof(int32_t) * ((size_t)p->nboundary + 1));
	for (int32_t i = 0; keep && i < p->nboundary; i++)
		q->boundary[q->nboundary++] = p->boundary[i];
	if (tu_rand(s) % 8 == 0)
		q->boundary[q->nboundary++] = buf;
	return q;
}

struct rg_opts tu_mixed_opts(uint64_t seed)
{
	struct rg_opts o = {.layers = 2 + (int)(seed % 8),
	                    .side_writes = 1,
	                    .inplace = 1,
	                    .nonreplay = (int)(seed % 3 == 0),
	                    .dead = (int)(seed % 2),
	                    .partial = (int)(seed % 4 == 1),
	                    .shared = (int)(seed % 3 != 2),
	                    .reuse = (int)(seed % 5 >= 3)};
	return o;
}

const char tu_park_graph[] =
    "{\"format\": \"remat-graph\", \"version\": 1, \"buffers\": ["
    " {\"id\": 0, \"size\": 1000, \"persistent\": true, \"alloc_at\": -1, \"free_at\": -1},"
    " {\"id\": 1, \"size\": 100, \"alloc_at\": -1, \"free_at\": -1},"
    " {\"id\": 2, \"size\": 800, \"alloc_at\": 1, \"free_at\": 3},"
    " {\"id\": 3, \"size\": 50, \"alloc_at\": 1, \"free_at\": 3}],"
    " \"ops\": ["
    " {\"i\": 0, \"duration_ns\": 10, \"reads\": [], \"writes\": [1]},"
    " {\"i\": 1, \"duration_ns\": 10, \"reads\": [1], \"writes\": [2]},"
    " {\"i\": 2, \"duration_ns\": 10, \"reads\": [2], \"writes\": []},"
    " {\"i\": 3, \"duration_ns\": 10, \"reads\": [1], \"writes\": []}],"
    " \"end\": true}";

struct pl_graph *tu_shared_graph(void)
{
	const struct pl_buffer bufs[] = {
	    {.size = 100, .alloc_at = -1, .free_at = -1, .persistent = 1, .dead_across = 1},
	    {.size = 100, .alloc_at = -1, .free_at = -1, .persistent = 1, .dead_across = 1},
	    {.size = 150, .alloc_at = 2, .free_at = 3}};
	const struct tu_ref refs[] = {{0, 0, PL_REF_WRITE}, {1, 0, PL_REF_READ},
	                              {1, 1, PL_REF_WRITE}, {2, 2, PL_REF_WRITE},
	                              {3, 1, PL_REF_READ},  {4, 0, PL_REF_READ}};
	const struct tu_share sh[] = {{64, 0, 1}};
	return tu_hand_graph_shared("sh", 5, bufs, 3, refs, sizeof(refs) / sizeof(refs[0]), 10, 0,
	                            sh, 1);
}

struct pl_plan *tu_shared_plan(int both)
{
	struct pl_plan_builder *b = pl_builder_new(5);
	pl_builder_evict(b, 1, 0);
	int32_t at = both ? 3 : 4;
	pl_builder_step(b, at, PL_STEP_MAP, 0);
	pl_builder_step(b, at, PL_STEP_REPLAY, 0);
	if (both) {
		pl_builder_evict(b, 1, 1);
		pl_builder_step(b, 3, PL_STEP_MAP, 1);
		pl_builder_step(b, 3, PL_STEP_REPLAY, 1);
	}
	return pl_builder_finish(b);
}
