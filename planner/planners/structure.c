/*
 * structure.c — structure first: the forward part of an iteration as a
 * chain of stages, and a rotor-style dynamic program over the stage
 * boundaries.
 *
 * Stages.  A cut is a position of the forward part (before the peak)
 * that the fewest activation versions cross (written before it, read by
 * a forward op at or after it): between two transformer layers, two
 * ResNet blocks, two steps of a chain, one version crosses.  The
 * stretches between cuts are the stages; stages with the same kernels,
 * durations and buffer shapes are one distinct segment (the repeated
 * blocks), found by hashing.
 *
 * Inside a stage (the exact model, solved once per distinct segment and
 * reused for each repeat): every set of its activations that can be
 * dropped one by one (each rebuilt before its backward use by replaying
 * its writer while the others it reads stay), enumerated, and the
 * Pareto-best sets (bytes saved, recompute cost) kept as the stage's
 * options.
 *
 * Along the chain: a stage is kept (with one of its options) or belongs
 * to a run of consecutive stages whose activations are all dropped and
 * rebuilt together from the run's input (its checkpoint) when the
 * backward pass reaches them, each op replayed once.  The program walks
 * the stages in order with the bytes dropped so far as its state: before
 * a stage's forward ops and during its backward ops only what earlier
 * stages dropped is away, so each stage's peaks give the least that must
 * have been dropped before it.  Its answer is made into candidates (a
 * run is one set candidate, built on demand and kept for later budgets),
 * then a plan, then evaluated; the memory it assumed is checked there,
 * and a plan over the budget is planned again for a tighter one.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define STAGES_MAX 320 /* more stages are merged into this many */
#define ITEMS_MAX  12  /* activations per stage enumerated exactly */
#define OPTS_MAX   12  /* options kept per stage */
#define BINS       256 /* levels of dropped bytes in the program */
#define INF        INT64_MAX

struct opt {
	int64_t bytes, cost;
	uint32_t mask; /* of the stage's items */
};

struct pl_struct {
	const struct pl_graph *g;
	struct pl_cands *cs;
	struct cindex ix;
	struct recipe rc;
	struct cbuild cb;
	struct pl_setb sb; /* over cb, ix, rc: the runs' candidates */
	int32_t peak_at, L, ndistinct;
	int32_t *start;         /* L + 1 stage starts; start[L] = peak_at */
	int64_t *W;             /* L x L: bytes a run i..j drops */
	int64_t *rcost;         /* L + 1 prefix sums of the stages' replay cost */
	int64_t *fneed, *bneed; /* per stage: peaks of its forward and backward positions */
	int64_t fin_need;       /* peak between the forward part and the first rebuild */
	int32_t *items;         /* per stage: single candidates, ITEMS_MAX each */
	int32_t *nitems;
	struct opt *opts; /* per stage: OPTS_MAX options */
	int32_t *nopts;
	int32_t *longs;     /* gap ids of activations (held over the peak) */
	int32_t *lws, *las; /* per such gap: stage of its writer, of its last forward use */
	int32_t nlong;
	int32_t *run_cand; /* L x L: candidate of run i..j; -1 not built, -2 impossible */
	int32_t *tg;
	size_t cap_tg;
};

static int32_t stage_of(const struct pl_struct *s, int32_t p)
{
	/* the last stage with start <= p; stage 0 starts at op 0 */
	size_t i = remat_search_after(s->start, (size_t)s->L, remat_key_i32, remat_key_signed(p));
	return i ? (int32_t)i - 1 : 0;
}

/* Stage starts: the cuts the fewest versions cross; 0 when fewer than
 * three stages come out. */
