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
 */
#include "internal.h"

#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	const double *warm; /* 1-based, NULL when none */
	int warm_given;
	double bound;
	int have_bound;
};

static void callback(glp_tree *tree, void *info)
{
	struct ctx *c = info;
	switch (glp_ios_reason(tree)) {
	case GLP_IHEUR:
		if (c->warm && !c->warm_given) {
			c->warm_given = 1;
			glp_ios_heur_sol(tree, c->warm);
		}
		break;
	case GLP_ISELECT:
	case GLP_IBINGO:
	case GLP_IBRANCH: {
		int p = glp_ios_best_node(tree);
		if (p) {
			c->bound = glp_ios_node_bound(tree, p);
			c->have_bound = 1;
		}
		break;
	}
	default:
		break;
	}
}

/* GLPK aborts the process on an internal assertion (it has, deep in its
 * primal simplex, on a badly scaled LP).  Its error hook lets us leave
 * instead: the solve then simply has no answer and the heuristic plan
 * stands.  After the hook fires GLPK's whole environment is gone, the
 * problem object included. */
#define GLPK_FAILED (-1000)

static void glpk_failed(void *info)
{
	longjmp(*(jmp_buf *)info, 1);
}

static int guarded_simplex(glp_prob *lp, const glp_smcp *sp)
{
	jmp_buf env;
	if (setjmp(env)) {
		glp_free_env();
		return GLPK_FAILED;
	}
	glp_error_hook(glpk_failed, &env);
	int r = glp_simplex(lp, sp);
	glp_error_hook(NULL, NULL);
	return r;
}

static int guarded_intopt(glp_prob *lp, const glp_iocp *parm)
{
	jmp_buf env;
	if (setjmp(env)) {
		glp_free_env();
		return GLPK_FAILED;
	}
	glp_error_hook(glpk_failed, &env);
	int r = glp_intopt(lp, parm);
	glp_error_hook(NULL, NULL);
	return r;
}

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

/* Large neighbourhood search from an incumbent: free the candidates that
 * act on one window of memory positions, fix the others to the
 * incumbent, solve that small MILP (GLPK's presolver drops the fixed
 * columns), keep what improves; windows slide over the positions until
 * `until`.  GLPK's branch and bound stalls on the full problem long
 * before such windows stop improving it.  -1 if GLPK failed (lp is then
 * gone), else 0; inc and *obj hold the best selection. */
static int lns(glp_prob *lp, const struct pl_cands *cs, const int32_t *rows, int32_t nmem,
               uint8_t *inc, double *obj, double until, int verbose)
{
	int32_t N = cs->ncands, w = nmem / 6 > 8 ? nmem / 6 : 8;
	glp_iocp parm;
	glp_init_iocp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_ON;
	parm.fp_heur = GLP_ON;
	parm.mir_cuts = GLP_ON;
	parm.clq_cuts = GLP_ON;
	int improved = 0, rounds = 0;
	for (int32_t start = 0;; start += w / 2 > 0 ? w / 2 : 1) {
		double left = until - pl_now();
		if (left < 0.2)
			break;
		if (start >= nmem) {
			if (!improved)
				break; /* a whole sweep without a gain */
			improved = 0;
			start = 0;
		}
		int32_t lo = rows[start], hi = rows[start + w < nmem ? start + w : nmem - 1];
		for (int32_t j = 0; j < N; j++) {
			const struct pl_cand *x = &cs->c[j];
			int free = x->at >= lo && x->at <= hi;
			for (uint32_t k = 0; k < x->nranges && !free; k++) {
				const struct pl_range *rg = &cs->ranges[x->range_off + k];
				free = rg->lo <= hi && rg->hi >= lo;
			}
			if (free)
				glp_set_col_bnds(lp, j + 1, GLP_DB, 0, 1);
			else
				glp_set_col_bnds(lp, j + 1, GLP_FX, inc[j], inc[j]);
		}
		parm.tm_lim = (int)((left < 2 ? left : 2) * 1000);
		int ret = guarded_intopt(lp, &parm);
		if (ret == GLPK_FAILED)
			return -1;
		rounds++;
		int st = glp_mip_status(lp);
		if ((st == GLP_OPT || st == GLP_FEAS) && glp_mip_obj_val(lp) < *obj - 1e-6) {
			*obj = glp_mip_obj_val(lp);
			for (int32_t j = 0; j < N; j++)
				inc[j] = glp_mip_col_val(lp, j + 1) > 0.5;
			improved = 1;
		}
	}
	for (int32_t j = 0; j < N; j++)
		glp_set_col_bnds(lp, j + 1, GLP_DB, 0, 1);
	if (verbose)
		fprintf(stderr, "ilp: %d neighbourhood rounds, objective %.0f\n", rounds, *obj);
	return 0;
}

