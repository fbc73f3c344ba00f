/*
 * plan_bench.c — planner benchmark.
 *
 *   plan_bench checkmate DIR   Checkmate training graphs: each planner's extra
 *                              compute at the README's budgets next to the
 *                              published optimum, and the smallest budget
 *                              each planner reaches next to the op-level
 *                              lower bound.
 *   plan_bench dtr DIR         DTR's PyTorch operator logs (Transformer,
 *                              ResNet-32): each planner's extra compute and
 *                              solve time at 90..25% of the baseline peak next
 *                              to DTR's own figure, and the smallest budget
 *                              each planner reaches next to the lower bound.
 *   plan_bench generated [NAME] synthetic graphs (chains, ResNet-like,
 *                              transformer-like; 1k/10k/100k ops) at 90..25%
 *                              of the per-iteration memory: recompute
 *                              overhead and solve time per planner; with
 *                              NAME only the graphs whose name holds it
 *                              (resnet-9994, transformer, -100000).
 *
 *   plan_bench cover-lp FAMILY NOPS
 *                              the proven bound next to the LP optimum of the
 *                              same relaxation over every position at once
 *                              (cover_lp.c), at 90..25%: what a Lagrangian
 *                              over all positions could add to the bound.
 *
 * BENCH_FULL=1 also runs the ILP on every 10k-op case and on 100k ops.
 *
 * Each cell: extra compute, solve time, and the gap to the proven bound
 * (bound.c: no plan within the budget recomputes less).  Under each row,
 * "was:" repeats the row of the same graph and budget from the previous
 * figures (BENCH_PREVIOUS, default bench/planner/previous.txt: the output
 * of an earlier run), so a change shows side by side.
 */
#include "gen.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run {
	int rc, cands;
	double pct, solve, gap;
	int64_t peak;
	char planner[16];
};

static struct run plan(const struct pl_graph *g, int64_t budget, enum pl_planner p, double tl)
{
	struct pl_options o;
	pl_options_default(&o);
	o.planner = p;
	o.time_limit_s = tl;
	o.no_min_peak = 1;
	struct pl_plan *pl = NULL;
	struct pl_result res;
	struct run r = {0};
	double t0 = pl_now();
	r.rc = pl_plan_make(g, budget, &o, &pl, &res);
	r.solve = pl_now() - t0;
	r.pct = 100.0 * (double)res.recompute_ns / (double)(g->iteration_ns ? g->iteration_ns : 1);
	r.gap = r.rc == 0 ? res.gap : -1;
	r.cands = res.candidates;
	r.peak = res.peak;
	snprintf(r.planner, sizeof(r.planner), "%s", res.planner);
	pl_plan_free(pl);
	return r;
}

static void cell(const struct run *r)
{
	if (r->rc == PL_EBUDGET)
		printf(" %8s %7.2fs %6s |", "unreach", r->solve, "");
	else if (r->rc)
		printf(" %8s %7s %6s |", "error", "", "");
	else if (r->gap >= 0)
		printf(" %7.2f%% %7.2fs %5.1f%% |", r->pct, r->solve, 100 * r->gap);
	else
		printf(" %7.2f%% %7.2fs %6s |", r->pct, r->solve, "n/a");
}

/* The previous figures' row that starts like this one, as "was:". */
static void previous(const char *key)
{
	static char *text;
	static int loaded;
	if (!loaded) {
		loaded = 1;
		const char *path = getenv("BENCH_PREVIOUS");
		FILE *f = fopen(path ? path : "bench/planner/previous.txt", "r");
		if (f) {
			fseek(f, 0, SEEK_END);
			long n = ftell(f);
			fseek(f, 0, SEEK_SET);
			text = n > 0 ? calloc((size_t)n + 1, 1) : NULL;
			if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
				free(text);
				text = NULL;
			}
			fclose(f);
		}
	}
	size_t k = strlen(key);
	for (const char *l = text; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		if (n > k && !strncmp(l, key, k) && strchr("| ", l[k])) {
			printf("%*s was:%.*s\n", (int)k - 5, "", (int)(n - k), l + k);
			return;
		}
		l = e ? e + 1 : NULL;
	}
}

/* Smallest budget a planner meets: bisection on pl_plan_make (the ILP
 * answers it directly: its min-peak MILP runs on an unreachable budget). */
