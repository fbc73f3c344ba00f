/*
 * remat_plan.c — the `remat-plan` command: read a trace or a graph file,
 * plan for a budget, check the plan with the evaluator, write it.
 *
 * Exit status: 0 plan written, 2 bad input or usage, 3 the budget cannot
 * be reached (the message says the smallest budget the planner meets and
 * what to try), 1 internal error.
 *
 * --sweep: the recompute cost at budgets from the baseline down to the
 * smallest reachable one, as JSON (sweep.c), instead of one plan.
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
static int sweep(const struct pl_graph *g, const struct pl_options *o, int npoints, const char *out)
{
	struct pl_sweep sw;
	char err[1024];
	int rc = pl_sweep_run(g, o, npoints, &sw, err, sizeof(err));
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

int main(int argc, char **argv)
{
	const char *input = NULL, *budget_s = NULL, *out = NULL, *exclude = NULL, *rehash = NULL;
	struct pl_options o;
	int npoints = 0;
	pl_options_default(&o);
	o.started = pl_now(); /* the time limit covers loading too */
	/* The runtime asks for version 2 once it runs stashes and the
	 * boundary list (docs/plan-format.md). */
	o.plan_version = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--budget") && v) {
			budget_s = v;
			i++;
		} else if (!strcmp(a, "--planner") && v) {
			if (pl_planner_parse(v, &o.planner)) {
				fprintf(stderr,
				        "remat-plan: unknown planner '%s' (ilp, chain, greedy, "
				        "dtr, none)\n",
				        v);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--time-limit") && v) {
			char *end;
			errno = 0;
			o.time_limit_s = strtod(v, &end);
			if (*end || errno || !(o.time_limit_s > 0) || o.time_limit_s > 86400) {
				fprintf(stderr,
				        "remat-plan: --time-limit '%s': expected seconds in (0, "
				        "86400]\n",
				        v);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--gap") && v) {
			char *end;
			errno = 0;
			o.gap_tol = strtod(v, &end);
			if (*end || errno || !(o.gap_tol >= 0) || o.gap_tol >= 1) {
				fprintf(stderr,
				        "remat-plan: --gap '%s': expected a fraction in [0, 1)\n",
				        v);
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--sweep")) {
			npoints = 12;
			if (v && v[0] >= '0' && v[0] <= '9') {
				char *end;
				long n = strtol(v, &end, 10);
				if (*end || n < 2 || n > 200) {
					fprintf(
					    stderr,
					    "remat-plan: --sweep '%s': expected 2 to 200 budgets\n",
					    v);
					return 2;
				}
				npoints = (int)n;
				i++;
			}
		} else if (!strcmp(a, "--rehash") && v) {
			rehash = v;
			i++;
		} else if (!strcmp(a, "-o") && v) {
			out = v;
			i++;
		} else if (!strcmp(a, "--exclude") && v) {
			exclude = v;
			i++;
		} else if (!strcmp(a, "--plan-version") && v) {
			if (strcmp(v, "1") && strcmp(v, "2")) {
				fprintf(stderr,
				        "remat-plan: --plan-version '%s': expected 1 or 2\n", v);
				return 2;
			}
			o.plan_version = atoi(v);
			i++;
		} else if (!strcmp(a, "--offload-gbps") && v) {
			char *end;
			errno = 0;
			double gb = strtod(v, &end);
			if (errno || end == v || *end || !(gb >= 0.001 && gb <= 10000)) {
				fprintf(stderr,
				        "remat-plan: --offload-gbps '%s': expected GB/s, a number "
				        "from 0.001 to 10000\n",
				        v);
				return 2;
			}
			o.offload_gbps = gb;
			i++;
		} else if (!strcmp(a, "--offload-only")) {
			o.offload_only = 1;
		} else if (!strcmp(a, "--no-segments")) {
			o.segments = 0;
		} else if (!strcmp(a, "-v")) {
			o.verbose = 1;
			o.progress = 1;
		} else if (!strcmp(a, "--progress")) {
			o.progress = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "remat-plan: unknown option or missing value: %s\n", a);
			usage(stderr);
			return 2;
		} else if (!input) {
			input = a;
		} else {
			fprintf(stderr, "remat-plan: more than one input: %s and %s\n", input, a);
			return 2;
		}
	}
	if (rehash) {
		char err[1024];
		if (input || budget_s || out) {
			fprintf(stderr,
			        "remat-plan: --rehash takes a plan file and nothing else\n");
			return 2;
		}
		int rc = pl_plan_rehash(rehash, err, sizeof(err));
		if (rc)
			fprintf(stderr, "remat-plan: %s\n", err);
		else
			printf("%s: checksum written\n", rehash);
		return rc;
	}
	if (!input || (!budget_s && !npoints) || (npoints && (budget_s || !out))) {
		fprintf(stderr, "remat-plan: %s\n",
		        !input                ? "no input given"
		        : npoints && budget_s ? "--sweep plans every budget: no --budget with it"
		        : npoints ? "--sweep writes its curve to -o FILE: -o is required"
		                  : "--budget (or --sweep) is required");
		usage(stderr);
		return 2;
	}
	char err[1024], b1[32], b2[32], hs[20];
	struct pl_graph *g;
	pl_progress(&o, "loading %s", input);
	int rc = pl_graph_load(input, &g, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "remat-plan: %s\n", err);
		return rc;
	}
	if (exclude && (rc = apply_excludes(g, exclude))) {
		pl_graph_free(g);
		return rc;
	}
	if (npoints) {
		rc = sweep(g, &o, npoints, out);
		pl_graph_free(g);
		return rc;
	}
	int64_t budget;
	if ((rc = pl_parse_budget(budget_s, g->baseline_peak, &budget, err, sizeof(err)))) {
		fprintf(stderr, "remat-plan: %s\n", err);
		pl_graph_free(g);
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
	pl_progress(&o, "loaded: %d ops, %d buffers, baseline peak %lld bytes; planning for %lld",
	            g->nops, g->nbufs, (long long)g->baseline_peak, (long long)budget);
	rc = pl_plan_make(g, budget, &o, &p, &res, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "remat-plan: %s\n", err);
		if (rc == PL_EBUDGET && res.min_peak > 0)
			fprintf(stderr, "remat-plan: smallest reachable peak: %s (%lld bytes)\n",
			        human(res.min_peak, b1, sizeof(b1)), (long long)res.min_peak);
		pl_graph_free(g);
		return rc;
	}
	double iter = (double)(res.iteration_ns > 0 ? res.iteration_ns : 1);
	pl_progress(
	    &o,
	    "done: plan by %s, peak %lld bytes, recompute %.3f ms (%.1f%% of the iteration); "
	    "bound %.3f ms, gap %.1f%%",
	    res.planner, (long long)res.peak, res.recompute_ns / 1e6,
	    100.0 * (double)res.recompute_ns / iter, res.bound_ns > 0 ? res.bound_ns / 1e6 : 0.0,
	    res.gap >= 0 ? 100 * res.gap : 0.0);
	printf("planned peak:    %s (%lld bytes)\n", human(res.peak, b1, sizeof(b1)),
	       (long long)res.peak);
	printf("bytes saved:     %s (%.1f%% of the peak)\n",
	       human(res.baseline_peak - res.peak, b2, sizeof(b2)),
	       100.0 * (double)(res.baseline_peak - res.peak) / (double)res.baseline_peak);
	printf("buffers evicted: %d (%d replays)\n", res.evicted_buffers, res.replays);
	printf("recompute time:  %.3f ms (%.2f%% of the iteration)\n", res.recompute_ns / 1e6,
	       100.0 * (double)res.recompute_ns / iter);
	if (o.offload_gbps > 0)
		printf("offloaded:       %d buffer versions at %g GB/s, copies stick out %.3f ms "
		       "(%.2f%% of the iteration)\n",
		       res.offloads, o.offload_gbps, res.stall_ns / 1e6,
		       100.0 * (double)res.stall_ns / iter);
	if (p->nparked) {
		int64_t parked = 0;
		for (int32_t i = 0; i < p->nparked; i++)
			parked += g->bufs[p->parked[i]].size;
		printf("parked on host:  %d buffers no op touches, %s (%lld bytes), copied once\n",
		       p->nparked, human(parked, b2, sizeof(b2)), (long long)parked);
	}
	printf("planner:         %s (%d candidates)\n", res.planner, res.candidates);
	printf("solve time:      %.3f s\n", res.solve_s);
	/* one bound, valid for every plan; the gap is to it */
	if (res.bound_ns >= 0)
		printf("bound:           %.3f ms (no plan within the budget recomputes less%s)\n",
		       res.bound_ns / 1e6,
		       o.offload_gbps > 0 ? "; offload frees memory at no recompute cost" : "");
	if (res.gap >= 0)
		printf("gap:             %.2f%% (to the bound)\n", 100 * res.gap);
	else
		printf("gap:             n/a\n");
	if (out) {
		rc = pl_plan_save_json(p, out, err, sizeof(err));
		if (rc)
			fprintf(stderr, "remat-plan: %s\n", err);
		else
			printf("plan:            %s\n", out);
	}
	pl_plan_free(p);
	pl_graph_free(g);
	return rc;
}