/* minpeak: instead of the budget, a continuous column M bounds every
 * memory row and the objective is M: the lowest peak the candidates reach. */
static int solve(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget,
                 double time_limit, const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r,
                 int verbose, int minpeak)
{
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
	int32_t *touched = NULL;
	struct mat m = {0};
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
	coef = calloc(2 * (size_t)nmem, sizeof(double));
	touched = malloc(sizeof(int32_t) * 2 * (size_t)nmem);
	if (!coef || !touched)
		goto out;
	/* Bytes in units that keep the coefficients near 1..1e6. */
	double unit = (double)g->baseline_peak / 1e6;
	if (unit < 1)
		unit = 1;
	/* Columns: x_j (1..N), s_i = bytes saved at memory position i
	 * (N+1..N+nmem), and M (min-peak mode).  Rows: link rows 1..nmem
	 * telescope s along the positions (s_i - s_{i-1} = ranges entering at
	 * i - ranges leaving), so a range costs two non-zeros however many
	 * positions it spans; memory rows nmem+1..2 nmem bound s_i. */
	int32_t scol = N + 1, mcol = N + nmem + 1;
	lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_cols(lp, N + nmem + (minpeak ? 1 : 0));
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
	/* Each range enters the link row of the first memory position it
	 * covers and leaves at the one after its last; a segment's ranges
	 * may share rows, so coefficients add up per row first. */
	for (int32_t j = 0; j < N; j++) {
		const struct pl_cand *x = &cs->c[j];
		int32_t nt = 0;
		for (uint32_t k = 0; k < x->nranges; k++) {
			const struct pl_range *rg = &cs->ranges[x->range_off + k];
			int32_t first = first_at_or_after(rows, nmem, rg->lo);
			int32_t end = first_at_or_after(rows, nmem, rg->hi + 1);
			if (first >= end)
				continue; /* covers no memory position */
			double v = units(rg->bytes, unit);
			if (v == 0)
				continue;
			if (coef[first] == 0)
				touched[nt++] = first;
			coef[first] -= v;
			if (end < nmem) {
				if (coef[end] == 0)
					touched[nt++] = end;
				coef[end] += v;
			}
		}
		if (x->at >= 0 && x->transient > 0 && row_of[x->at] >= 0) {
			int32_t i = nmem + row_of[x->at];
			if (coef[i] == 0)
				touched[nt++] = i;
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

	struct ctx c = {0};
	if (warm && (warm_x = calloc((size_t)N + nmem + 2, sizeof(double)))) {
		/* every column: x, the bytes it saves at each position, M */
		double *sv = warm_x + scol;
		for (int32_t j = 0; j < N; j++) {
			if (!warm[j])
				continue;
			warm_x[j + 1] = 1.0;
			const struct pl_cand *x = &cs->c[j];
			for (uint32_t k = 0; k < x->nranges; k++) {
				const struct pl_range *rg = &cs->ranges[x->range_off + k];
				int32_t first = first_at_or_after(rows, nmem, rg->lo);
				int32_t end = first_at_or_after(rows, nmem, rg->hi + 1);
				if (first < end) { /* a difference array, summed below */
					sv[first] += units(rg->bytes, unit);
					if (end < nmem)
						sv[end] -= units(rg->bytes, unit);
				}
			}
		}
		for (int32_t i = 1; i < nmem; i++)
			sv[i] += sv[i - 1];
		if (minpeak)
			warm_x[mcol] = (double)model_peak(g, cs, warm) / unit;
		c.warm = warm_x;
	}
	/* GLPK's MIP presolver and a warm start do not mix: glp_ios_heur_sol
	 * reads its vector in the presolved problem's columns.  With a warm
	 * start the root LP is solved here (so its bound is known) and the
	 * branch and bound runs on our own, already compact, formulation;
	 * without one, glp_intopt presolves. */
	double t0 = pl_now();
	int use_presolve = c.warm == NULL;
	int term = glp_term_out(verbose ? GLP_ON : GLP_OFF); /* cut statistics print anyway */
	double root = -1;
	if (!use_presolve) {
		glp_smcp sp;
		glp_init_smcp(&sp);
		sp.msg_lev = verbose ? GLP_MSG_ON : GLP_MSG_OFF;
		sp.tm_lim = (int)(time_limit * 1000);
		/* the dual simplex copes best with these degenerate LPs */
		sp.meth = GLP_DUALP;
		glp_scale_prob(lp, GLP_SF_AUTO);
		int sr = guarded_simplex(lp, &sp);
		if (sr == GLPK_FAILED) {
			lp = NULL;
			r->status = 2;
			rc = 0;
			goto out;
		}
		int ls = glp_get_status(lp);
		if (verbose)
			fprintf(stderr, "ilp: root LP: simplex rc %d, status %d, %.2f s\n", sr, ls,
			        pl_now() - t0);
		if (sr == 0 && ls == GLP_NOFEAS) {
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
	double left = time_limit - (pl_now() - t0);
	glp_iocp parm;
	glp_init_iocp(&parm);
	parm.msg_lev = verbose ? GLP_MSG_ON : GLP_MSG_OFF;
	parm.presolve = use_presolve ? GLP_ON : GLP_OFF;
	parm.fp_heur = GLP_ON;
	parm.gmi_cuts = GLP_ON;
	parm.mir_cuts = GLP_ON;
	/* Cover cuts stay off: GLPK 5.0's glp_cov_init aborts ("glp_add_cols:
	 * ncs = 0") when the problem has no knapsack rows. */
	parm.cov_cuts = GLP_OFF;
	parm.clq_cuts = GLP_ON;
	parm.br_tech = GLP_BR_DTH;
	parm.bt_tech = GLP_BT_BLB;
	/* With an incumbent, half the time goes to neighbourhood search. */
	double bb = !minpeak && c.warm ? left / 2 : left;
	parm.tm_lim = bb > 0.05 ? (int)(bb * 1000) : 50;
	parm.cb_func = callback;
	parm.cb_info = &c;
	if (verbose)
		fprintf(stderr, "ilp: %d columns, %d rows (%d memory positions), %zu non-zeros\n",
		        glp_get_num_cols(lp), glp_get_num_rows(lp), nmem, m.n);
	int ret = guarded_intopt(lp, &parm);
	if (ret == GLPK_FAILED) {
		lp = NULL;
		r->status = 2;
		rc = 0;
		goto out;
	}
	glp_term_out(term);
	if (verbose)
		fprintf(stderr, "ilp: intopt rc %d, status %d, %.2f s\n", ret, glp_mip_status(lp),
		        pl_now() - t0);
	int st = glp_mip_status(lp);
	if (ret == GLP_ENOPFS || st == GLP_NOFEAS) {
		r->status = 1; /* proven infeasible */
		rc = 0;
		goto out;
	}
	if (st != GLP_OPT && st != GLP_FEAS) {
		r->status = 2; /* no incumbent in time */
		rc = 0;
		goto out;
	}
	/* The lower bound: the root LP's, or better, the best open node's. */
	if (root >= 0 && (!c.have_bound || root > c.bound)) {
		c.bound = root;
		c.have_bound = 1;
	}
	double obj = glp_mip_obj_val(lp);
	for (int32_t j = 0; j < N; j++)
		chosen[j] = glp_mip_col_val(lp, j + 1) > 0.5;
	r->status = 0;
	r->optimal = st == GLP_OPT && ret == 0;
	term = glp_term_out(verbose ? GLP_ON : GLP_OFF); /* (clique cuts print anyway) */
	int failed = !minpeak && !r->optimal &&
	             lns(lp, cs, rows, nmem, chosen, &obj, t0 + time_limit, verbose);
	glp_term_out(term);
	if (failed) {
		lp = NULL; /* GLPK failed: keep the incumbent, no bound */
		r->gap = r->lp_bound = -1;
		rc = 0;
		goto out;
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
	return rc;
}

int pl_ilp(const struct pl_graph *g, const struct pl_cands *cs, int64_t budget, double time_limit,
           const uint8_t *warm, uint8_t *chosen, struct pl_ilp_result *r, int verbose)
{
	return solve(g, cs, budget, time_limit, warm, chosen, r, verbose, 0);
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
	return solve(g, cs, 0, time_limit, warm, chosen, r, verbose, 1);
}
