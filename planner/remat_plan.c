/*
 * remat_plan.c — the `remat-plan` command: read a trace or a graph file,
 * plan for a budget, check the plan with the evaluator, write it.
 *
 * Exit status: 0 plan written, 2 bad input or usage, 3 the budget cannot
 * be reached (the message says the smallest peak found), 1 internal error.
 */
#include "planner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: remat-plan TRACE_DIR|GRAPH.json --budget B [--planner ilp|greedy|dtr|none]\n"
	       "                  [--time-limit S] [--no-segments] [--exclude ID,ID,...] [-v]\n"
	       "                  [--plan-version 1|2] [--progress] [-o PLAN.json]\n"
	       "  B: bytes with an optional K/M/G/T suffix (powers of 1024), or a\n"
	       "     percentage of the baseline peak (50%%)\n"
	       "  --exclude: buffer ids (of the trace) never to evict or rebuild\n"
	       "  --plan-version: 1 (default) plans only what a version 1 runtime runs;\n"
	       "     2 adds stashes (replays of ops that update buffers in place) and\n"
	       "     buffers kept unmapped at the iteration boundary\n"
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

int main(int argc, char **argv)
{
	const char *input = NULL, *budget_s = NULL, *out = NULL, *exclude = NULL, *rehash = NULL;
	struct pl_options o;
	pl_options_default(&o);
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
				fprintf(
				    stderr,
				    "remat-plan: unknown planner '%s' (ilp, greedy, dtr, none)\n",
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
	if (!input || !budget_s) {
		fprintf(stderr, "remat-plan: %s\n",
		        !input ? "no input given" : "--budget is required");
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
		if (rc == PL_EBUDGET)
			fprintf(stderr, "remat-plan: smallest reachable peak: %s (%lld bytes)\n",
			        human(res.min_peak, b1, sizeof(b1)), (long long)res.min_peak);
		pl_graph_free(g);
		return rc;
	}
	double iter = (double)(res.iteration_ns > 0 ? res.iteration_ns : 1);
	pl_progress(
	    &o, "done: plan by %s, peak %lld bytes, recompute %.3f ms (%.1f%% of the iteration)",
	    res.planner, (long long)res.peak, res.recompute_ns / 1e6,
	    100.0 * (double)res.recompute_ns / iter);
	printf("planned peak:    %s (%lld bytes)\n", human(res.peak, b1, sizeof(b1)),
	       (long long)res.peak);
	printf("bytes saved:     %s (%.1f%% of the peak)\n",
	       human(res.baseline_peak - res.peak, b2, sizeof(b2)),
	       100.0 * (double)(res.baseline_peak - res.peak) / (double)res.baseline_peak);
	printf("buffers evicted: %d (%d replays)\n", res.evicted_buffers, res.replays);
	printf("recompute time:  %.3f ms (%.2f%% of the iteration)\n", res.recompute_ns / 1e6,
	       100.0 * (double)res.recompute_ns / iter);
	printf("planner:         %s (%d candidates)\n", res.planner, res.candidates);
	printf("solve time:      %.3f s\n", res.solve_s);
	if (res.gap >= 0)
		printf("gap:             %.2f%% (LP bound %.3f ms)\n", 100 * res.gap,
		       res.lp_bound / 1e6);
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
