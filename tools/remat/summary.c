/* The summary at the end of `remat run` and `remat trace`, from the lines
 * libremat wrote to its log at REMAT_LOG=1 (the job and remat share no
 * other channel; tests/cli/remat_run.sh holds these lines to their
 * wording). */
#include "remat.h"

#include <string.h>

/* After `key` in line, or NULL. */
static const char *after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	return p ? p + strlen(key) : NULL;
}

static void copy_word(char *dst, size_t len, const char *src)
{
	size_t n = strcspn(src, " \n");
	snprintf(dst, len, "%.*s", (int)(n < len ? n : len - 1), src);
}

static void read_line(const char *line, struct remat_outcome *o)
{
	const char *p;
	long long a, b, c, d, e = 0;
	double x, y;
	if ((p = after(line, "libremat: budget: ")) && sscanf(p, "%lld bytes", &a) == 1) {
		o->budget = a;
		if ((p = after(line, "baseline peak, ")) || (p = after(line, "baseline peak is ")))
			sscanf(p, "%lld", &b), o->baseline_peak = b;
	} else if ((p = after(line, "libremat: new plan ")) ||
	           (p = after(line, "libremat: cached plan "))) {
		copy_word(o->plan_path, sizeof(o->plan_path), p);
		if ((p = after(p, "(planner ")))
			sscanf(p, "%31[^:)]", o->planner);
	} else if ((p = after(line, "applied from iteration ")) &&
	           sscanf(p, "%lld: planned peak %lld", &a, &b) == 2) {
		o->plan_applied = true;
		o->planned_peak = b;
	} else if ((p = after(line, "run mode: physical peak ")) && sscanf(p, "%lld", &a) == 1) {
		o->measured_peak = a;
	} else if ((p = after(line, "run mode: ")) &&
	           sscanf(p,
	                  "%lld iterations, %lld evictions, %lld replays, %lld unplanned rebuilds, "
	                  "%lld offloads",
	                  &a, &b, &c, &d, &e) >= 4) {
		o->iterations = a, o->evictions = b, o->replays = c, o->unplanned = d;
		o->offloads = e;
	} else if ((p = after(line, "run mode: iteration time ")) &&
	           sscanf(
	               p,
	               "%lf ms without the plan (median of %lld), %lf ms with it (median of %lld)",
	               &x, &a, &y, &b) == 4) {
		o->ms_without = x, o->n_without = a, o->ms_with = y, o->n_with = b;
	} else if ((p = after(line, "libremat: trace written to "))) {
		copy_word(o->trace_written, sizeof(o->trace_written), p);
	} else if (strstr(line, "unmodified") || strstr(line, "before remat-plan finished")) {
		/* the last word on why no plan applies */
		p = after(line, "libremat: ");
		snprintf(o->why_no_plan, sizeof(o->why_no_plan), "%.500s", p ? p : line);
		o->why_no_plan[strcspn(o->why_no_plan, "\n")] = '\0';
	}
}

void remat_outcome_read(FILE *log, struct remat_outcome *o)
{
	char line[4096];
	memset(o, 0, sizeof(*o));
	if (!log)
		return;
	rewind(log);
	while (fgets(line, sizeof(line), log))
		read_line(line, o);
}

static const char *mib(int64_t b, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f MiB", (double)b / (1024.0 * 1024.0));
	return buf;
}

void remat_summary_print(FILE *f, const struct remat_job *job, const struct remat_outcome *o,
                         const char *log_path, const char *report, const char *timeline)
{
	char a[32], b[32], c[32];
	fprintf(f, "remat: summary\n");
	if (job->run) {
		if (o->baseline_peak)
			fprintf(
			    f, "  peak       %s without libremat, %s with it%s (budget %s)\n",
			    mib(o->baseline_peak, a, sizeof(a)),
			    o->measured_peak ? mib(o->measured_peak, b, sizeof(b)) : "not measured",
			    o->measured_peak ? " (measured)" : "", mib(o->budget, c, sizeof(c)));
		if (o->plan_applied) {
			fprintf(f,
			        "  plan       %s, planned peak %s: %lld evictions, %lld replays "
			        "and %lld "
			        "offloads in %lld iterations (%lld unplanned rebuilds)\n",
			        o->planner[0] ? o->planner : "?",
			        mib(o->planned_peak, a, sizeof(a)), o->evictions, o->replays,
			        o->offloads, o->iterations, o->unplanned);
			if (o->n_without && o->ms_without > 0)
				fprintf(
				    f,
				    "  overhead   %+.1f%% time per iteration, measured: %.3f ms "
				    "with "
				    "the plan (median of %lld), %.3f ms without (median of %lld)\n",
				    100.0 * (o->ms_with - o->ms_without) / o->ms_without,
				    o->ms_with, o->n_with, o->ms_without, o->n_without);
			else
				fprintf(
				    f,
				    "  overhead   not measured: no iteration ran without the plan "
				    "after the profile (the plan was ready or cached before one "
				    "finished)\n");
		} else {
			fprintf(f, "  plan       none applied: %s\n",
			        o->why_no_plan[0] ? o->why_no_plan
			                          : "the job ended before a plan arrived (run it "
			                            "longer: the plan is cached for the next run)");
		}
	}
	if (o->trace_written[0])
		fprintf(f, "  trace      %s\n", o->trace_written);
	else
		fprintf(f, "  trace      none written (the job ended before an iteration was "
		           "profiled)\n");
	if (report)
		fprintf(f, "  report     %s (timeline for ui.perfetto.dev: %s)\n", report,
		        timeline);
	fprintf(f, "  log        %s\n", log_path);
}