static int64_t smallest(const struct pl_graph *g, enum pl_planner p, double tl)
{
	/* what the planner reports for a budget below all: a budget it then meets */
	struct pl_options o;
	pl_options_default(&o);
	o.planner = p;
	o.time_limit_s = tl;
	struct pl_plan *pl = NULL;
	struct pl_result res;
	if (pl_plan_make(g, 1, &o, &pl, &res) == PL_EBUDGET)
		return res.min_peak;
	pl_plan_free(pl);
	return 1;
}

static int checkmate(const char *dir)
{
	static const struct {
		const char *prefix;
		double budget;
		const char *optimal;
	} ref[] = {{"VGG16", 0.9, "+2.0%"},
	           {"VGG16", 0.83, "infeasible"},
	           {"fcn_8", 0.8, "+0.14%"},
	           {"MobileNet", 0.5, "+1.8% (0.16% gap)"}};
	static const enum pl_planner pls[] = {PL_PLANNER_GREEDY, PL_PLANNER_DTR, PL_PLANNER_CHAIN,
	                                      PL_PLANNER_ILP};
	DIR *d = opendir(dir);
	if (!d) {
		printf("checkmate graphs: %s not found, skipped\n", dir);
		return 0;
	}
	struct dirent *de;
	char *names[64];
	int n = 0;
	while ((de = readdir(d)) && n < 64)
		if (strstr(de->d_name, ".json"))
			names[n++] = strdup(de->d_name);
	closedir(d);
	for (int i = 0; i < n; i++) /* stable order */
		for (int j = i + 1; j < n; j++)
			if (strcmp(names[i], names[j]) > 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	printf("\n## Checkmate graphs: extra compute at the README budgets (fraction of the "
	       "no-remat peak)\n\n");
	printf("%-12s %6s | %-18s |%25s |%25s |%25s |%25s |\n", "graph", "budget",
	       "Checkmate optimum", "greedy", "dtr", "chain", "ilp");
	for (size_t k = 0; k < sizeof(ref) / sizeof(ref[0]); k++) {
		for (int i = 0; i < n; i++) {
			if (strncmp(names[i], ref[k].prefix, strlen(ref[k].prefix)))
				continue;
			char path[4096], err[512];
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			struct pl_graph *g;
			if (pl_graph_load(path, &g, err, sizeof(err))) {
				printf("%s\n", err);
				continue;
			}
			int64_t budget = (int64_t)(ref[k].budget * (double)g->baseline_peak);
			char key[64];
			snprintf(key, sizeof(key), "%-12s %6.2f", ref[k].prefix, ref[k].budget);
			printf("%s | %-18s |", key, ref[k].optimal);
			for (int q = 0; q < 4; q++) {
				struct run r = plan(g, budget, pls[q], 10);
				cell(&r);
			}
			printf("\n");
			previous(key);
			pl_graph_free(g);
		}
	}
	printf(
	    "\n## Checkmate graphs: smallest budget reached (fraction of the no-remat peak)\n\n");
	printf("%-52s | %7s | %7s | %7s | %7s | %11s |\n", "graph", "greedy", "dtr", "chain", "ilp",
	       "lower bound");
	for (int i = 0; i < n; i++) {
		char path[4096], err[512];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		struct pl_graph *g;
		if (pl_graph_load(path, &g, err, sizeof(err))) {
			printf("%s\n", err);
			free(names[i]);
			continue;
		}
		printf("%-52.52s |", names[i]);
		for (int q = 0; q < 4; q++)
			printf(" %7.3f |",
			       (double)smallest(g, pls[q], 10) / (double)g->baseline_peak);
		printf(" %11.3f |\n", (double)pl_graph_lower_bound(g) / (double)g->baseline_peak);
		fflush(stdout);
		pl_graph_free(g);
		free(names[i]);
	}
	return 0;
}

static const double fr[] = {0.90, 0.75, 0.50, 0.35, 0.25};

/* DTR's logs: budgets are fractions of the baseline peak, as in DTR's
 * paper and the folder's README, whose figures (DTR's simulator, h_DTR)
 * stand beside ours. */
static int dtr_graphs(const char *dir)
{
	static const struct {
		const char *file, *name;
		double dtr[5]; /* % extra compute at fr[] */
	} ref[] = {{"transformer.json", "Transformer", {0.90, 2.56, 5.84, 10.14, 13.66}},
	           {"resnet32.json", "ResNet-32", {1.31, 3.61, 10.68, 15.99, 22.49}}};
	static const enum pl_planner pls[] = {PL_PLANNER_GREEDY, PL_PLANNER_DTR, PL_PLANNER_CHAIN,
	                                      PL_PLANNER_ILP};
	printf("\n## DTR's PyTorch logs: extra compute (%% of the iteration) and solve time\n");
	printf("budget = f x baseline peak; time limit 30 s for the whole planning; each cell: "
	       "extra compute, solve time, gap to the proven bound\n\n");
	printf("%-12s %4s | %8s | %25s | %25s | %25s | %25s |\n", "graph", "f", "DTR", "greedy",
	       "dtr", "chain", "ilp");
	for (size_t k = 0; k < sizeof(ref) / sizeof(ref[0]); k++) {
		char path[4096], err[512];
		snprintf(path, sizeof(path), "%s/%s", dir, ref[k].file);
		struct pl_graph *g;
		if (pl_graph_load(path, &g, err, sizeof(err))) {
			printf("%s: %s, skipped\n", ref[k].name, err);
			continue;
		}
		for (int f = 0; f < 5; f++) {
			int64_t budget = (int64_t)(fr[f] * (double)g->baseline_peak);
			char key[64];
			snprintf(key, sizeof(key), "%-12s %4.2f", ref[k].name, fr[f]);
			printf("%s | %7.2f%% |", key, ref[k].dtr[f]);
			for (int q = 0; q < 4; q++) {
				struct run r = plan(g, budget, pls[q], 30);
				cell(&r);
			}
			printf("\n");
			previous(key);
			fflush(stdout);
		}
		printf(
		    "%-12s smallest budget reached: greedy %.3f, dtr %.3f, chain %.3f, ilp %.3f; "
		    "lower bound %.3f (%d ops, %d buffers)\n",
		    ref[k].name, (double)smallest(g, PL_PLANNER_GREEDY, 10) / g->baseline_peak,
		    (double)smallest(g, PL_PLANNER_DTR, 10) / g->baseline_peak,
		    (double)smallest(g, PL_PLANNER_CHAIN, 10) / g->baseline_peak,
		    (double)smallest(g, PL_PLANNER_ILP, 10) / g->baseline_peak,
		    (double)pl_graph_lower_bound(g) / g->baseline_peak, g->nops, g->nbufs);
		fflush(stdout);
		pl_graph_free(g);
	}
	return 0;
}

/* One table row per budget fraction f (budget = persistent + f x the rest):
 * greedy, dtr, and the ILP where bit k of ilp_rows is set. */
static void fraction_rows(const struct pl_graph *g, int ilp_limit_s, unsigned ilp_rows)
{
	int64_t pers = g->live[g->nops - 1] < g->live[0] ? g->live[g->nops - 1] : g->live[0];
	for (int k = 0; k < 5; k++) {
		int64_t budget = pers + (int64_t)(fr[k] * (double)(g->baseline_peak - pers));
		struct run rg = plan(g, budget, PL_PLANNER_GREEDY, 0);
		struct run rd = plan(g, budget, PL_PLANNER_DTR, 0);
		struct run rc = plan(g, budget, PL_PLANNER_CHAIN, 0);
		char key[64];
		snprintf(key, sizeof(key), "%-20.20s %4.2f", g->name, fr[k]);
		printf("%s | %8d |", key, rg.cands);
		cell(&rg);
		cell(&rd);
		cell(&rc);
		if (ilp_rows & (1u << k)) {
			struct run ri = plan(g, budget, PL_PLANNER_ILP, ilp_limit_s);
			cell(&ri);
			printf(" %s", ri.planner);
		} else {
			printf(" %25s |", "skipped");
		}
		printf("\n");
		previous(key);
		fflush(stdout);
	}
}

/* Graph files or trace directories, e.g. the trainers' exported graphs. */
static int files(int n, char **paths)
{
	printf("\n## Graphs from files (the trainers' traces, exported with remat-report "
	       "--export-graph)\n");
	printf("budget = persistent + f x (baseline peak - persistent); ILP time limit 10 s\n\n");
	printf("%-20s %4s | %-8s | %25s | %25s | %25s | %25s | %s\n", "graph", "f", "cands",
	       "greedy", "dtr", "chain", "ilp", "used");
	for (int i = 0; i < n; i++) {
		char err[512];
		struct pl_graph *g;
		if (pl_graph_load(paths[i], &g, err, sizeof(err))) {
			printf("%s\n", err);
			return 1;
		}
		/* Name rows by file: a trace's name is the whole command line. */
		const char *base = strrchr(paths[i], '/');
		char *name = strdup(base ? base + 1 : paths[i]);
		if (name) {
			free(g->name);
			g->name = name;
		}
		fraction_rows(g, 10, 0x1f);
		printf("%-20.20s %d ops, %d buffers, peak %.2f MiB\n", g->name, g->nops, g->nbufs,
		       g->baseline_peak / 1048576.0);
		pl_graph_free(g);
	}
	return 0;
}

static int generated(const char *only)
{
	static const int32_t sizes[] = {1000, 10000, 100000};
	int full = getenv("BENCH_FULL") != NULL;
	printf("\n## Generated graphs: recompute overhead (%% of the iteration) and solve time\n");
	printf("budget = persistent + f x (baseline peak - persistent); time limit 2 s "
	       "(1k ops), 30 s (10k), 60 s (100k)%s\n\n",
	       full ? "" : "; ILP on 10k ops only at f = 0.5, not on 100k (BENCH_FULL=1 for all)");
	printf("%-20s %4s | %-8s | %25s | %25s | %25s | %25s | %s\n", "graph", "f", "cands",
	       "greedy", "dtr", "chain", "ilp", "used");
	for (int s = 0; s < 3; s++) {
		for (int fam = 0; fam < 4; fam++) {
			double t0 = pl_now();
			struct pl_graph *g = gen_graph((enum gen_family)fam, sizes[s], 1 + fam);
			if (!g)
				return 1;
			if (only && !strstr(g->name, only)) {
				pl_graph_free(g);
				continue;
			}
			double tgen = pl_now() - t0;
			fraction_rows(g,
			              sizes[s] <= 1000    ? 2
			              : sizes[s] <= 10000 ? 30
			                                  : 60,
			              sizes[s] <= 1000 || full ? 0x1f
			              : sizes[s] <= 10000      ? 0x4
			                                       : 0);
			printf("%-20s load/generate %.3f s, %d ops, %d buffers, peak %.0f MiB\n",
			       g->name, tgen, g->nops, g->nbufs, g->baseline_peak / 1048576.0);
			pl_graph_free(g);
		}
	}
	return 0;
}

/* The bound next to the LP over every position (small graphs). */
static int cover(int fam, int32_t nops)
{
	struct pl_graph *g = gen_graph((enum gen_family)fam, nops, 1 + fam);
	if (!g)
		return 1;
	int64_t pers = g->live[g->nops - 1] < g->live[0] ? g->live[g->nops - 1] : g->live[0];
	printf("%-20s %4s | %12s | %12s | %s\n", "graph", "f", "bound ms", "all-pos LP ms",
	       "LP / bound");
	for (int k = 0; k < 5; k++) {
		int64_t budget = pers + (int64_t)(fr[k] * (double)(g->baseline_peak - pers));
		int64_t bound, peak_lb;
		double lp;
		if (pl_cost_bound(g, budget, 0, &bound, &peak_lb) || cover_lp(g, budget, &lp))
			return 1;
		printf("%-20.20s %4.2f | %12.3f | %12.3f | %.4f\n", g->name, fr[k], bound / 1e6,
		       lp / 1e6, bound > 0 ? lp / (double)bound : 0);
		fflush(stdout);
	}
	pl_graph_free(g);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "checkmate"))
		return checkmate(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "dtr"))
		return dtr_graphs(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "generated"))
		return generated(argc >= 3 ? argv[2] : NULL);
	if (argc >= 4 && !strcmp(argv[1], "cover-lp"))
		return cover(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "files"))
		return files(argc - 2, argv + 2);
	if (argc >= 5 && !strcmp(argv[1], "export")) {
		/* plan_bench export FAMILY(0-3) NOPS OUT.json: a generated graph as a file */
		char err[512];
		struct pl_graph *g = gen_graph((enum gen_family)atoi(argv[2]), atoi(argv[3]), 1);
		if (!g || pl_graph_save_json(g, argv[4], err, sizeof(err))) {
			fprintf(stderr, "export failed\n");
			return 1;
		}
		pl_graph_free(g);
		return 0;
	}
	fprintf(stderr,
	        "usage: plan_bench checkmate DIR | dtr DIR | generated [NAME] | files GRAPH... | "
	        "export FAMILY NOPS OUT.json | cover-lp FAMILY NOPS\n");
	return 2;
}
