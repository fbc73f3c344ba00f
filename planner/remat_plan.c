/*
 * remat_plan.c — the `remat-plan` command: read a trace or a graph file,
 * plan for a budget, check the plan with the evaluator, write it.
 *
 * Exit status: 0 plan written, 2 bad input or usage, 3 the budget cannot
 * be reached (the message says the smallest budget the planner meets and
 * what to try), 1 internal error.
 *
 * --sweep: the recompute cost at budgets from the baseline down to the
 * smallest reachable one, as JSON (search/sweep.c), instead of one plan.
 */
#include "planner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: remat-plan TRACE_DIR|GRAPH.json --budget B\n"
	           "                  [--planner ilp|chain|greedy|dtr|none] [--time-limit S]\n"
	           "                  [--no-segments] [--exclude ID,ID,...] [-v] [--gap G]\n"
	           "                  [--plan-version 1|2] [--offload-gbps G] [--progress]\n"
	           "                  [-o PLAN.json]\n"
	           "       remat-plan TRACE_DIR|GRAPH.json --sweep [N] [options] -o SWEEP.json\n"
	           "  B: bytes with an optional K/M/G/T suffix (powers of 1024), or a\n"
	           "     percentage of the baseline peak (50%%)\n"
	           "  --planner: ilp (default) runs the others, then the ILP from the best;\n"
	           "     chain: a dynamic program over the chain of repeated stages\n"
	           "  --time-limit: seconds for the whole command, loading included\n"
	           "     (default 30); the best plan found by then is written\n"
	           "  --gap: stop once the plan is within G (0.01 = 1%%) of the proven bound\n"
	           "  --sweep: the recompute cost at N budgets (default 12) from the\n"
	           "     baseline down to the smallest one reached, as JSON\n"
	           "     (remat-report --sweep draws it)\n"
	           "  --exclude: buffer ids (of the trace) never to evict or rebuild\n"
	           "  --plan-version: 1 (default) plans only what a version 1 runtime runs;\n"
	           "     2 adds stashes (replays of ops that update buffers in place) and\n"
	           "     buffers kept unmapped at the iteration boundary\n"
	           "  --offload-gbps: also offload buffers to page-locked host memory over\n"
	           "     copy engines of G GB/s each direction (plan version 3, which\n"
	           "     libremat carries out unless REMAT_OFFLOAD=0); off by default;\n"
	           "     --offload-only: offload and recompute nothing (a comparison)\n"
	           "  --progress: a line per planning stage on stderr (also with -v)\n"
	           "       remat-plan --rehash PLAN.json\n"
	           "  gives a plan edited by hand the checksum of its new content (readers\n"
	           "  refuse a plan whose checksum does not match; libremat still checks\n"
	           "  what the plan does before it applies it)\n");
}

/* Marks the buffers of a comma-separated id list as excluded.  0, or 2
 * with a message naming the bad entry. */
static int apply_excludes(struct pl_graph *g, const char *list)
{
	const char *s = list;
	for (;;) {
		char *end;
		errno = 0;
		long id = strtol(s, &end, 10);
		if (end == s || errno || (*end && *end != ',') || id < 0 || id >= g->nbufs) {
			fprintf(stderr,
			        "remat-plan: --exclude '%s': expected buffer ids 0..%d separated "
			        "by commas\n",
			        list, g->nbufs - 1);
			return 2;
		}
		g->bufs[id].excluded = 1;
		if (!*end)
			return 0;
		s = end + 1;
	}
}

