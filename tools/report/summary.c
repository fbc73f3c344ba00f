/* The terminal report's tables: iteration, ops, kernels, memory split,
 * idle gaps, CUPTI cross-check. */
#include "report.h"

#include <inttypes.h>
#include <string.h>

#define NAME_W 40

/* Shared with plan_view.c, so a plan's sections look like the trace's. */
void rr_heading(FILE *f, const struct rr_style *st, const char *title)
{
	if (st->color)
		fprintf(f, "\n\033[1m%s\033[0m\n", title);
	else
		fprintf(f, "\n%s\n", title);
}

/* Long C++ kernel names keep their start, which names the kernel. */
static const char *clip(const char *s, char *buf, size_t len)
{
	if (strlen(s) < len)
		return s;
	snprintf(buf, len, "%.*s...", (int)len - 4, s);
	return buf;
}

static void print_header(FILE *f, const struct rr_trace *t)
{
	char a[32], b[32];

	fprintf(f, "remat-report: %s\n", t->path);
	if (t->g->name && *t->g->name)
		fprintf(f, "  command   %s\n", t->g->name);
	if (t->info->is_trace)
		fprintf(f, "  device    %s, %s, granularity %s\n",
		        *t->info->device ? t->info->device : "?",
		        rr_bytes(t->info->device_memory, a, sizeof(a)),
		        rr_bytes(t->g->granularity, b, sizeof(b)));
	else
		fprintf(f, "  graph file, granularity %s\n",
		        rr_bytes(t->g->granularity, b, sizeof(b)));
	fprintf(f, "  graph     %s\n", t->graph_hash);
}

static void print_iteration(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                            const struct rr_style *st)
{
	char a[32];

	rr_heading(f, st, "ITERATION");
	if (t->info->is_trace)
		fprintf(
		    f,
		    "  period     %d ops per iteration (%d iterations seen before the profile)\n",
		    t->period, t->info->iterations_seen);
	else
		fprintf(f, "  period     %d ops per iteration\n", t->period);
	fprintf(f, "  duration   %s (sum of op durations", rr_ns(t->duration_ns, a, sizeof(a)));
	if (s->unknown_duration_ops)
		fprintf(f, "; %d op%s without a duration", s->unknown_duration_ops,
		        s->unknown_duration_ops == 1 ? "" : "s");
	fprintf(f, ")\n");
}

static void print_copied(FILE *f, const struct rr_stats *s)
{
	static const char *dir[] = {"HtoD", "DtoH", "DtoD", "HtoH"};
	char a[32];
	bool any = false;

	for (int d = 0; d < 4; d++) {
		if (!s->copies[d])
			continue;
		fprintf(f, "%s%s %s", any ? ", " : "  copied      ", dir[d],
		        rr_bytes(s->copy_bytes[d], a, sizeof(a)));
		any = true;
	}
	if (any)
		fputc('\n', f);
}

static void print_ops(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                      const struct rr_style *st)
{
	static const char *dir[] = {"HtoD", "DtoH", "DtoD", "HtoH"};
	char left[5][64], copies[48] = "";
	int at = 0, via_w = 22;

	for (int i = 0; i < s->nvias; i++)
		if ((int)strlen(s->vias[i].via) > via_w)
			via_w = (int)strlen(s->vias[i].via);
	rr_heading(f, st, "OPS BY KIND                               BY ENTRY POINT");
	for (int d = 0; d < 4; d++)
		if (s->copies[d])
			at += snprintf(copies + at, sizeof(copies) - (size_t)at, "%s%s %d",
			               at ? ", " : "", dir[d], s->copies[d]);
	snprintf(left[0], 64, "kernels     %5d", s->kinds[PL_KIND_KERNEL]);
	snprintf(left[1], 64, "copies      %5d%s%s%s", s->kinds[PL_KIND_MEMCPY], at ? "  (" : "",
	         copies, at ? ")" : "");
	snprintf(left[2], 64, "memsets     %5d", s->kinds[PL_KIND_MEMSET]);
	snprintf(left[3], 64, "host funcs  %5d", s->kinds[PL_KIND_HOST_FUNC]);
	snprintf(left[4], 64, "total       %5d", t->nops);
	for (int i = 0; i < 5 || i < s->nvias; i++) {
		fprintf(f, "  %-40s", i < 5 ? left[i] : "");
		if (i < s->nvias)
			fprintf(f, "%-*s %5d", via_w, s->vias[i].via, s->vias[i].count);
		fprintf(f, "\n");
	}
	print_copied(f, s);
	fprintf(f, "  streams     %5d\n", s->streams);
	if (s->not_replayable) {
		fprintf(f, "  never replayed %2d:", s->not_replayable);
		for (int i = 0; i < s->nreasons && i < 4; i++)
			fprintf(f, "%s %s (%d)", i ? "," : "", s->reasons[i].why,
			        s->reasons[i].count);
		fprintf(f, "%s\n", s->nreasons > 4 ? ", ..." : "");
	}
}

