/* remat: the one command for users (`remat run|trace|plan|report`).
 *
 * main.c reads the command line and holds the help text (the man page is
 * generated from it); job.c runs the user's command under libremat and
 * follows its log; summary.c reads that log back into the summary printed
 * at the end; tools.c finds libremat.so, remat-plan and remat-report
 * relative to the remat executable, in a build tree or an installed prefix.
 */
#ifndef REMAT_TOOL_H
#define REMAT_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of remat itself (a job's own status is passed through). */
enum {
	REMAT_EXIT_USAGE = 2,      /* bad command line */
	REMAT_EXIT_FAILED = 125,   /* remat could not run the job (library missing, ...) */
	REMAT_EXIT_NOEXEC = 126,   /* the command is not executable */
	REMAT_EXIT_NOTFOUND = 127, /* the command was not found */
};

struct remat_job {
	bool run;           /* run mode; trace mode otherwise */
	const char *budget; /* --budget, or NULL (then REMAT_BUDGET from the environment) */
	bool verify;        /* --verify */
	const char *trace_dir;
	int progress; /* 1 show libremat's progress lines, 0 not, -1 on a terminal */
	bool report;  /* write report.html and timeline.json into the trace directory */
	char **argv;  /* the command */
};

/* tools.c: PATH of a file next to the remat executable ("remat-plan"), or
 * in the install layout's lib/ for the library; 0 when it exists. */
int remat_find_tool(const char *name, char *path, size_t len);
int remat_find_library(char *path, size_t len);

/* job.c: runs the job; returns the exit status remat should give. */
int remat_job_run(const struct remat_job *job);
/* Runs remat-plan or remat-report with argv (argv[0] is replaced). */
int remat_exec_tool(const char *name, char **argv);

/* summary.c: what libremat's log says happened. */
struct remat_outcome {
	int64_t budget, baseline_peak, planned_peak, measured_peak;
	bool plan_applied;
	char planner[32];
	char plan_path[4096];
	char trace_written[4096]; /* "" when no trace was written */
	long long iterations, evictions, replays, unplanned, offloads;
	double ms_without, ms_with; /* medians of the iteration time, 0: not measured */
	long long n_without, n_with;
	char why_no_plan[512]; /* the last message saying why no plan applies */
};
void remat_outcome_read(FILE *log, struct remat_outcome *o);
void remat_summary_print(FILE *f, const struct remat_job *job, const struct remat_outcome *o,
                         const char *log_path, const char *report, const char *timeline);

#endif
