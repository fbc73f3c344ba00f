/*
 * progress.c — one line per planning stage on stderr, "remat-plan:
 * progress: <seconds> s: <stage>[: <what is known>]", when asked for
 * (remat-plan --progress or -v).  libremat starts remat-plan with
 * --progress and relays these lines from the planner's log into the job's
 * log at REMAT_LOG=1 (acquire/), which `remat run` shows on a terminal.
 */
#include "search.h"

#include <stdarg.h>
#include <stdio.h>

void pl_progress(const struct pl_options *o, const char *fmt, ...)
{
	/* Seconds since the first line: remat-plan's first is before loading. */
	static double t0;
	if (!o || !o->progress)
		return;
	double now = pl_now();
	if (t0 == 0)
		t0 = now;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line: the log is shared with nothing, but a reader
	 * polling it must never see half a line as a whole one. */
	fprintf(stderr, "remat-plan: progress: %.2f s: %s\n", now - t0, line);
	fflush(stderr);
}
