/*
 * ilp.c — the compact MILP, solved with GLPK.
 *
 * One binary per candidate (buffer version, idle gap, rebuild recipe);
 * minimise the summed recompute time subject to
 *   - each gap taken by at most one candidate,
 *   - a chosen candidate's rebuild reads buffers that stay resident: for
 *     each forbidden gap f of candidate X, x_X + sum(candidates taking f) <= 1,
 *   - memory at the positions where a peak can occur: between two
 *     consecutive range boundaries the set of candidates covering a
 *     position is fixed, so only the highest baseline point of each such
 *     interval needs a row, plus each rebuild position with its transients.
 * Checkmate's MILP has O(n^2) variables; this one has O(candidates).
 *
 * The search (ilp_search.c): a dive from the LP relaxation (keep what it
 * takes whole, solve the rest), branch and bound from the better of that
 * and the caller's warm start for half the time, then neighbourhoods of
 * the incumbent for the rest.
 */
#include "ilp_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mat {
	int *ia, *ja;
	double *ar;
	size_t n, cap_ia, cap_ja, cap_ar;
};

static int put(struct mat *m, int i, int j, double v)
{
	/* GLPK arrays are 1-based: element n + 1 is the new one */
	if (REMAT_GROW(m->ia, m->n + 1, m->cap_ia) || REMAT_GROW(m->ja, m->n + 1, m->cap_ja) ||
	    REMAT_GROW(m->ar, m->n + 1, m->cap_ar))
		return -1;
	m->n++;
	m->ia[m->n] = i;
	m->ja[m->n] = j;
	m->ar[m->n] = v;
	return 0;
}

/* Bytes saved in the model's units.  Below one unit a coefficient only
 * hurts the LP's numerics (GLPK has aborted on a ratio of 1e9), so a
 * saving that small counts as none and an addition as a whole unit: the
 * model stays an upper bound of the memory. */