static int find_stages(struct pl_struct *s)
{
	const struct pl_graph *g = s->g;
	int32_t P = s->peak_at;
	int32_t *cross = calloc((size_t)P + 2, sizeof(int32_t));
	if (!cross)
		return -1;
	for (int32_t b = 0; b < g->nbufs; b++) {
		if (!pl_buf_evictable(&g->bufs[b]))
			continue;
		int32_t w = -1, r = -1;
		for (uint32_t u = s->ix.use_off[b]; u <= s->ix.use_off[b + 1]; u++) {
			int32_t k = u < s->ix.use_off[b + 1] ? s->ix.uses[u] : INT32_MAX, ver = 0;
			uint32_t f = k < INT32_MAX ? pl_ref_flags(g, k, b, &ver) : PL_REF_WRITE;
			if ((f & PL_REF_READ) && k < P && ver >= 0)
				r = k;
			if (f & PL_REF_WRITE) {
				if (w >= 0 && r > w) {
					cross[w + 1]++;
					cross[r + 1]--;
				}
				w = k < P ? k : -1;
				r = -1;
			}
		}
	}
	int32_t minc = INT32_MAX, acc = 0;
	for (int32_t p = 0; p <= P; p++) {
		acc += cross[p];
		cross[p] = acc;
		if (p >= 1 && p < P && acc < minc)
			minc = acc;
	}
	int32_t thr = minc < 1 ? 1 : minc, n = 0;
	for (int32_t p = 1; p < P; p++)
		n += cross[p] <= thr;
	int32_t every = n / STAGES_MAX + 1, k = 0;
	s->start = malloc(sizeof(int32_t) * ((size_t)n / (size_t)every + 3));
	if (!s->start) {
		free(cross);
		return -1;
	}
	s->start[s->L++] = 0;
	for (int32_t p = 1; p < P; p++)
		if (cross[p] <= thr && ++k % every == 0)
			s->start[s->L++] = p;
	s->start[s->L] = P;
	free(cross);
	return s->L >= 3;
}

/* A stage's content, for finding repeats: op names, durations, and each
 * reference's flags, bytes and, for a buffer written in the stage, the
 * offset of its writer. */