static void print_kernels(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                          const struct rr_style *st, int top)
{
	char a[32], nb[NAME_W + 1];

	rr_heading(f, st, "TOP KERNELS BY TOTAL TIME");
	fprintf(f, "  %-*s %6s %12s %8s\n", NAME_W, "kernel", "count", "total", "% iter");
	for (int i = 0; i < s->nkernels && i < top; i++) {
		const struct rr_kernel_stat *k = &s->kernels[i];
		double pct =
		    t->duration_ns > 0 ? 100.0 * (double)k->total_ns / (double)t->duration_ns : 0;
		fprintf(f, "  %-*s %6d %12s %7.1f%%\n", NAME_W, clip(k->name, nb, sizeof(nb)),
		        k->count, rr_ns(k->total_ns, a, sizeof(a)), pct);
	}
	if (s->nkernels > top)
		fprintf(f, "  (%d more kernels)\n", s->nkernels - top);
}

static void print_memory(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                         const struct rr_style *st)
{
	char a[32], b[32], c[32], d[32];
	char title[96];

	snprintf(title, sizeof(title), "MEMORY (baseline peak %s, first reached at op %d)",
	         rr_bytes(s->peak, a, sizeof(a)), s->peak_op);
	rr_heading(f, st, title);
	fprintf(f,
	        "  persistent     %12s  live across the iteration boundary (weights, optimizer "
	        "state)\n",
	        rr_bytes(s->persistent_level, a, sizeof(a)));
	fprintf(f, "    buffers      %12s  %d buffers of at least the granularity\n",
	        rr_bytes(s->persistent_large, a, sizeof(a)), s->npersistent_large);
	fprintf(f,
	        "    small pool   %12s  %d persistent + %d per-iteration allocations under %s\n"
	        "                               (%s + %s requested), packed, never evicted\n",
	        rr_bytes(t->g->small_pool_bytes, a, sizeof(a)), s->npersistent_small,
	        s->nperiter_small, rr_bytes(t->g->granularity, b, sizeof(b)),
	        rr_bytes(s->persistent_small_req, c, sizeof(c)),
	        rr_bytes(s->periter_small_req, d, sizeof(d)));
	if (s->nshared_live)
		fprintf(f,
		        "    shared       %12s  %d chunks a region live across the boundary shares "
		        "with others\n",
		        rr_bytes(s->shared_live, a, sizeof(a)), s->nshared_live);
	if (s->nuntouched)
		fprintf(
		    f,
		    "    untouched    %12s  %d regions no op of the iteration touches (a pool's "
		    "free space):\n"
		    "                               kept, or parked on the host when offload is "
		    "on\n",
		    rr_bytes(s->untouched, a, sizeof(a)), s->nuntouched);
	fprintf(f,
	        "  per-iteration  %12s  at the peak (activations, temporaries; %d buffers in the "
	        "iteration)\n",
	        rr_bytes(s->peak - s->persistent_level, a, sizeof(a)), s->nperiter_large);
	if (s->nregions_dead)
		fprintf(f,
		        "    long-lived   %12s  %d regions of the program's own long-lived memory "
		        "(a pool,\n"
		        "                               an arena) proven dead across the boundary, "
		        "and %d chunks\n"
		        "                               they share: what they hold is below\n",
		        rr_bytes(s->regions_dead + s->shared_dead, a, sizeof(a)), s->nregions_dead,
		        s->nshared_dead);
	fprintf(f, "  peak           %12s\n", rr_bytes(s->peak, a, sizeof(a)));
	/* The figures above come from the buffers' lifetimes; the profiler also
	 * measured the device, and a difference is worth seeing. */
	if (t->info->peak_bytes > 0 && t->info->peak_bytes != s->peak)
		fprintf(f, "  measured       %12s  peak the profiler saw on the device\n",
		        rr_bytes(t->info->peak_bytes, a, sizeof(a)));
}