static double units(int64_t bytes, double unit)
{
	double v = (double)bytes / unit;
	if (v > -1 && v < 1)
		return v > 0 ? 0 : v < 0 ? -1 : 0;
	return v;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

/* The model being built and solved: the task, its memory positions
 * (rows, nmem; row_of[p]: the row of position p, -1 none), the
 * transients and additions at each position, the unit of bytes, the
 * columns of the savings (scol), of M (mcol, min-peak) and of the shared
 * chunks (zcol), the matrix and scratch for a candidate's coefficients
 * (coef, touched, mark: the candidate that touched an entry last). */
struct model {
	const struct pl_ilp_task *t;
	const struct pl_graph *g;
	const struct pl_cands *cs;
	int64_t budget; /* -1 in min-peak mode: every interval gets a row */
	int minpeak;
	int32_t N, n, nmem;
	int64_t *trans_at, *added;
	int32_t *rows, *row_of;
	double unit;
	int32_t scol, mcol, zcol;
	double *coef;
	int32_t *touched, *mark;
	struct mat m;
	struct ilp_shared shx;
	glp_prob *lp;
	double *warm_x;
	double t0; /* the time limit counts from here: building the model is part of it */
	int term;  /* GLPK's terminal output before the solve */
};

/* Positions that need a memory row; returns how many (or -1).  added:
 * the most all candidates together add at each position besides their
 * transients (stashes), constant between two range boundaries. */
static int32_t peak_positions(struct model *md)
{
	const struct pl_graph *g = md->g;
	const struct pl_cands *cs = md->cs;
	int32_t n = g->nops, nb = 0, *rows = md->rows;
	int64_t budget = md->budget, *trans_at = md->trans_at, *added = md->added;
	int32_t *bnd = malloc(sizeof(int32_t) * (2 * (size_t)cs->nranges + cs->ncands + 2));
	if (!bnd)
		return -1;
	bnd[nb++] = 0;
	for (uint32_t r = 0; r < cs->nranges; r++) {
		bnd[nb++] = cs->ranges[r].lo;
		if (cs->ranges[r].hi + 1 < n)
			bnd[nb++] = cs->ranges[r].hi + 1;
	}
	for (int32_t j = 0; j < cs->ncands; j++)
		if (cs->c[j].at >= 0)
			bnd[nb++] = cs->c[j].at;
	qsort(bnd, nb, sizeof(int32_t), cmp_i32);
	int32_t k = 0, nrows = 0;
	for (int32_t i = 0; i < nb; i++)
		if (k == 0 || bnd[k - 1] != bnd[i])
			bnd[k++] = bnd[i];
	for (int32_t i = 0; i < k; i++) {
		int32_t lo = bnd[i], hi = i + 1 < k ? bnd[i + 1] - 1 : n - 1, best = lo;
		for (int32_t p = lo + 1; p <= hi; p++)
			if (g->live[p] > g->live[best])
				best = p;
		if (trans_at[lo] > 0 && g->live[lo] + added[lo] + trans_at[lo] > budget)
			rows[nrows++] = lo;
		if (g->live[best] + added[lo] > budget &&
		    !(best == lo && nrows && rows[nrows - 1] == lo))
			rows[nrows++] = best;
	}
	free(bnd);
	return nrows;
}

/* Index of the first sorted position >= p (nmem if none). */
static int32_t first_at_or_after(const int32_t *rows, int32_t nmem, int32_t p)
{
	return (int32_t)remat_search_from(rows, (size_t)nmem, remat_key_i32, remat_key_signed(p));
}

static int64_t model_peak(const struct pl_graph *g, const struct pl_cands *cs, const uint8_t *sel)
{
	int64_t *curve = malloc(sizeof(int64_t) * g->nops), peak = 0;
	if (!curve)
		return g->baseline_peak;
	pl_sel_curve(g, cs, sel, curve);
	for (int32_t p = 0; p < g->nops; p++)
		peak = curve[p] > peak ? curve[p] : peak;
	free(curve);
	return peak;
}

/* Candidate j's ranges (fix 0), or the corrections that take back the
 * shares of shared chunks its ranges count (fix 1, ilp_shared.c). */
static const struct pl_range *ranges_of(const struct pl_cands *cs, const struct ilp_shared *shx,
                                        int32_t j, int fix, uint32_t *n)
{
	if (!fix) {
		*n = cs->c[j].nranges;
		return &cs->ranges[cs->c[j].range_off];
	}
	*n = shx->fix_off ? shx->fix_off[j + 1] - shx->fix_off[j] : 0;
	return shx->fix_off ? &shx->fix[shx->fix_off[j]] : NULL;
}

/* A selection as a full solution vector (1-based): x, the bytes it
 * saves at each memory position, M (min-peak mode), into md->warm_x. */
static void warm_vector(const struct model *md, const uint8_t *sel, int minpeak)
{
	const struct pl_cands *cs = md->cs;
	const struct ilp_shared *shx = &md->shx;
	int32_t N = cs->ncands, nmem = md->nmem;
	double *warm_x = md->warm_x, *sv = warm_x + N + 1;
	memset(warm_x, 0, sizeof(double) * ((size_t)N + nmem + 2 + shx->nz));
	for (int32_t j = 0; j < N; j++) {
		if (!sel[j])
			continue;
		warm_x[j + 1] = 1.0;
		for (int fix = 0; fix < 2; fix++) {
			uint32_t nr;
			const struct pl_range *rgs = ranges_of(cs, shx, j, fix, &nr);
			for (uint32_t k = 0; k < nr; k++) {
				const struct pl_range *rg = &rgs[k];
				int32_t first = first_at_or_after(md->rows, nmem, rg->lo);
				int32_t end = first_at_or_after(md->rows, nmem, rg->hi + 1);
				if (first < end) { /* a difference array, summed below */
					sv[first] += units(rg->bytes, md->unit);
					if (end < nmem)
						sv[end] -= units(rg->bytes, md->unit);
				}
			}
		}
	}
	for (int32_t i = 1; i < nmem; i++)
		sv[i] += sv[i - 1];
	if (minpeak)
		warm_x[N + nmem + 1] = (double)model_peak(md->g, cs, sel) / md->unit;
	pl_ilp_shared_warm(md->g, shx, md->rows, sel, warm_x + N + nmem + (minpeak ? 1 : 0) + 1);
}

/* The shared chunks' columns (ilp_shared.c): z(s, i) in [0, 1] saves
 * group s's bytes in memory row i, and for each buffer b of s a row
 * z(s, i) - sum of the candidates keeping b out at i <= 0. */
static int shared_rows(struct model *md)
{
	const struct pl_graph *g = md->g;
	const struct ilp_shared *shx = &md->shx;
	for (size_t k = 0; k < shx->nz; k++) {
		const struct pl_shared *gs = &g->shared[shx->z[k].group];
		int32_t p = md->rows[shx->z[k].row], col = md->zcol + (int32_t)k;
		glp_set_col_bnds(md->lp, col, GLP_DB, 0, 1);
		for (int32_t i = shx->z[k].row; i <= shx->z[k].last; i++)
			if (put(&md->m, md->nmem + i + 1, col, units(gs->bytes, md->unit)))
				return -1;
		for (uint32_t e = 0; e < gs->n; e++) {
			int32_t b = g->shared_bufs[gs->off + e], row = glp_add_rows(md->lp, 1),
			        last = -1;
			glp_set_row_bnds(md->lp, row, GLP_UP, 0, 0);
			if (put(&md->m, row, col, 1))
				return -1;
			/* (sorted by candidate: one entry each) */
			for (uint32_t v = shx->ev_off[b]; v < shx->ev_off[b + 1]; v++) {
				const struct ilp_evict *ev = &shx->ev[v];
				if (ev->lo <= p && p <= ev->hi && ev->cand != last) {
					if (put(&md->m, row, ev->cand + 1, -1))
						return -1;
					last = ev->cand;
				}
			}
		}
	}
	return 0;
}

/* The memory positions that need a row (md->nmem; -1 out of memory),
 * after the transients and additions at each position. */
static int memory_positions(struct model *md)
{
	const struct pl_cands *cs = md->cs;
	int32_t N = md->N, n = md->n;
	md->trans_at = calloc((size_t)n, sizeof(int64_t));
	md->added = malloc(sizeof(int64_t) * (size_t)n);
	md->rows = malloc(sizeof(int32_t) * (4 * (size_t)cs->nranges + 2 * (size_t)N + 4));
	md->row_of = malloc(sizeof(int32_t) * (size_t)n);
	if (!md->trans_at || !md->added || !md->rows || !md->row_of)
		return -1;
	for (int32_t j = 0; j < N; j++)
		if (cs->c[j].at >= 0)
			md->trans_at[cs->c[j].at] += cs->c[j].transient;
	pl_added_bytes(md->g, cs, md->added);
	for (int32_t p = 0; p < n; p++)
		md->added[p] -= md->trans_at[p];
	md->nmem = peak_positions(md);
	return md->nmem < 0 ? -1 : 0;
}

/* Columns: x_j (1..N), s_i = bytes saved at memory position i
 * (N+1..N+nmem), M (min-peak mode), the shared chunks' z.  Rows: link
 * rows 1..nmem telescope s along the positions (s_i - s_{i-1} = ranges
 * entering at i - ranges leaving), so a range costs two non-zeros however
 * many positions it spans; memory rows nmem+1..2 nmem bound s_i. */
static int columns(struct model *md)
{
	const struct pl_graph *g = md->g;
	int32_t N = md->N, nmem = md->nmem, minpeak = md->minpeak;
	md->scol = N + 1;
	md->mcol = N + nmem + 1;
	md->zcol = N + nmem + (minpeak ? 1 : 0) + 1;
	glp_prob *lp = md->lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_cols(lp, N + nmem + (minpeak ? 1 : 0) + (int)md->shx.nz);
	for (int32_t j = 0; j < N; j++) {
		glp_set_col_kind(lp, j + 1, GLP_BV);
		glp_set_obj_coef(lp, j + 1, minpeak ? 0 : (double)md->cs->c[j].cost);
	}
	for (int32_t i = 0; i < nmem; i++)
		glp_set_col_bnds(lp, md->scol + i, GLP_FR, 0,
		                 0); /* a stash saves less than nothing */
	if (minpeak) {
		glp_set_col_bnds(lp, md->mcol, GLP_LO, 0, 0);
		glp_set_obj_coef(lp, md->mcol, 1);
	}
	for (int32_t p = 0; p < md->n; p++)
		md->row_of[p] = -1;
	for (int32_t i = 0; i < nmem; i++)
		md->row_of[md->rows[i]] = i;
	glp_add_rows(lp, 2 * nmem);
	for (int32_t i = 0; i < nmem; i++) {
		glp_set_row_bnds(lp, i + 1, GLP_FX, 0, 0);
		if (put(&md->m, i + 1, md->scol + i, 1) ||
		    (i > 0 && put(&md->m, i + 1, md->scol + i - 1, -1)))
			return -1;
		int64_t rhs = g->live[md->rows[i]] - (minpeak ? 0 : md->budget);
		glp_set_row_bnds(lp, nmem + i + 1, GLP_LO, (double)rhs / md->unit, 0);
		if (put(&md->m, nmem + i + 1, md->scol + i, 1) ||
		    (minpeak && put(&md->m, nmem + i + 1, md->mcol, 1)))
			return -1;
	}
	return shared_rows(md);
}

/* Candidate j's coefficient c in row entry i (0-based), summed. */
static void coef_add(struct model *md, int32_t j, int32_t i, double c, int32_t *nt)
{
	if (md->mark[i] != j)
		md->touched[(*nt)++] = i;
	md->mark[i] = j;
	md->coef[i] += c;
}

/* Each range enters the link row of the first memory position it covers
 * and leaves at the one after its last; a segment's ranges may share
 * rows, so coefficients add up per row first.  The transients of a
 * rebuild go in the memory row of its position. */
static int range_coefs(struct model *md, int32_t j)
{
	const struct pl_cands *cs = md->cs;
	const struct pl_cand *x = &cs->c[j];
	int32_t nt = 0, nmem = md->nmem;
	for (int fix = 0; fix < 2; fix++) {
		uint32_t nr;
		const struct pl_range *rgs = ranges_of(cs, &md->shx, j, fix, &nr);
		for (uint32_t k = 0; k < nr; k++) {
			const struct pl_range *rg = &rgs[k];
			int32_t first = first_at_or_after(md->rows, nmem, rg->lo);
			int32_t end = first_at_or_after(md->rows, nmem, rg->hi + 1);
			if (first >= end)
				continue; /* covers no memory position */
			double v = units(rg->bytes, md->unit);
			if (v == 0)
				continue;
			coef_add(md, j, first, -v, &nt);
			if (end < nmem)
				coef_add(md, j, end, v, &nt);
		}
	}
	if (x->at >= 0 && x->transient > 0 && md->row_of[x->at] >= 0)
		coef_add(md, j, nmem + md->row_of[x->at], units(-x->transient, md->unit), &nt);
	for (int32_t t = 0; t < nt; t++) {
		if (md->coef[md->touched[t]] != 0 &&
		    put(&md->m, md->touched[t] + 1, j + 1, md->coef[md->touched[t]]))
			return -1;
		md->coef[md->touched[t]] = 0;
	}
	return 0;
}

/* A row sum(x_j, j in ids[a .. b)) + (extra >= 0: x_extra) <= 1. */
static int at_most_one(struct model *md, const int32_t *ids, uint32_t a, uint32_t b, int32_t extra)
{
	int row = glp_add_rows(md->lp, 1);
	glp_set_row_bnds(md->lp, row, GLP_UP, 0, 1);
	if (extra >= 0 && put(&md->m, row, extra + 1, 1))
		return -1;
	for (uint32_t i = a; i < b; i++)
		if (put(&md->m, row, ids[i] + 1, 1))
			return -1;
	return 0;
}

/* Each gap at most once; what a chosen rebuild reads stays resident. */
static int choice_rows(struct model *md)
{
	const struct pl_cands *cs = md->cs;
	for (int32_t q = 0; q < cs->ngaps; q++) {
		uint32_t a = cs->by_gap_off[q], b = cs->by_gap_off[q + 1];
		if (b - a >= 2 && at_most_one(md, cs->by_gap, a, b, -1))
			return -1;
	}
	for (int32_t j = 0; j < md->N; j++) {
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t k = 0; k < x->nforbid; k++) {
			int32_t f = cs->forbid_list[x->forbid_off + k];
			uint32_t a = cs->by_gap_off[f], b = cs->by_gap_off[f + 1];
			if (a != b && at_most_one(md, cs->by_gap, a, b, j))
				return -1;
		}
	}
	return 0;
}