static const char *human(int64_t b, char *buf, size_t n)
{
	const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	int i = 0;
	while ((v >= 1024 || v <= -1024) && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(buf, n, i ? "%.2f %s" : "%.0f %s", v, u[i]);
	return buf;
}

/* --sweep: the curve as JSON and a table on stdout. */
static int sweep(const struct pl_graph *g, const struct pl_options *o, const char *out)
{
	struct pl_sweep sw;
	char err[1024];
	int rc = pl_sweep_run(g, o, &sw, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "remat-plan: %s\n", err);
		return rc;
	}
	double iter = (double)(g->iteration_ns > 0 ? g->iteration_ns : 1);
	printf("%14s %8s %14s %10s %8s  %s\n", "budget", "of peak", "recompute ms", "of iter",
	       "gap", "planner");
	for (int32_t k = 0; k < sw.npoints; k++) {
		const struct pl_sweep_point *pt = &sw.points[k];
		char gs[16] = "n/a";
		if (pt->gap >= 0)
			snprintf(gs, sizeof(gs), "%.1f%%", 100 * pt->gap);
		printf("%14lld %7.1f%% %14.3f %9.2f%% %8s  %s\n", (long long)pt->budget,
		       100.0 * (double)pt->budget / (double)g->baseline_peak,
		       pt->recompute_ns / 1e6, 100.0 * (double)pt->recompute_ns / iter, gs,
		       pt->planner);
	}
	printf("smallest budget reached: %lld bytes; no plan goes below %lld; %.2f s\n",
	       (long long)sw.min_peak, (long long)sw.peak_bound, sw.solve_s);
	rc = pl_sweep_save_json(g, &sw, out, err, sizeof(err));
	if (rc)
		fprintf(stderr, "remat-plan: %s\n", err);
	else
		printf("sweep:           %s\n", out);
	pl_sweep_free(&sw);
	return rc;
}

/* The command line. */
struct args {
	const char *input, *budget_s, *out, *exclude, *rehash;
	struct pl_options o;
	int npoints; /* --sweep: how many budgets; 0 without it */
};

/* strtod over all of v (an empty v reads as 0): -1 when something
 * else follows the number or it is out of a double's range. */
static int all_number(const char *v, double *x)
{
	char *end;
	errno = 0;
	*x = strtod(v, &end);
	return *end || errno ? -1 : 0;
}

static int bad_value(const char *opt, const char *v, const char *want)
{
	fprintf(stderr, "remat-plan: %s '%s': %s\n", opt, v, want);
	return 2;
}

/* Option a with its value v: 0 taken, 2 bad value, 1 not such an option. */
static int value_option(struct args *A, const char *a, const char *v)
{
	struct pl_options *o = &A->o;
	if (!strcmp(a, "--budget"))
		A->budget_s = v;
	else if (!strcmp(a, "--rehash"))
		A->rehash = v;
	else if (!strcmp(a, "-o"))
		A->out = v;
	else if (!strcmp(a, "--exclude"))
		A->exclude = v;
	else if (!strcmp(a, "--planner")) {
		if (pl_planner_parse(v, &o->planner)) {
			fprintf(
			    stderr,
			    "remat-plan: unknown planner '%s' (ilp, chain, greedy, dtr, none)\n",
			    v);
			return 2;
		}
	} else if (!strcmp(a, "--time-limit")) {
		double *t = &o->time_limit_s;
		if (all_number(v, t) || !(*t > 0) || *t > 86400)
			return bad_value(a, v, "expected seconds in (0, 86400]");
	} else if (!strcmp(a, "--gap")) {
		if (all_number(v, &o->gap_tol) || !(o->gap_tol >= 0) || o->gap_tol >= 1)
			return bad_value(a, v, "expected a fraction in [0, 1)");
	} else if (!strcmp(a, "--offload-gbps")) {
		double gb;
		if (all_number(v, &gb) || !*v || !(gb >= 0.001 && gb <= 10000))
			return bad_value(a, v, "expected GB/s, a number from 0.001 to 10000");
		o->offload_gbps = gb;
	} else if (!strcmp(a, "--plan-version")) {
		if (strcmp(v, "1") && strcmp(v, "2")) {
			fprintf(stderr, "remat-plan: --plan-version '%s': expected 1 or 2\n", v);
			return 2;
		}
		o->plan_version = atoi(v);
	} else
		return 1;
	return 0;
}

/* --sweep [N]: *used 1 when v was its N.  0, or 2 for a bad N. */
static int sweep_option(struct args *A, const char *v, int *used)
{
	A->npoints = 12;
	*used = 0;
	if (!v || v[0] < '0' || v[0] > '9')
		return 0;
	char *end;
	long n = strtol(v, &end, 10);
	if (*end || n < 2 || n > 200) {
		fprintf(stderr, "remat-plan: --sweep '%s': expected 2 to 200 budgets\n", v);
		return 2;
	}
	A->npoints = (int)n;
	*used = 1;
	return 0;
}

