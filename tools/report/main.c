/* remat-report: what one traced training iteration looks like, and what a
 * plan does to it.  Exit 0 on success, 2 on bad input (one message). */
#include "report.h"

#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: remat-report [options] TRACE_DIR|GRAPH.json\n"
	        "       remat-report --sweep SWEEP.json [--html OUT.html]\n"
	        "\n"
	        "Summarizes one training iteration traced by libremat (REMAT_TRACE_DIR), or\n"
	        "the iteration a graph file describes (docs/graph-format.md):\n"
	        "iteration, ops, top kernels, the memory split, idle activations, a memory\n"
	        "chart and the CUPTI cross-check.\n"
	        "\n"
	        "  --plan PLAN.json         also show what the plan evicts and rebuilds and\n"
	        "                           the memory curve with it against its budget\n"
	        "  --html OUT.html          write a self-contained HTML page with the same\n"
	        "                           report and SVG charts\n"
	        "  --export-graph OUT.json  write the trace as graph JSON (docs/graph-format.md)\n"
	        "  --perfetto OUT.json      write the iteration as a timeline (Chrome trace\n"
	        "                           events) for ui.perfetto.dev or chrome://tracing:\n"
	        "                           a track per stream, the plan's rebuilds and\n"
	        "                           evictions, memory counters with and without it\n"
	        "  --sweep SWEEP.json       the budget curve of remat-plan --sweep: recompute\n"
	        "                           time at each budget (with --html: an SVG chart)\n"
	        "  --width N                chart columns (default 72)\n"
	        "  --ascii                  plain ASCII chart (default: Unicode blocks in a\n"
	        "                           UTF-8 locale)\n"
	        "  --no-color               no colour (also when NO_COLOR is set or stdout is\n"
	        "                           not a terminal)\n"
	        "  -h, --help               this text\n"
	        "\n"
	        "Exit status: 0 on success, 2 on a bad argument, trace or plan file.\n");
}

/* The page's link to the timeline: its name when both sit in one
 * directory, else its absolute path. */
static const char *link_to(const char *file, const char *page, char *buf, size_t len)
{
	char dir[4096], *real = realpath(file, NULL), *pdir;
	snprintf(dir, sizeof(dir), "%s", page);
	pdir = strrchr(dir, '/') ? (*strrchr(dir, '/') = '\0', realpath(dir[0] ? dir : "/", NULL))
	                         : realpath(".", NULL);
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	if (real && pdir && !strncmp(real, pdir, strlen(pdir)) &&
	    !strcmp(real + strlen(pdir) + (strcmp(pdir, "/") != 0), base))
		snprintf(buf, len, "%s", base);
	else
		snprintf(buf, len, "%s", real ? real : file);
	free(real);
	free(pdir);
	return buf;
}

static int fail(const char *msg)
{
	fprintf(stderr, "remat-report: %s\n", msg);
	return 2;
}

/* The command line. */
struct opts {
	const char *plan, *html, *graph, *timeline, *sweep;
	bool ascii, no_color;
	int width;
};

/* Unicode in a UTF-8 locale unless --ascii; colour on a terminal unless
 * --no-color or NO_COLOR. */
static struct rr_style style(const struct opts *o)
{
	struct rr_style st = {.width = o->width, .height = 12};
	setlocale(LC_CTYPE, "");
	st.unicode = !o->ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	st.color = !o->no_color && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	return st;
}

/* --sweep: the curve alone (no trace needed). */
static int sweep_report(const struct opts *o, int alone)
{
	if (!alone)
		return fail("--sweep shows a sweep file on its own: no trace or graph with it");
	struct pl_sweep sw;
	char err[1024];
	if (pl_sweep_load_json(o->sweep, &sw, err, sizeof(err)))
		return fail(err);
	const char *name = sw.graph;
	struct rr_style st = style(o);
	int rc = 0;
	if (o->html && rr_write_sweep_html(o->html, &sw, name, err, sizeof(err)))
		rc = fail(err);
	if (!rc) {
		rr_print_sweep(stdout, &sw, name, &st, o->width);
		if (o->html)
			printf("\npage written to %s\n", o->html);
	}
	pl_sweep_free(&sw);
	return rc;
}

