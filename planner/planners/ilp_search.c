/*
 * ilp_search.c — the searches run on the MILP that ilp.c builds: branch
 * and bound, the dive from the LP relaxation, the neighbourhoods of an
 * incumbent; and the guards that turn GLPK's aborts into an answer.
 */
#include "ilp_internal.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void callback(glp_tree *tree, void *info)
{
	struct ilp_ctx *c = info;
	int reason = glp_ios_reason(tree);
	if (reason == GLP_ISELECT && ++c->nodes > c->node_limit && c->node_limit > 0) {
		glp_ios_terminate(tree);
		return;
	}
	switch (reason) {
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

static void glpk_failed(void *info)
{
	longjmp(*(jmp_buf *)info, 1);
}

/* glp_simplex (sp) or glp_intopt (parm), leaving instead of aborting */
static int guarded(glp_prob *lp, const glp_smcp *sp, const glp_iocp *parm)
{
	jmp_buf env;
	if (setjmp(env)) {
		glp_free_env();
		return PL_GLPK_FAILED;
	}
	glp_error_hook(glpk_failed, &env);
	int r = sp ? glp_simplex(lp, sp) : glp_intopt(lp, parm);
	glp_error_hook(NULL, NULL);
	return r;
}

int pl_glpk_simplex(glp_prob *lp, const glp_smcp *sp)
{
	return guarded(lp, sp, NULL);
}

static int guarded_intopt(glp_prob *lp, const glp_iocp *parm)
{
	return guarded(lp, NULL, parm);
}

/* Settings for the small MILPs (the dive, the neighbourhoods): quiet,
 * presolved (their fixed columns drop out), the feasibility pump and the
 * cheap cuts; c counts their nodes. */
static void small_milp(glp_iocp *parm, struct ilp_ctx *c)
{
	glp_init_iocp(parm);
	parm->msg_lev = GLP_MSG_OFF;
	parm->presolve = GLP_ON;
	parm->fp_heur = GLP_ON;
	parm->mir_cuts = GLP_ON;
	parm->clq_cuts = GLP_ON;
	parm->cb_func = callback;
	parm->cb_info = c;
}

/* Nodes each neighbourhood's MILP may take: the narrow ones close in
 * far fewer; the wide ones rarely close, and past this they seldom find
 * more. */
#define NEIGHBOURHOOD_NODES 300

/* Whether candidate x is freed in the window lo..hi of positions: narrow,
 * when it acts there (rebuilds, or starts or stops saving there); wide,
 * when it also only saves over it.  Activations kept from the forward
 * to the backward pass cover every window in between, so a wide window
 * frees most candidates and its MILP is nearly the whole problem; a
 * narrow one stays small enough to close. */
static int in_window(const struct pl_cands *cs, const struct pl_cand *x, int32_t lo, int32_t hi,
                     int wide)
{
	if (x->at >= lo && x->at <= hi)
		return 1;
	for (uint32_t k = 0; k < x->nranges; k++) {
		const struct pl_range *rg = &cs->ranges[x->range_off + k];
		if (wide ? rg->lo <= hi && rg->hi >= lo
		         : (rg->lo >= lo && rg->lo <= hi) || (rg->hi >= lo && rg->hi <= hi))
			return 1;
	}
	return 0;
}

/* Large neighbourhood search from an incumbent: free the candidates of
 * one window of memory positions, fix the others to the incumbent, solve
 * that small MILP (GLPK's presolver drops the fixed columns), keep what
 * improves; windows slide over the positions, narrow ones until a sweep
 * gains nothing, then wide ones (back to narrow after a gain), until a
 * wide sweep gains nothing too or `until`.  Each MILP is bounded in
 * nodes, so the search goes the same way on any machine; time only cuts
 * it short.  GLPK's branch and bound stalls on the full problem long
 * before such windows stop improving it.  -1 if GLPK failed (lp is then
 * gone), else 0; inc holds the best selection. */
int pl_ilp_lns(const struct ilp_lns *in, struct ilp_sel *inc)
{
	glp_prob *lp = in->lp;
	const struct pl_cands *cs = in->t->cs;
	const struct pl_ilp_sink *sink = in->t->sink;
	const int32_t *rows = in->rows;
	int32_t nmem = in->nmem;
	int32_t N = cs->ncands, w = nmem / 6 > 8 ? nmem / 6 : 8;
	int32_t step = w / 2 > 0 ? w / 2 : 1;
	struct ilp_ctx c = {0};
	glp_iocp parm;
	small_milp(&parm, &c);
	int improved = 0, rounds = 0, wide = 0;
	for (int32_t start = 0;;) {
		double left = in->until - pl_now();
		if (left < 0.2)
			break;
		int32_t lo = rows[start], hi = rows[start + w < nmem ? start + w : nmem - 1];
		for (int32_t j = 0; j < N; j++) {
			if (in_window(cs, &cs->c[j], lo, hi, wide))
				glp_set_col_bnds(lp, j + 1, GLP_DB, 0, 1);
			else
				glp_set_col_bnds(lp, j + 1, GLP_FX, inc->x[j], inc->x[j]);
		}
		c = (struct ilp_ctx){.node_limit = NEIGHBOURHOOD_NODES};
		parm.tm_lim = pl_tm_ms(left / 2); /* presolved */
		int ret = guarded_intopt(lp, &parm);
		if (ret == PL_GLPK_FAILED)
			return -1;
		rounds++;
		int st = glp_mip_status(lp);
		if ((st == GLP_OPT || st == GLP_FEAS) && glp_mip_obj_val(lp) < inc->obj - 1e-6) {
			inc->obj = glp_mip_obj_val(lp);
			for (int32_t j = 0; j < N; j++)
				inc->x[j] = glp_mip_col_val(lp, j + 1) > 0.5;
			if (sink && sink->put)
				sink->put(sink->arg, inc->x, N, inc->obj, in->lp_bound);
			improved = 1;
		}
		if (start + w < nmem - 1) {
			start += step;
			continue;
		}
		/* a whole sweep done */
		if (!improved && wide)
			break;
		wide = !improved;
		improved = 0;
		start = 0;
	}
	for (int32_t j = 0; j < N; j++)
		glp_set_col_bnds(lp, j + 1, GLP_DB, 0, 1);
	if (in->t->verbose)
		fprintf(stderr, "ilp: %d neighbourhood rounds, objective %.0f\n", rounds, inc->obj);
	return 0;
}

/* Nodes the dive below may take: its MILPs close in tens of nodes on
 * DTR's graphs, a few hundred at the tightest budgets. */
#define DIVE_NODES 1000

/* Starts from the LP relaxation, lp holding it solved.  First RENS: fix
 * every candidate the relaxation takes whole or leaves out, leave the
 * fractional ones free, and solve that MILP (presolved: the fixed columns
 * drop out).  The relaxation is tight on these models, so it is small
 * and closes in a fraction of a second even on 10k ops.  Then, on a
 * small model (wide), the dive that leaves out only what the relaxation
 * takes whole: a larger MILP that often lands nearer the optimum (on
 * ResNet-32 at 35% of its peak, 0.3% above the LP bound, where the
 * min-peak selection and branch and bound from it stayed above DTR's
 * figure; on the 1k-op chain at 50%, 0.3% where RENS alone ends 1.7%
 * above).  On a large one that MILP is nearly the whole problem, and
 * GLPK's presolver, which no time limit stops, took the rest of the 30 s
 * on a 10k-op chain at 75% (RENS: 0.3 s, 0.1% above the bound instead of
 * 9%).  Bounded in nodes, not time, so the same everywhere.  0: out
 * holds the better selection; 1: none; PL_GLPK_FAILED: GLPK's
 * environment is gone. */
int pl_ilp_dive(glp_prob *lp, int32_t N, double time_limit, int wide, struct ilp_sel *out)
{
	double t0 = pl_now();
	int any = 0;
	for (int fix_out = 1; fix_out >= !wide; fix_out--) {
		glp_prob *sub = glp_create_prob();
		glp_copy_prob(sub, lp, GLP_OFF);
		for (int32_t j = 0; j < N; j++) {
			double x = glp_get_col_prim(lp, j + 1);
			if (x > 1 - 1e-6)
				glp_set_col_bnds(sub, j + 1, GLP_FX, 1, 1);
			else if (fix_out && x < 1e-6)
				glp_set_col_bnds(sub, j + 1, GLP_FX, 0, 0);
		}
		struct ilp_ctx c = {.node_limit = DIVE_NODES};
		glp_iocp parm;
		small_milp(&parm, &c);
		parm.tm_lim = pl_tm_ms((time_limit - (pl_now() - t0)) / 2); /* presolved */
		if (guarded_intopt(sub, &parm) == PL_GLPK_FAILED)
			return PL_GLPK_FAILED;
		int st = glp_mip_status(sub);
		if ((st == GLP_OPT || st == GLP_FEAS) &&
		    (!any || glp_mip_obj_val(sub) < out->obj)) {
			out->obj = glp_mip_obj_val(sub);
			for (int32_t j = 0; j < N; j++)
				out->x[j] = glp_mip_col_val(sub, j + 1) > 0.5;
			any = 1;
		}
		glp_delete_prob(sub);
	}
	return any ? 0 : 1;
}

int pl_ilp_branch(glp_prob *lp, struct ilp_ctx *c, int presolve, double seconds, int verbose)
{
	glp_iocp parm;
	glp_init_iocp(&parm);
	parm.msg_lev = verbose ? GLP_MSG_ON : GLP_MSG_OFF;
	parm.presolve = presolve ? GLP_ON : GLP_OFF;
	parm.fp_heur = GLP_ON;
	parm.gmi_cuts = GLP_ON;
	parm.mir_cuts = GLP_ON;
	/* Cover cuts stay off: GLPK 5.0's glp_cov_init aborts ("glp_add_cols:
	 * ncs = 0") when the problem has no knapsack rows. */
	parm.cov_cuts = GLP_OFF;
	parm.clq_cuts = GLP_ON;
	parm.br_tech = GLP_BR_DTH;
	parm.bt_tech = GLP_BT_BLB;
	parm.tm_lim = pl_tm_ms(presolve ? seconds / 2 : seconds);
	parm.cb_func = callback;
	parm.cb_info = c;
	double t0 = pl_now();
	int ret = guarded_intopt(lp, &parm);
	if (verbose && ret != PL_GLPK_FAILED)
		fprintf(stderr, "ilp: branch and bound: rc %d, status %d, %d nodes, %.2f s\n", ret,
		        glp_mip_status(lp), c->nodes, pl_now() - t0);
	return ret;
}

int pl_ilp_take(glp_prob *lp, int ret, int32_t N, struct ilp_sel *inc)
{
	int st = glp_mip_status(lp);
	if (st != GLP_OPT && st != GLP_FEAS)
		return 0;
	if (inc->obj < 0 || glp_mip_obj_val(lp) < inc->obj - 1e-6) {
		inc->obj = glp_mip_obj_val(lp);
		for (int32_t j = 0; j < N; j++)
			inc->x[j] = glp_mip_col_val(lp, j + 1) > 0.5;
	}
	return st == GLP_OPT && ret == 0;
}
