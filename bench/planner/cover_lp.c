/*
 * cover_lp.c — checks what bound.c says of the relaxation over every
 * position at once: its LP optimum, solved exactly with GLPK, next to the
 * proven bound (the best single position's knapsack).
 *
 * The LP: a replay of op w at q covers each buffer w wrote, at the
 * positions a < p < q of the gap around q (a: its last real use before
 * q, the gap ending at the next real read r >= q, or at the last op for
 * content needed when the iteration ends).  x: replays at the ends of the
 * gaps (any other q covers less); y(gap, p): covered; at every position
 * over the budget the covered bytes reach what must go.  An op that
 * writes several buffers pays here for each gap it covers, so this LP is
 * at least the relaxation's (which is at least any single position's
 * knapsack): when it comes out at the bound, so does the relaxation.
 * For small graphs (a few thousand ops): it scans every op per buffer.
 */
#include "gen.h"

#include <glpk.h>
#include <stdlib.h>
#include <string.h>

struct lgap {
	int32_t w, a, r; /* covered by a replay of w at a < q <= r: a < p < q */
	int64_t bytes;
};

static int refers(const struct pl_graph *g, int32_t p, int32_t b)
{
	for (uint32_t k = 0; k < g->ops[p].nrefs; k++)
		if (g->refs[g->ops[p].ref_off + k].buf == b)
			return 1;
	return 0;
}

/* Appends b's gaps; adds to must[] what stays mapped at each position
 * (no replay gives it back) and to cov[] what a replay may give back. */
static int buffer_gaps(const struct pl_graph *g, int32_t b, struct lgap **gp, int32_t *ng,
                       size_t *cap, int64_t *must, int64_t *cov)
{
	const struct pl_buffer *bf = &g->bufs[b];
	int32_t n = g->nops, lo = bf->alloc_at < 0 ? 0 : bf->alloc_at,
	        hi = bf->free_at < 0 ? n : bf->free_at;
	if (bf->rounded <= 0)
		return 0;
	/* uses in order; content: the version the next real use reads */
	int32_t real = -1, prev = lo - 1, ver = pl_ver_initial(bf);
	for (int32_t p = lo; p <= hi; p++) {
		uint32_t flags = 0;
		int32_t rv = 0;
		int end = p == hi;
		if (!end)
			for (uint32_t k = 0; k < g->ops[p].nrefs; k++)
				if (g->refs[g->ops[p].ref_off + k].buf == b) {
					flags = g->refs[g->ops[p].ref_off + k].flags | 8;
					rv = g->refs[g->ops[p].ref_off + k].ver;
					break;
				}
		if (!end && !flags)
			continue;
		if (!end && !(flags & (PL_REF_READ | PL_REF_WRITE))) {
			must[p] += bf->rounded; /* referenced only: the stretch goes on */
			continue;
		}
		/* the stretch prev < s < p holds ver; it matters if read at p or
		 * needed at the end */
		int needed = end ? bf->free_at < 0 && !bf->dead_across : (flags & PL_REF_READ) != 0;
		int32_t v = end ? ver : rv;
		if (bf->small || bf->excluded) {
			needed = 1;
			v = PL_VER_PRE;
		}
		int32_t stop = end && v >= 0 ? n - 1 : p; /* no steps after the last op */
		int replay = needed && v >= 0 && g->ops[v].replayable && real >= 0;
		for (int32_t s = prev + 1; s < p; s++) {
			if (refers(g, s, b))
				continue; /* counted above */
			if (replay && s < stop)
				cov[s] += bf->rounded;
			else if (needed && v != PL_VER_FRESH)
				must[s] += bf->rounded;
		}
		if (replay && stop > real + 1) {
			if (*ng >= (int32_t)*cap) {
				*cap = *cap ? 2 * *cap : 256;
				struct lgap *x = realloc(*gp, sizeof(**gp) * *cap);
				if (!x)
					return -1;
				*gp = x;
			}
			(*gp)[(*ng)++] = (struct lgap){v, real, stop, bf->rounded};
		}
		if (end)
			break;
		must[p] += bf->rounded;
		if (flags & (PL_REF_READ | PL_REF_WRITE))
			real = p;
		if (flags & PL_REF_WRITE)
			ver = p;
		prev = p;
	}
	return 0;
}

