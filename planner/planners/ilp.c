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
	size_t n, cap;
};

static int put(struct mat *m, int i, int j, double v)
{
	if (m->n + 1 >= m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 4096;
		int *ia = realloc(m->ia, cap * sizeof(int));
		if (!ia)
			return -1;
		m->ia = ia;
		int *ja = realloc(m->ja, cap * sizeof(int));
		if (!ja)
			return -1;
		m->ja = ja;
		double *ar = realloc(m->ar, cap * sizeof(double));
		if (!ar)
			return -1;
		m->ar = ar;
		m->cap = cap;
	}
	m->n++; /* GLPK arrays are 1-based */
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

/* Positions that need a memory row; returns how many (or -1).  added:
 * the most all candidates together add at each position besides their
 * transients (stashes), constant between two range boundaries. */
static int32_t peak_positions(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget,
                              const int64_t *trans_at, const int64_t *added, int32_t *rows)
{
	int32_t n = g->nops, nb = 0;
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
	int32_t lo = 0, hi = nmem;
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (rows[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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
 * saves at each memory position, M (min-peak mode). */
static void warm_vector(const struct pl_graph *g, const struct pl_cands *cs,
                        const struct ilp_shared *shx, const int32_t *rows, int32_t nmem,
                        double unit, const uint8_t *sel, int minpeak, double *warm_x)
{
	int32_t N = cs->ncands;
	double *sv = warm_x + N + 1;
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
				int32_t first = first_at_or_after(rows, nmem, rg->lo);
				int32_t end = first_at_or_after(rows, nmem, rg->hi + 1);
				if (first < end) { /* a difference array, summed below */
					sv[first] += units(rg->bytes, unit);
					if (end < nmem)
						sv[end] -= units(rg->bytes, unit);
				}
			}
		}
	}
	for (int32_t i = 1; i < nmem; i++)
		sv[i] += sv[i - 1];
	if (minpeak)
		warm_x[N + nmem + 1] = (double)model_peak(g, cs, sel) / unit;
	pl_ilp_shared_warm(g, shx, rows, sel, warm_x + N + nmem + (minpeak ? 1 : 0) + 1);
}

/* The shared chunks' columns (ilp_shared.c): z(s, i) in [0, 1] saves
 * group s's bytes in memory row i, and for each buffer b of s a row
 * z(s, i) - sum of the candidates keeping b out at i <= 0. */
static int shared_rows(glp_prob *lp, struct mat *m, const struct pl_graph *g,
                       const struct ilp_shared *shx, const int32_t *rows, int32_t nmem,
                       int32_t zcol, double unit)
{
	for (size_t k = 0; k < shx->nz; k++) {
		const struct pl_shared *gs = &g->shared[shx->z[k].group];
		int32_t p = rows[shx->z[k].row], col = zcol + (int32_t)k;
		glp_set_col_bnds(lp, col, GLP_DB, 0, 1);
		for (int32_t i = shx->z[k].row; i <= shx->z[k].last; i++)
			if (put(m, nmem + i + 1, col, units(gs->bytes, unit)))
				return -1;
		for (uint32_t e = 0; e < gs->n; e++) {
			int32_t b = g->shared_bufs[gs->off + e], row = glp_add_rows(lp, 1),
			        last = -1;
			glp_set_row_bnds(lp, row, GLP_UP, 0, 0);
			if (put(m, row, col, 1))
				return -1;
			/* (sorted by candidate: one entry each) */
			for (uint32_t v = shx->ev_off[b]; v < shx->ev_off[b + 1]; v++) {
				const struct ilp_evict *ev = &shx->ev[v];
				if (ev->lo <= p && p <= ev->hi && ev->cand != last) {
					if (put(m, row, ev->cand + 1, -1))
						return -1;
					last = ev->cand;
				}
			}
		}
	}
	return 0;
}

/* minpeak: instead of the budget, a continuous column M bounds every
 * memory row and the objective is M: the lowest peak the candidates reach. */
int pl_ilp_solve(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget,
                 double time_limit, const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r,
                 int verbose, int minpeak, const struct pl_ilp_sink *sink)
{
	double t0 = pl_now(); /* time_limit counts from here: building the model is part of it */
	memset(r, 0, sizeof(*r));
	r->status = -1;
	r->gap = r->lp_bound = -1;
	int32_t N = cs->ncands, n = g->nops;
	int64_t *trans_at = calloc((size_t)n, sizeof(int64_t));
	int64_t *added = malloc(sizeof(int64_t) * (size_t)n);
	int32_t *rows = malloc(sizeof(int32_t) * (4 * (size_t)cs->nranges + 2 * (size_t)N + 4));
	int32_t *row_of = malloc(sizeof(int32_t) * (size_t)n);
	double *warm_x = NULL;
	double *coef = NULL;
	int32_t *touched = NULL, *mark = NULL; /* mark: the candidate that touched it last */
	struct mat m = {0};
	struct ilp_shared shx = {0};
	glp_prob *lp = NULL;
	int rc = -1;
	if (!trans_at || !added || !rows || !row_of)
		goto out;
	memset(chosen, 0, N ? N : 1);
	for (int32_t j = 0; j < N; j++)
		if (cs->c[j].at >= 0)
			trans_at[cs->c[j].at] += cs->c[j].transient;
	pl_added_bytes(g, cs, added);
	for (int32_t p = 0; p < n; p++)
		added[p] -= trans_at[p];
	if (minpeak)
		budget = -1; /* every interval gets a row */
	int32_t nmem = peak_positions(g, cs, budget, trans_at, added, rows);
	if (nmem < 0)
		goto out;
	if (nmem == 0 || N == 0) {
		/* Nothing over the budget: the empty selection is optimal. */
		r->status = nmem == 0 ? 0 : 1;
		r->optimal = nmem == 0;
		r->gap = 0;
		r->lp_bound = 0;
		rc = 0;
		goto out;
	}
	if (pl_ilp_shared_build(g, cs, rows, nmem, &shx))
		goto out;
	coef = calloc(2 * (size_t)nmem, sizeof(double));
	touched = malloc(sizeof(int32_t) * 2 * (size_t)nmem);
	mark = malloc(sizeof(int32_t) * 2 * (size_t)nmem);
	if (!coef || !touched || !mark)
		goto out;
	for (int32_t i = 0; i < 2 * nmem; i++)
		mark[i] = -1;
	/* Bytes in units that keep the coefficients near 1..2e6.  A power of
	 * two: bytes / unit is then exact, and so are the sums a row's
	 * coefficients add up to.  With any other unit, ranges that cancel in
	 * bytes left coefficients of 1e-13 (a region and the shared chunks it
	 * takes back), and GLPK's presolver called a feasible LP infeasible. */
	double unit = 1;
	while (unit * 2 <= (double)g->baseline_peak / 1e6)
		unit *= 2;
	/* Columns: x_j (1..N), s_i = bytes saved at memory position i
	 * (N+1..N+nmem), and M (min-peak mode).  Rows: link rows 1..nmem
	 * telescope s along the positions (s_i - s_{i-1} = ranges entering at
	 * i - ranges leaving), so a range costs two non-zeros however many
	 * positions it spans; memory rows nmem+1..2 nmem bound s_i. */
	int32_t scol = N + 1, mcol = N + nmem + 1, zcol = N + nmem + (minpeak ? 1 : 0) + 1;
	lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_cols(lp, N + nmem + (minpeak ? 1 : 0) + (int)shx.nz);
	for (int32_t j = 0; j < N; j++) {
		glp_set_col_kind(lp, j + 1, GLP_BV);
		glp_set_obj_coef(lp, j + 1, minpeak ? 0 : (double)cs->c[j].cost);
	}
	for (int32_t i = 0; i < nmem; i++)
		glp_set_col_bnds(lp, scol + i, GLP_FR, 0, 0); /* a stash saves less than nothing */
	if (minpeak) {
		glp_set_col_bnds(lp, mcol, GLP_LO, 0, 0);
		glp_set_obj_coef(lp, mcol, 1);
	}
	int row = 0;
	for (int32_t p = 0; p < n; p++)
		row_of[p] = -1;
	for (int32_t i = 0; i < nmem; i++)
		row_of[rows[i]] = i;
	glp_add_rows(lp, 2 * nmem);
	for (int32_t i = 0; i < nmem; i++) {
		glp_set_row_bnds(lp, i + 1, GLP_FX, 0, 0);
		if (put(&m, i + 1, scol + i, 1) || (i > 0 && put(&m, i + 1, scol + i - 1, -1)))
			goto out;
		int64_t rhs = g->live[rows[i]] - (minpeak ? 0 : budget);
		glp_set_row_bnds(lp, nmem + i + 1, GLP_LO, (double)rhs / unit, 0);
		if (put(&m, nmem + i + 1, scol + i, 1) ||
		    (minpeak && put(&m, nmem + i + 1, mcol, 1)))
			goto out;
	}
	row = 2 * nmem;
	if (shared_rows(lp, &m, g, &shx, rows, nmem, zcol, unit))
		goto out;
	/* Each range enters the link row of the first memory position it
	 * covers and leaves at the one after its last; a segment's ranges
	 * may share rows, so coefficients add up per row first. */
	for (int32_t j = 0; j < N; j++) {
		const struct pl_cand *x = &cs->c[j];
		int32_t nt = 0;
		for (int fix = 0; fix < 2; fix++) {
			uint32_t nr;
			const struct pl_range *rgs = ranges_of(cs, &shx, j, fix, &nr);
			for (uint32_t k = 0; k < nr; k++) {
				const struct pl_range *rg = &rgs[k];
				int32_t first = first_at_or_after(rows, nmem, rg->lo);
				int32_t end = first_at_or_after(rows, nmem, rg->hi + 1);
				if (first >= end)
					continue; /* covers no memory position */
				double v = units(rg->bytes, unit);
				if (v == 0)
					continue;
				if (mark[first] != j)
					touched[nt++] = first;
				mark[first] = j;
				coef[first] -= v;
				if (end < nmem) {
					if (mark[end] != j)
						touched[nt++] = end;
					mark[end] = j;
					coef[end] += v;
				}
			}
		}
		if (x->at >= 0 && x->transient > 0 && row_of[x->at] >= 0) {
			int32_t i = nmem + row_of[x->at];
			if (mark[i] != j)
				touched[nt++] = i;
			mark[i] = j;
			coef[i] += units(-x->transient, unit);
		}
		for (int32_t t = 0; t < nt; t++) {
			if (coef[touched[t]] != 0 &&
			    put(&m, touched[t] + 1, j + 1, coef[touched[t]]))
				goto out;
			coef[touched[t]] = 0;
		}
	}
	/* Each gap at most once. */
	for (int32_t q = 0; q < cs->ngaps; q++) {
		uint32_t a = cs->by_gap_off[q], b = cs->by_gap_off[q + 1];
		if (b - a < 2)
			continue;
		row = glp_add_rows(lp, 1);
		glp_set_row_bnds(lp, row, GLP_UP, 0, 1);
		for (uint32_t i = a; i < b; i++)
			if (put(&m, row, cs->by_gap[i] + 1, 1))
				goto out;
	}
	/* What a chosen rebuild reads stays resident. */
	for (int32_t j = 0; j < N; j++) {
		const struct pl_cand *x = &cs->c[j];
		for (uint32_t k = 0; k < x->nforbid; k++) {
			int32_t f = cs->forbid_list[x->forbid_off + k];
			uint32_t a = cs->by_gap_off[f], b = cs->by_gap_off[f + 1];
			if (a == b)
				continue;
			row = glp_add_rows(lp, 1);
			glp_set_row_bnds(lp, row, GLP_UP, 0, 1);
			if (put(&m, row, j + 1, 1))
				goto out;
			for (uint32_t i = a; i < b; i++)
				if (put(&m, row, cs->by_gap[i] + 1, 1))
					goto out;
		}
	}
	/* Copies on one engine run one after another (offload.c): at each
	 * position where an offload's window starts, the shares of the
	 * windows covering it add up to at most 1. */
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
			row = glp_add_rows(lp, 1);
			glp_set_row_bnds(lp, row, GLP_UP, 0, 1);
			for (int32_t k = 0; k < N; k++) {
				const struct pl_cand *y = &cs->c[k];
				if (y->offload && y->eng_lo[d] <= p && p <= y->eng_hi[d] &&
				    put(&m, row, k + 1, y->share[d]))
					goto out;
			}
		}
	glp_load_matrix(lp, (int)m.n, m.ia, m.ja, m.ar);

	struct ilp_ctx c = {0};
	warm_x = malloc(sizeof(double) * ((size_t)N + nmem + 2 + shx.nz));
	if (!warm_x)
		goto out;
	if (warm) {
		warm_vector(g, cs, &shx, rows, nmem, unit, warm, minpeak, warm_x);
		c.warm = warm_x;
	}
	/* GLPK's MIP presolver and a warm start do not mix: glp_ios_heur_sol
	 * reads its vector in the presolved problem's columns.  With a warm
	 * start the root LP is solved here (so its bound is known) and the
	 * branch and bound runs on our own, already compact, formulation;
	 * without one, glp_intopt presolves.  For a budget (not min-peak) the
	 * root LP is always solved here: the dive starts from it, and its
	 * selection becomes the warm start when it is the cheaper one. */
	int use_presolve = c.warm == NULL && minpeak;
	int term = glp_term_out(verbose ? GLP_ON : GLP_OFF); /* cut statistics print anyway */
	double root = -1;
	if (!use_presolve) {
		glp_smcp sp;
		glp_init_smcp(&sp);
		sp.msg_lev = verbose ? GLP_MSG_ON : GLP_MSG_OFF;
		/* the dual simplex copes best with these degenerate LPs */
		sp.meth = GLP_DUALP;
		/* GLPK's LP presolver drops rows and columns that cannot bind
		 * and nearly halves the root LP on 10k-op graphs (17.8 -> 10.0 s
		 * on a transformer at 50%); it gives back an optimal basis of
		 * the whole problem, which the searches start from.  It says an
		 * infeasible LP in its return code (GLP_ENOPFS), not the
		 * status.  The scaling stays for the searches' node LPs. */
		sp.presolve = GLP_ON;
		glp_scale_prob(lp, GLP_SF_AUTO); /* seconds on 10k ops: counted */
		sp.tm_lim = pl_tm_ms(time_limit - (pl_now() - t0));
		int sr = pl_glpk_simplex(lp, &sp);
		if (sr == PL_GLPK_FAILED) {
			lp = NULL;
			r->status = 2;
			rc = 0;
			goto out;
		}
		int ls = glp_get_status(lp);
		if (verbose)
			fprintf(stderr, "ilp: root LP: simplex rc %d, status %d, %.2f s\n", sr, ls,
			        pl_now() - t0);
		if ((sr == 0 && ls == GLP_NOFEAS) || sr == GLP_ENOPFS) {
			glp_term_out(term);
			r->status = 1; /* the relaxation is infeasible: so is the MILP */
			rc = 0;
			goto out;
		}
		if (sr != 0 || ls != GLP_OPT) {
			glp_term_out(term);
			r->status = 2; /* no LP solution in time: keep the heuristic */
			rc = 0;
			goto out;
		}
		root = glp_get_obj_val(lp);
	}
	if (verbose)
		fprintf(stderr, "ilp: %d columns, %d rows (%d memory positions), %zu non-zeros\n",
		        glp_get_num_cols(lp), glp_get_num_rows(lp), nmem, m.n);
	/* For a budget: the dive; branch and bound from the better of it and
	 * the warm start for half the time (it settles the small models),
	 * then the neighbourhoods of what it has.  The dive and the
	 * neighbourhoods are bounded in nodes, so what they reach does not
	 * depend on the machine's load. */
	double obj = -1; /* cost of the incumbent in chosen; -1 none */
	if (!minpeak) {
		double dive_obj = 0, warm_obj = 0;
		for (int32_t j = 0; warm && j < N; j++)
			warm_obj += warm[j] ? (double)cs->c[j].cost : 0;
		int dr = pl_ilp_dive(lp, N, time_limit - (pl_now() - t0), m.n <= PL_DIVE_WIDE_NZ,
		                     chosen, &dive_obj);
		if (dr == PL_GLPK_FAILED)
			goto glpk_failed;
		if (verbose)
			fprintf(stderr, "ilp: dive from the LP: %s%.0f, %.2f s\n",
			        dr ? "nothing, " : "objective ", dr ? 0.0 : dive_obj,
			        pl_now() - t0);
		if (dr == 0 && (!warm || dive_obj < warm_obj)) {
			obj = dive_obj;
			warm_vector(g, cs, &shx, rows, nmem, unit, chosen, 0, warm_x);
			c.warm = warm_x;
		} else if (warm) {
			memcpy(chosen, warm, (size_t)N);
			obj = warm_obj;
		}
		if (obj >= 0 && sink && sink->put)
			sink->put(sink->arg, chosen, N, obj, root);
	}
	double left = time_limit - (pl_now() - t0);
	int ret = pl_ilp_branch(lp, &c, c.warm == NULL, obj >= 0 ? left / 2 : left, verbose);
	if (ret == PL_GLPK_FAILED)
		goto glpk_failed;
	int st = glp_mip_status(lp), proven = pl_ilp_take(lp, ret, N, chosen, &obj);
	if (obj < 0) {
		glp_term_out(term);
		/* proven infeasible, or no incumbent in time */
		r->status = ret == GLP_ENOPFS || st == GLP_NOFEAS ? 1 : 2;
		rc = 0;
		goto out;
	}
	if (!minpeak && sink && sink->put)
		sink->put(sink->arg, chosen, N, obj, root);
	if (!minpeak && !proven &&
	    pl_ilp_lns(lp, cs, rows, nmem, chosen, &obj, t0 + time_limit, verbose, sink, root))
		goto glpk_failed; /* (what it reached stays in chosen) */
	glp_term_out(term);
	r->status = 0;
	r->optimal = proven;
	/* The lower bound: the root LP's, or better, the best open node's. */
	if (root >= 0 && (!c.have_bound || root > c.bound)) {
		c.bound = root;
		c.have_bound = 1;
	}
	if (minpeak)
		r->peak = model_peak(g, cs, chosen);
	/* gap: to the best bound the search proved (0 when optimal);
	 * lp_bound: the root LP relaxation when solved here. */
	if (r->optimal) {
		r->gap = 0;
		r->lp_bound = root >= 0 ? root : obj;
	} else if (c.have_bound) {
		r->lp_bound = root >= 0 ? root : c.bound;
		r->gap = fabs(obj - c.bound) / (fabs(obj) + 1e-9);
	}
	rc = 0;
	goto out;
glpk_failed:
	/* GLPK's environment is gone: what chosen holds stands, no bound */
	lp = NULL;
	r->status = obj >= 0 ? 0 : 2;
	r->optimal = 0;
	r->gap = r->lp_bound = -1;
	rc = 0;
out:
	if (lp)
		glp_delete_prob(lp);
	free(m.ia);
	free(m.ja);
	free(m.ar);
	free(trans_at);
	free(added);
	free(rows);
	free(row_of);
	free(warm_x);
	free(coef);
	free(touched);
	free(mark);
	pl_ilp_shared_free(&shx);
	return rc;
}

int pl_ilp(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, double time_limit,
           const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r, int verbose)
{
	return pl_ilp_solve(g, cs, budget, time_limit, warm, chosen, r, verbose, 0, NULL);
}

int pl_ilp_min_peak(const struct pl_graph *g, const struct pl_cands *cs, double time_limit,
                    const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r, int verbose)
{
	if (cs->ncands == 0) {
		memset(r, 0, sizeof(*r));
		r->peak = g->baseline_peak;
		r->gap = r->lp_bound = -1;
		return 0;
	}
	return pl_ilp_solve(g, cs, 0, time_limit, warm, chosen, r, verbose, 1, NULL);
}