/* Copies on one engine run one after another (cands/offload.c): at each
 * position where an offload's window starts, the shares of the windows
 * covering it add up to at most 1. */
static int engine_rows(struct model *md)
{
	const struct pl_cands *cs = md->cs;
	int32_t N = md->N;
	for (int d = 0; d < 2; d++)
		for (int32_t j = 0; j < N; j++) {
			const struct pl_cand *x = &cs->c[j];
			if (!x->offload)
				continue;
			int32_t p = x->eng_lo[d], cover = 0;
			for (int32_t k = 0; k < N; k++)
				cover += cs->c[k].offload && cs->c[k].eng_lo[d] <= p &&
				         p <= cs->c[k].eng_hi[d];
			if (cover < 2)
				continue;
			int row = glp_add_rows(md->lp, 1);
			glp_set_row_bnds(md->lp, row, GLP_UP, 0, 1);
			for (int32_t k = 0; k < N; k++) {
				const struct pl_cand *y = &cs->c[k];
				if (y->offload && y->eng_lo[d] <= p && p <= y->eng_hi[d] &&
				    put(&md->m, row, k + 1, y->share[d]))
					return -1;
			}
		}
	return 0;
}

/* The whole MILP into md->lp; -1 out of memory. */
static int build(struct model *md)
{
	int32_t nmem = md->nmem;
	if (pl_ilp_shared_build(md->g, md->cs, md->rows, nmem, &md->shx))
		return -1;
	md->coef = calloc(2 * (size_t)nmem, sizeof(double));
	md->touched = malloc(sizeof(int32_t) * 2 * (size_t)nmem);
	md->mark = malloc(sizeof(int32_t) * 2 * (size_t)nmem);
	if (!md->coef || !md->touched || !md->mark)
		return -1;
	for (int32_t i = 0; i < 2 * nmem; i++)
		md->mark[i] = -1;
	/* Bytes in units that keep the coefficients near 1..2e6.  A power of
	 * two: bytes / unit is then exact, and so are the sums a row's
	 * coefficients add up to.  With any other unit, ranges that cancel in
	 * bytes left coefficients of 1e-13 (a region and the shared chunks it
	 * takes back), and GLPK's presolver called a feasible LP infeasible. */
	md->unit = 1;
	while (md->unit * 2 <= (double)md->g->baseline_peak / 1e6)
		md->unit *= 2;
	if (columns(md))
		return -1;
	for (int32_t j = 0; j < md->N; j++)
		if (range_coefs(md, j))
			return -1;
	if (choice_rows(md) || engine_rows(md))
		return -1;
	glp_load_matrix(md->lp, (int)md->m.n, md->m.ia, md->m.ja, md->m.ar);
	return 0;
}