int cover_lp(const struct pl_graph *g, int64_t budget, double *lp_ns)
{
	int32_t n = g->nops, ng = 0;
	size_t cap = 0;
	struct lgap *gp = NULL;
	int64_t *must = calloc((size_t)n + 1, sizeof(int64_t)),
	        *cov = calloc((size_t)n + 1, sizeof(int64_t));
	int32_t *row = malloc(sizeof(int32_t) * ((size_t)n + 1));
	int rc = -1;
	if (!must || !cov || !row)
		goto out;
	for (int32_t b = 0; b < g->nbufs; b++)
		if (buffer_gaps(g, b, &gp, &ng, &cap, must, cov))
			goto out;
	glp_prob *lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	/* rows: positions over the budget */
	for (int32_t p = 0; p < n; p++) {
		int64_t over = g->const_bytes + must[p] + cov[p] - budget;
		row[p] = 0;
		if (g->const_bytes + must[p] > budget) {
			*lp_ns = -1; /* no plan at all */
			rc = 0;
			glp_delete_prob(lp);
			goto out;
		}
		if (over > 0) {
			row[p] = glp_add_rows(lp, 1);
			glp_set_row_bnds(lp, row[p], GLP_LO, (double)over / 1e6, 0);
		}
	}
	/* x per gap (a replay at its end), y per gap and row inside it */
	int cap_ne = 1 << 16, ne = 0;
	int *ia = malloc(sizeof(int) * (size_t)cap_ne), *ja = malloc(sizeof(int) * (size_t)cap_ne);
	double *ar = malloc(sizeof(double) * (size_t)cap_ne);
	int ok = ia && ja && ar;
	for (int32_t i = 0; i < ng && ok; i++) {
		int x = glp_add_cols(lp, 1);
		glp_set_col_bnds(lp, x, GLP_DB, 0, 1);
		glp_set_obj_coef(lp, x, (double)g->ops[gp[i].w].duration_ns);
		for (int32_t p = gp[i].a + 1; p < gp[i].r && ok; p++) {
			if (!row[p])
				continue;
			/* y <= the replays of w at the ends of gaps of this buffer's
			 * content around p: this gap's own (gaps of one buffer are
			 * disjoint, and a replay of w elsewhere covers no p here) */
			int y = glp_add_cols(lp, 1);
			glp_set_col_bnds(lp, y, GLP_DB, 0, 1);
			int link = glp_add_rows(lp, 1);
			glp_set_row_bnds(lp, link, GLP_UP, 0, 0);
			if (ne + 3 >= cap_ne) {
				cap_ne *= 2;
				ia = realloc(ia, sizeof(int) * (size_t)cap_ne);
				ja = realloc(ja, sizeof(int) * (size_t)cap_ne);
				ar = realloc(ar, sizeof(double) * (size_t)cap_ne);
				ok = ia && ja && ar;
				if (!ok)
					break;
			}
			ia[++ne] = link, ja[ne] = y, ar[ne] = 1;
			ia[++ne] = link, ja[ne] = x, ar[ne] = -1;
			ia[++ne] = row[p], ja[ne] = y, ar[ne] = (double)gp[i].bytes / 1e6;
		}
	}
	if (ok) {
		glp_load_matrix(lp, ne, ia, ja, ar);
		glp_smcp parm;
		glp_init_smcp(&parm);
		parm.msg_lev = GLP_MSG_OFF;
		parm.presolve = GLP_ON;
		int r = glp_simplex(lp, &parm);
		*lp_ns = r == 0 && glp_get_status(lp) == GLP_OPT ? glp_get_obj_val(lp) : -2;
		rc = 0;
	}
	free(ia);
	free(ja);
	free(ar);
	glp_delete_prob(lp);
out:
	free(gp);
	free(must);
	free(cov);
	free(row);
	return rc;
}