static void print_classes(FILE *f, const struct rr_stats *s, const struct rr_style *st)
{
	static const char *const name[RR_NCLASSES] = {
	    "parameters, state", "gradients", "activations", "workspace", "inputs", "unchanged"};
	static const char *const what[RR_NCLASSES] = {
	    "live across the boundary, updated by the step",
	    "read by the step, dead across the boundary",
	    "written before backward, read from it on",
	    "dead across the boundary, used on one side of backward's start",
	    "written first by a copy from the host",
	    "live across the boundary, never changed (constants, data, free space)"};
	char a[32], title[96];
	if (s->backward_op >= 0)
		snprintf(title, sizeof(title),
		         "WHAT THE MEMORY HOLDS (from reads and writes; "
		         "backward from op %d)",
		         s->backward_op);
	else
		snprintf(title, sizeof(title),
		         "WHAT THE MEMORY HOLDS (from reads and writes; "
		         "no gradient found)");
	rr_heading(f, st, title);
	for (int c = 0; c < RR_NCLASSES; c++)
		if (s->class_n[c])
			fprintf(f, "  %-18s %10s %5d buffers  %s\n", name[c],
			        rr_bytes(s->class_bytes[c], a, sizeof(a)), s->class_n[c], what[c]);
}

static void print_gaps(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                       const struct rr_style *st, int top)
{
	char a[32], b[32], site[256], span[32], cut[72];

	rr_heading(f, st, "LARGEST ACTIVATIONS AND THEIR IDLE GAP");
	if (s->ngaps == 0) {
		fprintf(f, "  no per-iteration buffer sits unused between two uses\n");
		return;
	}
	fprintf(f, "  %-6s %10s %8s %11s  %-13s  %s\n  %-6s %s\n", "buffer", "size", "idle ops",
	        "idle time", "unused during", "written by", "", "allocated at");
	for (int i = 0; i < s->ngaps && i < top; i++) {
		const struct rr_gap *g = &s->gaps[i];
		const struct pl_buffer *bf = &t->bufs[g->buf];
		snprintf(span, sizeof(span), "%d..%d", g->after_op + 1, g->before_op - 1);
		fprintf(f, "  #%-5d %10s %8d %11s  ops %-9s  ", g->buf,
		        rr_bytes(bf->rounded, a, sizeof(a)), g->ops, rr_ns(g->ns, b, sizeof(b)),
		        span);
		if (g->producer < 0)
			fprintf(f, "-\n");
		else
			fprintf(f, "op %d %s%s\n", g->producer,
			        clip(t->ops[g->producer].name, cut, 32),
			        t->ops[g->producer].replayable ? "" : " (never replayed)");
		fprintf(f, "  %-6s %s\n", "",
		        clip(rr_site(bf, s->site_skip, 3, " < ", site, sizeof(site)), cut,
		             sizeof(cut)));
	}
	if (s->ngaps > top)
		fprintf(f, "  (%d more)\n", s->ngaps - top);
}

static void print_cupti(FILE *f, const struct rr_trace *t, const struct rr_style *st)
{
	if (!t->info->is_trace)
		return;
	rr_heading(f, st, "CUPTI CROSS-CHECK");
	if (!t->info->cupti_available || t->info->cupti_kernels < 0) {
		fprintf(f, "  CUPTI was not available%s%s: no kernel durations, no cross-check\n",
		        t->info->cupti_note && *t->info->cupti_note ? " - " : "",
		        t->info->cupti_note ? t->info->cupti_note : "");
		return;
	}
	fprintf(f, "  %" PRId64 " kernels seen by CUPTI, %" PRId64 " launches intercepted: ",
	        t->info->cupti_kernels, t->info->cupti_launches);
	if (t->info->cupti_kernels == t->info->cupti_launches && t->info->cupti_mismatch == 0)
		fprintf(f, "they match\n");
	else if (t->info->cupti_kernels < t->info->cupti_launches)
		fprintf(f,
		        "MISMATCH (%" PRId64 ") - CUPTI delivered no record for some launches: "
		        "those ops have no measured duration (plans count them as free)\n",
		        t->info->cupti_kernels - t->info->cupti_launches);
	else
		fprintf(f,
		        "MISMATCH (%" PRId64 ") - some launches bypassed interception, "
		        "so the op graph is incomplete\n",
		        t->info->cupti_mismatch ? t->info->cupti_mismatch
		                                : t->info->cupti_kernels - t->info->cupti_launches);
}

void rr_print_summary(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                      const struct rr_style *st)
{
	print_header(f, t);
	print_iteration(f, t, s, st);
	print_ops(f, t, s, st);
	print_kernels(f, t, s, st, 10);
	print_memory(f, t, s, st);
	print_classes(f, s, st);
	print_gaps(f, t, s, st, 10);
	print_cupti(f, t, st);
}