/* The root LP: 0 solved (*root its objective), 1 infeasible, 2 no
 * solution in time, 3 GLPK failed (md->lp is gone). */
static int root_lp(struct model *md, double *root)
{
	int verbose = md->t->verbose;
	glp_prob *lp = md->lp;
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = verbose ? GLP_MSG_ON : GLP_MSG_OFF;
	/* the dual simplex copes best with these degenerate LPs */
	sp.meth = GLP_DUALP;
	/* GLPK's LP presolver drops rows and columns that cannot bind and
	 * nearly halves the root LP on 10k-op graphs (17.8 -> 10.0 s on a
	 * transformer at 50%); it gives back an optimal basis of the whole
	 * problem, which the searches start from.  It says an infeasible LP
	 * in its return code (GLP_ENOPFS), not the status.  The scaling stays
	 * for the searches' node LPs. */
	sp.presolve = GLP_ON;
	glp_scale_prob(lp, GLP_SF_AUTO); /* seconds on 10k ops: counted */
	sp.tm_lim = pl_tm_ms(md->t->time_limit - (pl_now() - md->t0));
	int sr = pl_glpk_simplex(lp, &sp);
	if (sr == PL_GLPK_FAILED) {
		md->lp = NULL;
		return 3;
	}
	int ls = glp_get_status(lp);
	if (verbose)
		fprintf(stderr, "ilp: root LP: simplex rc %d, status %d, %.2f s\n", sr, ls,
		        pl_now() - md->t0);
	if ((sr == 0 && ls == GLP_NOFEAS) || sr == GLP_ENOPFS)
		return 1; /* the relaxation is infeasible: so is the MILP */
	if (sr != 0 || ls != GLP_OPT)
		return 2; /* no LP solution in time: keep the heuristic */
	*root = glp_get_obj_val(lp);
	return 0;
}