/* Options without a value and the input.  0, or 2 with a message. */
static int flag_or_input(struct args *A, const char *a)
{
	if (!strcmp(a, "--offload-only")) {
		A->o.offload_only = 1;
	} else if (!strcmp(a, "--no-segments")) {
		A->o.segments = 0;
	} else if (!strcmp(a, "-v")) {
		A->o.verbose = 1;
		A->o.progress = 1;
	} else if (!strcmp(a, "--progress")) {
		A->o.progress = 1;
	} else if (a[0] == '-' && a[1]) {
		fprintf(stderr, "remat-plan: unknown option or missing value: %s\n", a);
		usage(stderr);
		return 2;
	} else if (!A->input) {
		A->input = a;
	} else {
		fprintf(stderr, "remat-plan: more than one input: %s and %s\n", A->input, a);
		return 2;
	}
	return 0;
}

/* -1 to go on, else the exit status (--help: 0). */
static int parse_args(int argc, char **argv, struct args *A)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc, used = 1;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--sweep"))
			rc = sweep_option(A, v, &used);
		else if (!v || (rc = value_option(A, a, v)) == 1) {
			rc = flag_or_input(A, a);
			used = 0;
		}
		if (rc)
			return rc;
		i += used;
	}
	if (A->rehash)
		return -1;
	if (!A->input || (!A->budget_s && !A->npoints) ||
	    (A->npoints && (A->budget_s || !A->out))) {
		fprintf(stderr, "remat-plan: %s\n",
		        !A->input ? "no input given"
		        : A->npoints && A->budget_s
		            ? "--sweep plans every budget: no --budget with it"
		        : A->npoints ? "--sweep writes its curve to -o FILE: -o is required"
		                     : "--budget (or --sweep) is required");
		usage(stderr);
		return 2;
	}
	return -1;
}

static int rehash(const struct args *A)
{
	char err[1024];
	if (A->input || A->budget_s || A->out) {
		fprintf(stderr, "remat-plan: --rehash takes a plan file and nothing else\n");
		return 2;
	}
	int rc = pl_plan_rehash(A->rehash, err, sizeof(err));
	if (rc)
		fprintf(stderr, "remat-plan: %s\n", err);
	else
		printf("%s: checksum written\n", A->rehash);
	return rc;
}

/* The plan's figures, after the graph's and the budget's. */
static void print_result(const struct pl_graph *g, const struct pl_options *o,
                         const struct pl_plan *p, const struct pl_result *res)
{
	char b1[32], b2[32];
	double iter = (double)(res->iteration_ns > 0 ? res->iteration_ns : 1);
	printf("planned peak:    %s (%lld bytes)\n", human(res->peak, b1, sizeof(b1)),
	       (long long)res->peak);
	printf("bytes saved:     %s (%.1f%% of the peak)\n",
	       human(res->baseline_peak - res->peak, b2, sizeof(b2)),
	       100.0 * (double)(res->baseline_peak - res->peak) / (double)res->baseline_peak);
	printf("buffers evicted: %d (%d replays)\n", res->evicted_buffers, res->replays);
	printf("recompute time:  %.3f ms (%.2f%% of the iteration)\n", res->recompute_ns / 1e6,
	       100.0 * (double)res->recompute_ns / iter);
	if (o->offload_gbps > 0)
		printf("offloaded:       %d buffer versions at %g GB/s, copies stick out %.3f ms "
		       "(%.2f%% of the iteration)\n",
		       res->offloads, o->offload_gbps, res->stall_ns / 1e6,
		       100.0 * (double)res->stall_ns / iter);
	if (p->nparked) {
		int64_t parked = 0;
		for (int32_t i = 0; i < p->nparked; i++)
			parked += g->bufs[p->parked[i]].size;
		printf("parked on host:  %d buffers no op touches, %s (%lld bytes), copied once\n",
		       p->nparked, human(parked, b2, sizeof(b2)), (long long)parked);
	}
	printf("planner:         %s (%d candidates)\n", res->planner, res->candidates);
	printf("solve time:      %.3f s\n", res->solve_s);
	/* one bound, valid for every plan; the gap is to it */
	if (res->bound_ns >= 0)
		printf("bound:           %.3f ms (no plan within the budget recomputes less%s)\n",
		       res->bound_ns / 1e6,
		       o->offload_gbps > 0 ? "; offload frees memory at no recompute cost" : "");
	if (res->gap >= 0)
		printf("gap:             %.2f%% (to the bound)\n", 100 * res->gap);
	else
		printf("gap:             n/a\n");
}

