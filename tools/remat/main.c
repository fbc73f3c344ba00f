/* remat — run a training job within a GPU memory budget, trace it, plan
 * for it, report on it.  The help text below is also the man page
 * (help2man, mk/install.mk). */
#include "remat.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#ifndef REMAT_VERSION
#define REMAT_VERSION "0.1"
#endif

static const char usage_text[] =
    "Usage: remat run [--budget B] [--verify] [--trace-dir D] [--progress|--quiet] -- CMD "
    "[ARG...]\n"
    "  or:  remat trace [--trace-dir D] [--progress|--quiet] -- CMD [ARG...]\n"
    "  or:  remat plan TRACE_DIR|GRAPH.json --budget B [remat-plan options]\n"
    "  or:  remat report [remat-report options] TRACE_DIR|GRAPH.json\n"
    "Run a GPU training job within a memory budget it would otherwise overflow,\n"
    "with no change to its code: libremat.so is preloaded into the job, learns one\n"
    "training iteration, plans which activations to drop and rebuild, and applies\n"
    "the plan to the iterations that follow, with bit-identical results.\n";

static const char run_text[] =
    "\n"
    "remat run: the job under libremat in run mode (profile, plan, train within\n"
    "the budget).  At the end it prints a summary on stderr: the peak without and\n"
    "with libremat, the budget, evictions and rebuilds, the overhead measured, and\n"
    "where the trace, the report (report.html) and the timeline (timeline.json)\n"
    "are.  The job's own output is untouched.\n"
    "\n"
    "  -b, --budget=B        memory budget: bytes (12G, 1536M, 1.5G) or a\n"
    "                        percentage of the job's peak without libremat (60%)\n"
    "      --verify          verify every planned rebuild bit for bit once before\n"
    "                        the plan applies (first run of a new model)\n";

static const char common_text[] =
    "  -d, --trace-dir=D     trace, log and report directory (default ./remat-trace)\n"
    "      --progress        show libremat's progress lines (profiling, planning) on\n"
    "                        stderr; the default when stderr is a terminal\n"
    "  -q, --quiet           no progress lines\n"
    "      --no-report       do not write report.html and timeline.json\n";

static const char trace_text[] =
    "\n"
    "remat trace: the job under libremat in trace mode: one iteration is recorded\n"
    "into the trace directory and nothing else changes.\n";

static const char tools_text[] =
    "\n"
    "remat plan: remat-plan with these arguments (remat plan --help).\n"
    "\n"
    "remat report: remat-report with these arguments (remat report --help), e.g.\n"
    "  remat report --plan plan.json --html page.html --perfetto timeline.json D\n";

static const char tail_text[] =
    "\n"
    "  -h, --help            this text\n"
    "  -V, --version         the version\n"
    "\n"
    "Environment:\n"
    "  remat sets LD_PRELOAD (libremat.so appended), REMAT_MODE, REMAT_TRACE_DIR,\n"
    "  REMAT_LOG=1 (unless set higher), REMAT_LOG_FILE (D/remat.log), REMAT_BUDGET\n"
    "  and REMAT_VERIFY from its options, and REMAT_PLANNER (the remat-plan beside\n"
    "  remat) unless set; other REMAT_* variables pass through.  libremat.so,\n"
    "  remat-plan and remat-report are found next to remat (a build tree) or in\n"
    "  ../lib and beside it (an installed prefix).\n"
    "\n"
    "Exit status:\n"
    "  run and trace exit with the job's status (128+N when a signal N ended it);\n"
    "  2 for a bad command line; 125 when remat could not start the job\n"
    "  (libremat.so missing, trace directory not writable); 126 when the command\n"
    "  cannot be executed; 127 when it is not found.  plan and report exit as\n"
    "  remat-plan and remat-report do: 0 success, 2 bad input, 3 (plan) the budget\n"
    "  cannot be reached, 1 internal error.\n"
    "\n"
    "Examples:\n"
    "  remat run --budget 60% -- python train.py\n"
    "\n"
    "  remat run --budget 20G -- torchrun --nproc_per_node=8 train.py\n"
    "\n"
    "  remat trace -- ./train --iters 5 && remat report remat-trace\n";

static void help(FILE *f, const char *cmd)
{
	fputs(usage_text, f);
	if (!cmd || !strcmp(cmd, "run")) {
		fputs(run_text, f);
		fputs(common_text, f);
	}
	if (!cmd || !strcmp(cmd, "trace")) {
		fputs(trace_text, f);
		if (cmd)
			fputs(common_text, f);
	}
	if (!cmd)
		fputs(tools_text, f);
	fputs(tail_text, f);
}

static int bad(const char *cmd, const char *msg, const char *arg)
{
	fprintf(stderr, "remat: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	fprintf(stderr, "Try 'remat %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return REMAT_EXIT_USAGE;
}

static int job(bool run, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"budget", required_argument, NULL, 'b'},
	    {"verify", no_argument, NULL, 'v'},
	    {"trace-dir", required_argument, NULL, 'd'},
	    {"progress", no_argument, NULL, 'p'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"no-report", no_argument, NULL, 'n'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *cmd = run ? "run" : "trace";
	struct remat_job j = {
	    .run = run, .trace_dir = "remat-trace", .progress = -1, .report = true};
	int c;
	/* "+": options end at the command, whose own options are its own. */
	while ((c = getopt_long(argc, argv, run ? "+b:d:qh" : "+d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (!run)
				return bad(cmd, "--budget is for remat run", NULL);
			j.budget = optarg;
			break;
		case 'v':
			if (!run)
				return bad(cmd, "--verify is for remat run", NULL);
			j.verify = true;
			break;
		case 'd':
			j.trace_dir = optarg;
			break;
		case 'p':
			j.progress = 1;
			break;
		case 'q':
			j.progress = 0;
			break;
		case 'n':
			j.report = false;
			break;
		case 'h':
			help(stdout, cmd);
			return 0;
		default:
			return bad(cmd, "bad option", NULL);
		}
	}
	if (optind >= argc)
		return bad(cmd, "no command to run (remat CMD... needs -- CMD [ARG...])", NULL);
	if (!*j.trace_dir)
		return bad(cmd, "--trace-dir is empty", NULL);
	j.argv = argv + optind;
	return remat_job_run(&j);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return bad(NULL, "no subcommand (run, trace, plan, report)", NULL);
	const char *sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
		help(stdout, NULL);
		return 0;
	}
	if (!strcmp(sub, "-V") || !strcmp(sub, "--version")) {
		printf("remat %s\n", REMAT_VERSION);
		return 0;
	}
	/* getopt sees the subcommand as argv[0]. */
	if (!strcmp(sub, "run") || !strcmp(sub, "trace"))
		return job(!strcmp(sub, "run"), argc - 1, argv + 1);
	if (!strcmp(sub, "plan"))
		return remat_exec_tool("remat-plan", argv + 1);
	if (!strcmp(sub, "report"))
		return remat_exec_tool("remat-report", argv + 1);
	return bad(NULL, "unknown subcommand", sub);
}