/* For a budget: the dive from the LP, and the better of it and the warm
 * start as the incumbent (and branch and bound's warm start).  -1 when
 * GLPK failed. */
static int dive(struct model *md, struct ilp_ctx *c, struct ilp_sel *inc, double root)
{
	const struct pl_ilp_task *t = md->t;
	int32_t N = md->N;
	double warm_obj = 0;
	struct ilp_sel d = {inc->x, 0};
	for (int32_t j = 0; t->warm && j < N; j++)
		warm_obj += t->warm[j] ? (double)md->cs->c[j].cost : 0;
	int dr = pl_ilp_dive(md->lp, N, t->time_limit - (pl_now() - md->t0),
	                     md->m.n <= PL_DIVE_WIDE_NZ, &d);
	if (dr == PL_GLPK_FAILED)
		return -1;
	if (t->verbose)
		fprintf(stderr, "ilp: dive from the LP: %s%.0f, %.2f s\n",
		        dr ? "nothing, " : "objective ", dr ? 0.0 : d.obj, pl_now() - md->t0);
	if (dr == 0 && (!t->warm || d.obj < warm_obj)) {
		inc->obj = d.obj;
		warm_vector(md, inc->x, 0);
		c->warm = md->warm_x;
	} else if (t->warm) {
		memcpy(inc->x, t->warm, (size_t)N);
		inc->obj = warm_obj;
	}
	if (inc->obj >= 0 && t->sink && t->sink->put)
		t->sink->put(t->sink->arg, inc->x, N, inc->obj, root);
	return 0;
}