/* -1 to go on, else the exit status (--help: 0). */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
	    {"plan", required_argument, NULL, 'p'},
	    {"html", required_argument, NULL, 'H'},
	    {"export-graph", required_argument, NULL, 'g'},
	    {"perfetto", required_argument, NULL, 'P'},
	    {"sweep", required_argument, NULL, 's'},
	    {"width", required_argument, NULL, 'w'},
	    {"ascii", no_argument, NULL, 'a'},
	    {"no-color", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->plan = optarg;
			break;
		case 'H':
			o->html = optarg;
			break;
		case 'g':
			o->graph = optarg;
			break;
		case 'P':
			o->timeline = optarg;
			break;
		case 's':
			o->sweep = optarg;
			break;
		case 'w':
			o->width = (int)strtol(optarg, &end, 10);
			if (*end || o->width < 20 || o->width > 200)
				return fail("--width wants a number of columns from 20 to 200");
			break;
		case 'a':
			o->ascii = true;
			break;
		case 'n':
			o->no_color = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	return -1;
}

/* The files first: if one cannot be written, the one message is all. */
static int write_files(const struct opts *o, const struct rr_trace *t, const struct rr_stats *s,
                       const struct rr_plan *plan)
{
	char err[1024], href[4096];
	if (o->timeline && rr_write_perfetto(o->timeline, t, plan, err, sizeof(err)) != 0)
		return fail(err);
	if (o->html &&
	    rr_write_html(o->html, t, s, plan,
	                  o->timeline ? link_to(o->timeline, o->html, href, sizeof(href)) : NULL,
	                  err, sizeof(err)) != 0)
		return fail(err);
	return 0;
}

/* The report on stdout, and what was written. */
static void print_report(const struct opts *o, const char *dir, const struct rr_trace *t,
                         const struct rr_stats *s, const struct rr_plan *plan)
{
	struct rr_style st = style(o);
	rr_print_summary(stdout, t, s, &st);
	if (plan)
		rr_print_plan(stdout, t, s, plan, &st);
	fprintf(stdout, "\n%s\n",
	        plan ? "MEMORY OVER THE ITERATION, BEFORE AND WITH THE PLAN"
	             : "MEMORY OVER THE ITERATION");
	rr_print_chart(stdout, t, s, plan, &st);
	if (!plan)
		fprintf(stdout,
		        "\nTo plan for a budget: remat-plan %s --budget 80%% -o plan.json\n"
		        "then: remat-report --plan plan.json %s\n",
		        dir, dir);
	if (o->graph)
		fprintf(stdout, "\ngraph written to %s\n", o->graph);
	if (o->timeline)
		fprintf(stdout, "%stimeline written to %s (open it in ui.perfetto.dev)\n",
		        o->graph ? "" : "\n", o->timeline);
	if (o->html)
		fprintf(stdout, "%spage written to %s\n", o->graph || o->timeline ? "" : "\n",
		        o->html);
}

/* The report of the trace or graph at dir. */
static int report(const struct opts *o, const char *dir)
{
	char err[1024];
	struct rr_trace t;
	struct rr_stats s;
	struct rr_plan plan;
	if (rr_load_trace(dir, &t, err, sizeof(err)) != 0)
		return fail(err);
	if (o->graph && rr_export_graph(&t, o->graph, err, sizeof(err)) != 0) {
		rr_trace_free(&t);
		return fail(err);
	}
	if (o->plan && rr_load_plan(o->plan, &t, &plan, err, sizeof(err)) != 0) {
		rr_trace_free(&t);
		return fail(err);
	}
	rr_analyze(&t, &s);
	int rc = write_files(o, &t, &s, o->plan ? &plan : NULL);
	if (!rc)
		print_report(o, dir, &t, &s, o->plan ? &plan : NULL);
	rr_stats_free(&s);
	if (o->plan)
		rr_plan_free(&plan);
	rr_trace_free(&t);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = {.width = 72};
	struct stat sb;
	char err[1024];
	int rc = parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.sweep)
		return sweep_report(&o, optind == argc);
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	const char *dir = argv[optind];
	if (stat(dir, &sb) != 0) {
		snprintf(err, sizeof(err), "%s: no such trace directory or graph file", dir);
		return fail(err);
	}
	return report(&o, dir);
}