/* One plan for --budget, written to -o when given. */
static int plan(const struct pl_graph *g, const struct args *A)
{
	const struct pl_options *o = &A->o;
	char err[1024], b1[32], hs[20];
	int64_t budget;
	int rc;
	if ((rc = pl_parse_budget(A->budget_s, g->baseline_peak, &budget, err, sizeof(err)))) {
		fprintf(stderr, "remat-plan: %s\n", err);
		return rc;
	}
	printf("graph:           %s (%d ops, %d buffers, hash %s)\n", g->name, g->nops, g->nbufs,
	       pl_hash_str(g->hash, hs));
	printf("baseline peak:   %s (%lld bytes)\n", human(g->baseline_peak, b1, sizeof(b1)),
	       (long long)g->baseline_peak);
	printf("budget:          %s (%lld bytes)\n", human(budget, b1, sizeof(b1)),
	       (long long)budget);
	struct pl_plan *p;
	struct pl_result res;
	pl_progress(o, "loaded: %d ops, %d buffers, baseline peak %lld bytes; planning for %lld",
	            g->nops, g->nbufs, (long long)g->baseline_peak, (long long)budget);
	if ((rc = pl_plan_make(g, budget, o, &p, &res))) {
		fprintf(stderr, "remat-plan: %s\n", res.error);
		if (rc == PL_EBUDGET && res.min_peak > 0)
			fprintf(stderr, "remat-plan: smallest reachable peak: %s (%lld bytes)\n",
			        human(res.min_peak, b1, sizeof(b1)), (long long)res.min_peak);
		return rc;
	}
	double iter = (double)(res.iteration_ns > 0 ? res.iteration_ns : 1);
	pl_progress(
	    o,
	    "done: plan by %s, peak %lld bytes, recompute %.3f ms (%.1f%% of the iteration); "
	    "bound %.3f ms, gap %.1f%%",
	    res.planner, (long long)res.peak, res.recompute_ns / 1e6,
	    100.0 * (double)res.recompute_ns / iter, res.bound_ns > 0 ? res.bound_ns / 1e6 : 0.0,
	    res.gap >= 0 ? 100 * res.gap : 0.0);
	print_result(g, o, p, &res);
	if (A->out) {
		rc = pl_plan_save_json(p, A->out, err, sizeof(err));
		if (rc)
			fprintf(stderr, "remat-plan: %s\n", err);
		else
			printf("plan:            %s\n", A->out);
	}
	pl_plan_free(p);
	return rc;
}

int main(int argc, char **argv)
{
	struct args A = {0};
	pl_options_default(&A.o);
	A.o.started = pl_now(); /* the time limit covers loading too */
	/* The runtime asks for version 2 once it runs stashes and the
	 * boundary list (docs/plan-format.md). */
	A.o.plan_version = 1;
	int rc = parse_args(argc, argv, &A);
	if (rc >= 0)
		return rc;
	A.o.sweep_points = A.npoints;
	if (A.rehash)
		return rehash(&A);
	char err[1024];
	struct pl_graph *g;
	pl_progress(&A.o, "loading %s", A.input);
	if ((rc = pl_graph_load(A.input, &g, err, sizeof(err)))) {
		fprintf(stderr, "remat-plan: %s\n", err);
		return rc;
	}
	if (!A.exclude || !(rc = apply_excludes(g, A.exclude)))
		rc = A.npoints ? sweep(g, &A.o, A.out) : plan(g, &A);
	pl_graph_free(g);
	return rc;
}