static uint64_t stage_hash(const struct pl_struct *s, int32_t t)
{
	const struct pl_graph *g = s->g;
	uint64_t h = PL_FNV_OFFSET;
	for (int32_t k = s->start[t]; k < s->start[t + 1]; k++) {
		const struct pl_op *op = &g->ops[k];
		h = pl_fnv(h, op->name, strlen(op->name) + 1);
		h = pl_fnv(h, &op->duration_ns, sizeof(op->duration_ns));
		for (uint32_t i = 0; i < op->nrefs; i++) {
			const struct pl_ref *r = &g->refs[op->ref_off + i];
			int64_t v[3] = {r->flags, g->bufs[r->buf].rounded,
			                r->ver >= s->start[t] ? r->ver - s->start[t] : -1};
			h = pl_fnv(h, v, sizeof(v));
		}
	}
	return h;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_opt(const void *a, const void *b)
{
	const struct opt *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->cost < y->cost ? -1 : x->cost > y->cost;
}

/* The Pareto-best sets of a stage's items (each a single candidate),
 * all 2^n enumerated; masks from a stage with the same content are
 * reused, only their bytes and costs are this stage's. */
static int stage_options(struct pl_struct *s, int32_t t, const struct opt *same, int32_t nsame)
{
	const struct pl_cands *cs = s->cs;
	int32_t n = s->nitems[t], *it = &s->items[(size_t)t * ITEMS_MAX];
	struct opt *out = &s->opts[(size_t)t * OPTS_MAX];
	int64_t bytes[ITEMS_MAX], cost[ITEMS_MAX];
	uint32_t clash[ITEMS_MAX] = {0};
	for (int32_t i = 0; i < n; i++) {
		bytes[i] = pl_cand_bytes(cs, it[i]);
		cost[i] = cs->c[it[i]].cost;
		const struct pl_cand *x = &cs->c[it[i]];
		for (uint32_t f = 0; f < x->nforbid; f++)
			for (int32_t k = 0; k < n; k++)
				if (cs->gap_list[cs->c[it[k]].gap_off] ==
				    cs->forbid_list[x->forbid_off + f])
					clash[i] |= 1u << k;
	}
	if (same) {
		for (int32_t o = 0; o < nsame; o++) {
			out[o] = (struct opt){0, 0, same[o].mask};
			for (int32_t i = 0; i < n; i++)
				if (same[o].mask & (1u << i)) {
					out[o].bytes += bytes[i];
					out[o].cost += cost[i];
				}
		}
		s->nopts[t] = nsame;
		return 0;
	}
	uint32_t nm = 1u << n;
	struct opt *all = malloc(sizeof(*all) * nm);
	if (!all)
		return -1;
	uint32_t na = 0;
	for (uint32_t m = 0; m < nm; m++) {
		int64_t b = 0, c = 0;
		int ok = 1;
		for (int32_t i = 0; i < n && ok; i++)
			if (m & (1u << i)) {
				ok = !(clash[i] & m);
				b += bytes[i];
				c += cost[i];
			}
		if (ok && (m == 0 || b > 0))
			all[na++] = (struct opt){b, c, m};
	}
	qsort(all, na, sizeof(*all), cmp_opt);
	/* Pareto front: by bytes descending, each cheaper than all before */
	uint32_t nf = 0;
	for (uint32_t i = 0; i < na; i++)
		if (nf == 0 || all[i].cost < all[nf - 1].cost)
			all[nf++] = all[i];
	/* thinned evenly, the largest and the empty set always in */
	int32_t k = 0;
	for (int32_t o = 0; o < OPTS_MAX && nf; o++) {
		uint32_t i = (uint32_t)((uint64_t)o * (nf - 1) / (OPTS_MAX - 1));
		if (k == 0 || out[k - 1].mask != all[i].mask)
			out[k++] = all[i];
	}
	s->nopts[t] = k;
	free(all);
	return 0;
}

static int cmp_item(const void *a, const void *b, void *arg)
{
	const struct pl_struct *s = arg;
	const struct pl_gap *x =
	    &s->cs->gaps[s->cs->gap_list[s->cs->c[*(const int32_t *)a].gap_off]];
	const struct pl_gap *y =
	    &s->cs->gaps[s->cs->gap_list[s->cs->c[*(const int32_t *)b].gap_off]];
	if (x->ver != y->ver)
		return x->ver < y->ver ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return x->buf < y->buf ? -1 : x->buf > y->buf;
}

void pl_struct_free(struct pl_struct *s)
{
	if (!s)
		return;
	pl_cindex_free(&s->ix);
	pl_recipe_free(&s->rc);
	free(s->start);
	free(s->W);
	free(s->rcost);
	free(s->fneed);
	free(s->bneed);
	free(s->items);
	free(s->nitems);
	free(s->opts);
	free(s->nopts);
	free(s->longs);
	free(s->lws);
	free(s->las);
	free(s->run_cand);
	free(s->sb.rg.r);
	free(s->tg);
	free(s);
}

/* Scratch of pl_struct_build: per stage the first backward position
 * any of its activations is needed at (bstart), per gap its single
 * candidate, and the stages' (hash, stage) pairs. */
struct build {
	int32_t *bstart, *single;
	uint64_t *hs;
};

static int struct_alloc(struct pl_struct *s, struct build *bd)
{
	const struct pl_cands *cs = s->cs;
	int32_t L = s->L;
	size_t LL = (size_t)L * (size_t)L, ng = (size_t)cs->ngaps + 1;
	s->W = calloc(LL, sizeof(int64_t));
	s->run_cand = malloc(LL * sizeof(int32_t));
	s->rcost = calloc((size_t)L + 1, sizeof(int64_t));
	s->fneed = malloc(sizeof(int64_t) * (size_t)L);
	s->bneed = malloc(sizeof(int64_t) * (size_t)L);
	s->items = malloc(sizeof(int32_t) * (size_t)L * ITEMS_MAX);
	s->nitems = calloc((size_t)L, sizeof(int32_t));
	s->opts = malloc(sizeof(struct opt) * (size_t)L * OPTS_MAX);
	s->nopts = calloc((size_t)L, sizeof(int32_t));
	s->longs = malloc(sizeof(int32_t) * ng);
	s->lws = malloc(sizeof(int32_t) * ng);
	s->las = malloc(sizeof(int32_t) * ng);
	bd->bstart = malloc(sizeof(int32_t) * (size_t)L);
	bd->single = malloc(sizeof(int32_t) * ng);
	bd->hs = malloc(sizeof(uint64_t) * (size_t)L * 2);
	if (!s->W || !s->run_cand || !s->rcost || !s->fneed || !s->bneed || !s->items ||
	    !s->nitems || !s->opts || !s->nopts || !s->longs || !s->lws || !s->las || !bd->bstart ||
	    !bd->single || !bd->hs)
		return -1;
	for (size_t i = 0; i < LL; i++)
		s->run_cand[i] = -1;
	return 0;
}

/* Each stage's replay cost (prefix sums) and forward peak. */
static void stage_costs(struct pl_struct *s, struct build *bd)
{
	const struct pl_graph *g = s->g;
	for (int32_t t = 0; t < s->L; t++) {
		int64_t c = 0, f = 0;
		for (int32_t k = s->start[t]; k < s->start[t + 1]; k++) {
			c += g->ops[k].replayable ? g->ops[k].duration_ns : 0;
			f = g->live[k] > f ? g->live[k] : f;
		}
		s->rcost[t + 1] = s->rcost[t] + c;
		s->fneed[t] = f;
		bd->bstart[t] = g->nops;
	}
}

/* Activations: versions written in the forward part and held over the
 * peak, by replayable ops; W[i][j]: the bytes of those written at stage
 * >= i and last used in the forward part at <= j. */
static void activations(struct pl_struct *s, struct build *bd)
{
	const struct pl_graph *g = s->g;
	const struct pl_cands *cs = s->cs;
	int32_t L = s->L, P = s->peak_at;
	for (int32_t q = 0; q < cs->ngaps; q++)
		bd->single[q] = -1;
	for (int32_t j = 0; j < cs->ncands; j++)
		if (cs->c[j].ngaps == 1 && !cs->c[j].segment && cs->c[j].at >= 0)
			bd->single[cs->gap_list[cs->c[j].gap_off]] = j;
	for (int32_t q = 0; q < cs->ngaps; q++) {
		const struct pl_gap *gp = &cs->gaps[q];
		if (gp->dead || gp->boundary || gp->ver < 0 || gp->ver >= P || gp->a >= P ||
		    gp->c <= P || !g->ops[gp->ver].replayable)
			continue;
		int32_t ws = stage_of(s, gp->ver), as = stage_of(s, gp->a);
		s->longs[s->nlong] = q;
		s->lws[s->nlong] = ws;
		s->las[s->nlong++] = as;
		s->W[(size_t)ws * L + as] += gp->bytes;
		if (gp->c < bd->bstart[ws])
			bd->bstart[ws] = gp->c;
		/* kept stages drop only what does not leave them */
		if (as == ws && bd->single[q] >= 0 && s->nitems[ws] < ITEMS_MAX)
			s->items[(size_t)ws * ITEMS_MAX + s->nitems[ws]++] = bd->single[q];
	}
	for (int32_t i = L - 1; i >= 0; i--) {
		int64_t row = 0;
		for (int32_t j = 0; j < L; j++) {
			row += s->W[(size_t)i * L + j];
			s->W[(size_t)i * L + j] =
			    row + (i + 1 < L ? s->W[(size_t)(i + 1) * L + j] : 0);
		}
	}
}

/* Backward positions by stage: from the first rebuild any stage up to t
 * may need on, to the one of the stages before it; then what lies
 * between the forward part and the first rebuild. */
static void backward_needs(struct pl_struct *s, const struct build *bd)
{
	const struct pl_graph *g = s->g;
	int32_t hi = g->nops, lo = g->nops;
	for (int32_t t = 0; t < s->L; t++) {
		lo = bd->bstart[t] < lo ? bd->bstart[t] : lo;
		int64_t b = 0;
		for (int32_t p = lo; p < hi; p++)
			b = g->live[p] > b ? g->live[p] : b;
		s->bneed[t] = b;
		hi = lo;
	}
	s->fin_need = 0;
	for (int32_t p = s->peak_at; p < hi; p++)
		s->fin_need = g->live[p] > s->fin_need ? g->live[p] : s->fin_need;
}

/* The options of every stage, worked out once per distinct stage. */
static int all_options(struct pl_struct *s, struct build *bd)
{
	int32_t L = s->L;
	uint64_t *hs = bd->hs;
	for (int32_t t = 0; t < L; t++) {
		int32_t *it = &s->items[(size_t)t * ITEMS_MAX];
		qsort_r(it, s->nitems[t], sizeof(int32_t), cmp_item, s);
		hs[2 * t] = stage_hash(s, t);
		hs[2 * t + 1] = (uint64_t)t;
	}
	qsort(hs, L, 2 * sizeof(uint64_t), cmp_u64);
	for (int32_t i = 0; i < L; i++) {
		int32_t t = (int32_t)hs[2 * i + 1];
		int repeat = i > 0 && hs[2 * i] == hs[2 * i - 2];
		if (!repeat)
			s->ndistinct++;
		int32_t t0 = repeat ? (int32_t)hs[2 * i - 1] : -1;
		if (repeat) /* the earlier one of the pair carries the masks on */
			hs[2 * i + 1] = (uint64_t)t0;
		if (stage_options(s, t, repeat ? &s->opts[(size_t)t0 * OPTS_MAX] : NULL,
		                  repeat ? s->nopts[t0] : 0))
			return -1;
	}
	return 0;
}

/* The chain's stages and what the program needs of them: 0, or 1 when
 * the graph has none, -1 out of memory. */
static int chain(struct pl_struct *s)
{
	const struct pl_graph *g = s->g;
	for (int32_t p = 1; p < g->nops; p++)
		if (g->live[p] > g->live[s->peak_at])
			s->peak_at = p;
	if (pl_cindex_build(g, &s->ix) || pl_cindex_gaps(g, s->cs, &s->ix) ||
	    pl_recipe_init(&s->rc, g))
		return -1;
	s->rc.cost_limit = 0; /* a run replays a whole stretch: no cap */
	int r = s->peak_at < 4 ? 0 : find_stages(s);
	if (r <= 0)
		return r < 0 ? -1 : 1; /* no chain: the flat model only */
	struct build bd = {0};
	r = struct_alloc(s, &bd);
	if (!r) {
		stage_costs(s, &bd);
		activations(s, &bd);
		backward_needs(s, &bd);
		r = all_options(s, &bd);
	}
	free(bd.bstart);
	free(bd.single);
	free(bd.hs);
	return r;
}

int pl_struct_build(const struct pl_graph *g, struct pl_cands *cs, int strict,
                    struct pl_struct **out)
{
	*out = NULL;
	struct pl_struct *s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->g = g;
	s->cs = cs;
	s->cb.cs = cs;
	s->cb.cap_c = (size_t)cs->ncands;
	s->cb.cap_r = cs->nranges;
	s->cb.cap_g = cs->ngap_list;
	s->cb.cap_f = cs->nforbid_list;
	s->cb.cap_s = cs->nsteps;
	s->cb.cap_gaps = (size_t)cs->ngaps;
	s->sb =
	    (struct pl_setb){.cb = &s->cb, .g = g, .ix = &s->ix, .rc = &s->rc, .strict = strict};
	int r = chain(s);
	if (r) {
		pl_struct_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int32_t pl_struct_stages(const struct pl_struct *s, int32_t *distinct)
{
	*distinct = s->ndistinct;
	return s->L;
}

/* The candidate of run i..j, built on first use; -1 when impossible,
 * -2 out of memory. */
static int32_t run_cand(struct pl_struct *s, int32_t i, int32_t j)
{
	int32_t *slot = &s->run_cand[(size_t)i * s->L + j];
	if (*slot != -1)
		return *slot == -2 ? -1 : *slot;
	int32_t nt = 0, c = INT32_MAX;
	for (int32_t k = 0; k < s->nlong; k++)
		if (s->lws[k] >= i && s->lws[k] <= j && s->las[k] <= j) {
			if (REMAT_GROW(s->tg, nt, s->cap_tg))
				return -2;
			s->tg[nt++] = s->longs[k];
			int32_t cc = s->cs->gaps[s->longs[k]].c;
			c = cc < c ? cc : c;
		}
	if (!nt) {
		*slot = -2;
		return -1;
	}
	int32_t r = pl_set_cand(&s->sb, s->tg, nt, c, 1);
	if (r == -2)
		return -2;
	if (r >= 0 && pl_cands_reindex(s->cs))
		return -2;
	*slot = r >= 0 ? r : -2;
	return r >= 0 ? r : -1;
}

/* How the program reached stage t + 1: a run from stage `from` to t, or
 * stage t kept with option -1 - from. */
struct choice {
	int32_t prev; /* bin before */
	int32_t from;
};

/* The program's table: f[t * nb + d], the least cost to reach stage t
 * with d units of bytes dropped, and how (ch); where the candidates
 * chosen go (sel, nsel, cap). */
struct dp {
	struct pl_struct *s;
	int64_t budget, unit;
	size_t nb;
	int64_t *f;
	struct choice *ch;
	int32_t **sel, *nsel;
	size_t *cap;
};

static void relax(struct dp *dp, size_t at, int64_t cost, struct choice c)
{
	if (cost < dp->f[at]) {
		dp->f[at] = cost;
		dp->ch[at] = c;
	}
}

/* From stage t with d units dropped: stage t kept (one of its options),
 * or a run t..j rebuilt from its input. */
static void step(struct dp *dp, int32_t t, int32_t d)
{
	const struct pl_struct *s = dp->s;
	int32_t L = s->L;
	int64_t nb = (int64_t)dp->nb, budget = dp->budget;
	int64_t base = dp->f[(size_t)t * dp->nb + d];
	int64_t have = (int64_t)d * dp->unit; /* at least this much dropped before t */
	if (base == INF || have + budget < s->fneed[t])
		return;
	if (have + budget >= s->bneed[t])
		for (int32_t o = 0; o < s->nopts[t]; o++) {
			const struct opt *op = &s->opts[(size_t)t * OPTS_MAX + o];
			int64_t nd = d + op->bytes / dp->unit;
			nd = nd < nb - 1 ? nd : nb - 1;
			relax(dp, (size_t)(t + 1) * dp->nb + (size_t)nd, base + op->cost,
			      (struct choice){d, -1 - o});
		}
	int64_t bmax = 0;
	for (int32_t j = t; j < L; j++) {
		if (s->run_cand[(size_t)t * L + j] == -2)
			continue;
		bmax = s->bneed[j] > bmax ? s->bneed[j] : bmax;
		if (have + budget < bmax)
			break;
		if (j > t && have + s->W[(size_t)t * L + j - 1] + budget < s->fneed[j])
			break;
		int64_t nd = d + s->W[(size_t)t * L + j] / dp->unit;
		nd = nd < nb - 1 ? nd : nb - 1;
		relax(dp, (size_t)(j + 1) * dp->nb + (size_t)nd,
		      base + s->rcost[j + 1] - s->rcost[t], (struct choice){d, t});
	}
}

static int add_sel(struct dp *dp, int32_t x)
{
	if (REMAT_GROW(*dp->sel, *dp->nsel, *dp->cap))
		return -1;
	(*dp->sel)[(*dp->nsel)++] = x;
	return 0;
}

/* Back along the choices from the end at bestd, into candidates: 0, 2
 * a run cannot be rebuilt, -1 out of memory. */
static int back(struct dp *dp, int32_t bestd)
{
	struct pl_struct *s = dp->s;
	for (int32_t t = s->L, d = bestd; t > 0;) {
		struct choice c = dp->ch[(size_t)t * dp->nb + d];
		int32_t from = c.from >= 0 ? c.from : t - 1;
		if (c.from >= 0) {
			int32_t x = run_cand(s, from, t - 1);
			if (x == -2)
				return -1;
			if (x == -1)
				return 2; /* that run cannot be rebuilt: plan again without it */
			if (add_sel(dp, x))
				return -1;
		} else {
			uint32_t m = s->opts[(size_t)from * OPTS_MAX + (-1 - c.from)].mask;
			for (int32_t i = 0; i < s->nitems[from]; i++)
				if ((m & (1u << i)) &&
				    add_sel(dp, s->items[(size_t)from * ITEMS_MAX + i]))
					return -1;
		}
		d = c.prev;
		t = from;
	}
	return 0;
}

/* The program for a budget; appends the candidates chosen to *sel (n),
 * grown as needed.  0 planned, 1 no way found, 2 a run it chose cannot
 * be rebuilt (it is left out from now on: plan again), -1 out of memory. */
int pl_struct_plan(struct pl_struct *s, int64_t budget, int32_t **sel, int32_t *nsel, size_t *cap)
{
	int32_t L = s->L;
	int64_t total = s->W[L - 1]; /* every activation */
	struct dp dp = {.s = s, .budget = budget, .unit = total / BINS + 1, .nb = BINS + 2};
	dp.sel = sel;
	dp.nsel = nsel;
	dp.cap = cap;
	size_t nb = dp.nb, n = ((size_t)L + 1) * nb;
	dp.f = malloc(sizeof(int64_t) * n);
	dp.ch = malloc(sizeof(*dp.ch) * n);
	int rc = -1;
	if (dp.f && dp.ch) {
		for (size_t i = 0; i < n; i++)
			dp.f[i] = INF;
		dp.f[0] = 0;
		for (int32_t t = 0; t < L; t++)
			for (int32_t d = 0; d < (int32_t)nb; d++)
				step(&dp, t, d);
		int32_t bestd = -1;
		for (int32_t d = 0; d < (int32_t)nb; d++) {
			size_t at = (size_t)L * nb + d;
			if (dp.f[at] != INF && (int64_t)d * dp.unit + budget >= s->fin_need &&
			    (bestd < 0 || dp.f[at] < dp.f[(size_t)L * nb + bestd]))
				bestd = d;
		}
		rc = bestd < 0 ? 1 : back(&dp, bestd);
	}
	free(dp.f);
	free(dp.ch);
	return rc;
}