/* What the search proved: optimality, the bound and the gap. */
static void proven(struct model *md, struct ilp_ctx *c, const struct ilp_sel *inc, double root,
                   struct pl_ilp_result *r)
{
	/* The lower bound: the root LP's, or better, the best open node's. */
	if (root >= 0 && (!c->have_bound || root > c->bound)) {
		c->bound = root;
		c->have_bound = 1;
	}
	if (md->minpeak)
		r->peak = model_peak(md->g, md->cs, inc->x);
	/* gap: to the best bound the search proved (0 when optimal);
	 * lp_bound: the root LP relaxation when solved here. */
	if (r->optimal) {
		r->gap = 0;
		r->lp_bound = root >= 0 ? root : inc->obj;
	} else if (c->have_bound) {
		r->lp_bound = root >= 0 ? root : c->bound;
		r->gap = fabs(inc->obj - c->bound) / (fabs(inc->obj) + 1e-9);
	}
}

/* GLPK's environment is gone: what the incumbent holds stands, no bound. */
static int glpk_gone(struct model *md, const struct ilp_sel *inc, struct pl_ilp_result *r)
{
	md->lp = NULL;
	r->status = inc->obj >= 0 ? 0 : 2;
	r->optimal = 0;
	r->gap = r->lp_bound = -1;
	return 0;
}

/* For a budget: the dive; branch and bound from the better of it and the
 * warm start for half the time (it settles the small models), then the
 * neighbourhoods of what it has.  The dive and the neighbourhoods are
 * bounded in nodes, so what they reach does not depend on the machine's
 * load.  Min-peak: branch and bound alone.  Fills r. */
static int search(struct model *md, struct ilp_ctx *c, double root, uint8_t *chosen,
                  struct pl_ilp_result *r)
{
	const struct pl_ilp_task *t = md->t;
	struct ilp_sel inc = {chosen, -1}; /* obj -1: no incumbent */
	if (!md->minpeak && dive(md, c, &inc, root))
		return glpk_gone(md, &inc, r);
	double left = t->time_limit - (pl_now() - md->t0);
	int ret =
	    pl_ilp_branch(md->lp, c, c->warm == NULL, inc.obj >= 0 ? left / 2 : left, t->verbose);
	if (ret == PL_GLPK_FAILED)
		return glpk_gone(md, &inc, r);
	int st = glp_mip_status(md->lp), optimal = pl_ilp_take(md->lp, ret, md->N, &inc);
	r->status = 0;
	if (inc.obj < 0) {
		glp_term_out(md->term);
		/* proven infeasible, or no incumbent in time */
		r->status = ret == GLP_ENOPFS || st == GLP_NOFEAS ? 1 : 2;
		return 0;
	}
	if (!md->minpeak && t->sink && t->sink->put)
		t->sink->put(t->sink->arg, chosen, md->N, inc.obj, root);
	struct ilp_lns ln = {md->lp, t, md->rows, md->nmem, md->t0 + t->time_limit, root};
	if (!md->minpeak && !optimal && pl_ilp_lns(&ln, &inc))
		return glpk_gone(md, &inc, r); /* (what it reached stays in chosen) */
	glp_term_out(md->term);
	r->optimal = optimal;
	proven(md, c, &inc, root, r);
	return 0;
}

/* Solves the built model: r filled; -1 out of memory. */
static int solve(struct model *md, uint8_t *chosen, struct pl_ilp_result *r)
{
	const struct pl_ilp_task *t = md->t;
	struct ilp_ctx c = {0};
	int32_t N = md->N, nmem = md->nmem;
	md->warm_x = malloc(sizeof(double) * ((size_t)N + nmem + 2 + md->shx.nz));
	if (!md->warm_x)
		return -1;
	if (t->warm) {
		warm_vector(md, t->warm, md->minpeak);
		c.warm = md->warm_x;
	}
	/* GLPK's MIP presolver and a warm start do not mix: glp_ios_heur_sol
	 * reads its vector in the presolved problem's columns.  With a warm
	 * start the root LP is solved here (so its bound is known) and the
	 * branch and bound runs on our own, already compact, formulation;
	 * without one, glp_intopt presolves.  For a budget (not min-peak) the
	 * root LP is always solved here: the dive starts from it, and its
	 * selection becomes the warm start when it is the cheaper one. */
	int use_presolve = c.warm == NULL && md->minpeak;
	md->term = glp_term_out(t->verbose ? GLP_ON : GLP_OFF); /* cut statistics print anyway */
	double root = -1;
	if (!use_presolve) {
		int rs = root_lp(md, &root);
		if (rs) {
			if (rs != 3)
				glp_term_out(md->term);
			r->status = rs == 1 ? 1 : 2;
			return 0;
		}
	}
	if (t->verbose)
		fprintf(stderr, "ilp: %d columns, %d rows (%d memory positions), %zu non-zeros\n",
		        glp_get_num_cols(md->lp), glp_get_num_rows(md->lp), nmem, md->m.n);
	return search(md, &c, root, chosen, r);
}

static void model_free(struct model *md)
{
	if (md->lp)
		glp_delete_prob(md->lp);
	free(md->m.ia);
	free(md->m.ja);
	free(md->m.ar);
	free(md->trans_at);
	free(md->added);
	free(md->rows);
	free(md->row_of);
	free(md->warm_x);
	free(md->coef);
	free(md->touched);
	free(md->mark);
	pl_ilp_shared_free(&md->shx);
}

/* minpeak: instead of the budget, a continuous column M bounds every
 * memory row and the objective is M: the lowest peak the candidates reach. */
int pl_ilp(const struct pl_ilp_task *t, uint8_t *chosen, struct pl_ilp_result *r)
{
	memset(r, 0, sizeof(*r));
	if (t->minpeak && t->cs->ncands == 0) {
		r->peak = t->g->baseline_peak;
		r->gap = r->lp_bound = -1;
		return 0;
	}
	struct model md = {.t = t, .g = t->g, .cs = t->cs, .minpeak = t->minpeak, .t0 = pl_now()};
	md.N = t->cs->ncands;
	md.n = t->g->nops;
	md.budget = t->minpeak ? -1 : t->budget; /* min-peak: every interval gets a row */
	r->status = -1;
	r->gap = r->lp_bound = -1;
	int rc = memory_positions(&md);
	if (!rc)
		memset(chosen, 0, md.N ? md.N : 1);
	if (!rc && (md.nmem == 0 || md.N == 0)) {
		/* Nothing over the budget: the empty selection is optimal. */
		r->status = md.nmem == 0 ? 0 : 1;
		r->optimal = md.nmem == 0;
		r->gap = 0;
		r->lp_bound = 0;
	} else if (!rc) {
		rc = build(&md) ? -1 : solve(&md, chosen, r);
	}
	model_free(&md);
	return rc;
}
