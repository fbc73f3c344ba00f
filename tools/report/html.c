/* The self-contained HTML page: inline CSS, inline SVG, no script and no
 * external asset, so it can be mailed or attached to a bug.  The markup is
 * also well-formed XML (every element closed, text escaped). */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static const char *css =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;"
    "margin:24px auto;max-width:1000px;padding:0 16px;background:#fff}\n"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid #ddd;padding-bottom:3px}\n"
    "table{border-collapse:collapse;margin:4px 0 8px}td,th{padding:3px 10px;text-align:left;"
    "vertical-align:top}th{font-weight:600;border-bottom:1px solid #bbb;background:#f6f6f6}\n"
    "tr:nth-child(even) td{background:#fafafa}td.n,th.n{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}\n"
    ".meta td:first-child{color:#666}.note{color:#555;font-size:13px;margin:4px 0}\n"
    ".warn{color:#b00020;font-weight:600}.ok{color:#2a7d2a;font-weight:600}\n"
    ".legend span{display:inline-block;margin-right:16px}.sw{display:inline-block;"
    "width:12px;height:12px;vertical-align:-1px;margin-right:5px;border-radius:2px}\n"
    "svg{display:block;margin:6px 0;max-width:100%;height:auto}\n"
    "svg text{font:11px system-ui,sans-serif;fill:#444}svg .axis{fill:#666}\n"
    "svg .grid{stroke:#e4e4e4}svg .axisline{stroke:#888}\n"
    "svg .area.persistent,.sw.persistent{fill:#4e79a7;background:#4e79a7}\n"
    "svg .area.periter,.sw.periter{fill:#f28e2b;background:#f28e2b}\n"
    "svg .area.periter.before,.sw.saved{fill:#f9cfa4;background:#f9cfa4}\n"
    "svg .area.after,.sw.after{fill:#f28e2b;background:#f28e2b}\n"
    "svg .line{fill:none;stroke-width:1.2}svg .line.base{stroke:#b35c00}"
    "svg .line.after{stroke:#7a3d00}\n"
    "svg .budget{stroke:#d62728;stroke-width:1.5;stroke-dasharray:6 4}"
    "svg .budget-label{fill:#d62728;font-weight:600}.sw.budget{background:#d62728}\n"
    "svg .bar.persistent{fill:#4e79a7}svg .bar.periter{fill:#f28e2b}"
    "svg .bar.small{opacity:.45}\n"
    "svg .evicted{fill:#fff;stroke:#f28e2b;stroke-dasharray:3 2}.sw.evicted{background:#fff;"
    "border:1px dashed #f28e2b;width:10px;height:10px}\n";

void rr_html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static void td(FILE *f, const char *cls, const char *text)
{
	fprintf(f, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	rr_html_text(f, text);
	fputs("</td>", f);
}

static void meta(FILE *f, const char *key, const char *value)
{
	fputs("<tr>", f);
	td(f, NULL, key);
	td(f, NULL, value);
	fputs("</tr>\n", f);
}

static void header(FILE *f, const struct rr_trace *t, const struct rr_stats *s)
{
	char a[64], b[64], line[256];

	fputs("<h1>remat-report: <code>", f);
	rr_html_text(f, t->path);
	fputs("</code></h1>\n<table class=\"meta\">\n", f);
	if (t->g->name && *t->g->name)
		meta(f, "command", t->g->name);
	if (t->info->is_trace) {
		snprintf(line, sizeof(line), "%s, %s, granularity %s",
		         *t->info->device ? t->info->device : "?",
		         rr_bytes(t->info->device_memory, a, sizeof(a)),
		         rr_bytes(t->g->granularity, b, sizeof(b)));
		meta(f, "device", line);
	}
	meta(f, "graph hash", t->graph_hash);
	snprintf(line, sizeof(line), "%d ops (%d iterations seen before the profile)", t->period,
	         t->info->iterations_seen);
	meta(f, "iteration", line);
	snprintf(line, sizeof(line), "%s (sum of op durations%s)",
	         rr_ns(t->duration_ns, a, sizeof(a)),
	         s->unknown_duration_ops ? "; ops without a duration count as 0" : "");
	meta(f, "duration", line);
	fputs("</table>\n", f);
}

static void memory_split(FILE *f, const struct rr_trace *t, const struct rr_stats *s)
{
	char a[32], b[32], line[256];

	fprintf(f,
	        "<h2>Memory</h2>\n<p class=\"note\">Baseline peak <b>%s</b>, first reached at op "
	        "%d.</p>\n<table>\n<tr><th>part</th><th class=\"n\">bytes</th><th>what</th></tr>\n",
	        rr_bytes(s->peak, a, sizeof(a)), s->peak_op);
	fputs("<tr>", f);
	td(f, NULL, "persistent");
	td(f, "n", rr_bytes(s->persistent_level, a, sizeof(a)));
	td(f, NULL, "live across the iteration boundary: weights, gradients, optimizer state");
	fputs("</tr>\n<tr>", f);
	td(f, NULL, "\u2003buffers");
	td(f, "n", rr_bytes(s->persistent_large, a, sizeof(a)));
	snprintf(line, sizeof(line), "%d buffers of at least the granularity",
	         s->npersistent_large);
	td(f, NULL, line);
	fputs("</tr>\n<tr>", f);
	td(f, NULL, "\u2003small pool");
	td(f, "n", rr_bytes(t->g->small_pool_bytes, a, sizeof(a)));
	snprintf(line, sizeof(line),
	         "shared chunks packing %d persistent and %d per-iteration allocations under %s; "
	         "never evicted",
	         s->npersistent_small, s->nperiter_small,
	         rr_bytes(t->g->granularity, b, sizeof(b)));
	td(f, NULL, line);
	if (s->nshared_live) {
		fputs("</tr>\n<tr>", f);
		td(f, NULL, "\u2003shared");
		td(f, "n", rr_bytes(s->shared_live, a, sizeof(a)));
		snprintf(line, sizeof(line),
		         "%d chunks a region live across the boundary shares with others",
		         s->nshared_live);
		td(f, NULL, line);
	}
	if (s->nuntouched) {
		fputs("</tr>\n<tr>", f);
		td(f, NULL, "\u2003untouched");
		td(f, "n", rr_bytes(s->untouched, a, sizeof(a)));
		snprintf(
		    line, sizeof(line),
		    "%d regions no op of the iteration touches (a pool's free space): kept, or "
		    "parked on the host when offload is on",
		    s->nuntouched);
		td(f, NULL, line);
	}
	fputs("</tr>\n<tr>", f);
	td(f, NULL, "per-iteration");
	td(f, "n", rr_bytes(s->peak - s->persistent_level, a, sizeof(a)));
	snprintf(line, sizeof(line), "at the peak: activations and temporaries (%d buffers)",
	         s->nperiter_large);
	td(f, NULL, line);
	if (s->nregions_dead) {
		fputs("</tr>\n<tr>", f);
		td(f, NULL, "\u2003long-lived");
		td(f, "n", rr_bytes(s->regions_dead + s->shared_dead, a, sizeof(a)));
		snprintf(line, sizeof(line),
		         "%d regions of the program's own long-lived memory (a pool, an arena) "
		         "proven dead across the boundary, and %d chunks they share (what they "
		         "hold: the text report)",
		         s->nregions_dead, s->nshared_dead);
		td(f, NULL, line);
	}
	fputs("</tr>\n<tr>", f);
	td(f, NULL, "peak");
	td(f, "n", rr_bytes(s->peak, a, sizeof(a)));
	td(f, NULL, "");
	fputs("</tr>\n</table>\n", f);
}

static void ops_tables(FILE *f, const struct rr_trace *t, const struct rr_stats *s)
{
	static const char *kind_label[] = {"kernels", "copies", "memsets", "host funcs"};
	static const char *dir[] = {"HtoD", "DtoH", "DtoD", "HtoH"};
	char a[32], line[64];

	fputs("<h2>Ops</h2>\n<table style=\"float:left;margin-right:40px\">\n"
	      "<tr><th>kind</th><th class=\"n\">ops</th></tr>\n",
	      f);
	for (int k = 0; k < RR_NKINDS; k++) {
		fputs("<tr>", f);
		td(f, NULL, kind_label[k]);
		snprintf(line, sizeof(line), "%d", s->kinds[k]);
		td(f, "n", line);
		fputs("</tr>\n", f);
		for (int d = 0; k == PL_KIND_MEMCPY && d < 4; d++) {
			if (!s->copies[d])
				continue;
			snprintf(line, sizeof(line), "\u2003%s", dir[d]);
			fputs("<tr>", f);
			td(f, NULL, line);
			snprintf(line, sizeof(line), "%d", s->copies[d]);
			td(f, "n", line);
			fputs("</tr>\n", f);
		}
	}
	fprintf(f, "<tr><td><b>total</b></td><td class=\"n\"><b>%d</b></td></tr>\n</table>\n",
	        t->nops);
	fputs("<table>\n<tr><th>entry point</th><th class=\"n\">ops</th></tr>\n", f);
	for (int i = 0; i < s->nvias; i++) {
		fputs("<tr><td class=\"mono\">", f);
		rr_html_text(f, s->vias[i].via);
		fprintf(f, "</td><td class=\"n\">%d</td></tr>\n", s->vias[i].count);
	}
	fputs("</table>\n<div style=\"clear:both\"></div>\n", f);
	fprintf(f, "<p class=\"note\">%d stream%s.", s->streams, s->streams == 1 ? "" : "s");
	for (int d = 0, any = 0; d < 4; d++) {
		if (!s->copies[d])
			continue;
		fprintf(f, "%s%s %s", any++ ? ", " : " Copied: ", dir[d],
		        rr_bytes(s->copy_bytes[d], a, sizeof(a)));
	}
	if (s->not_replayable) {
		fprintf(f, ". Never replayed: %d op%s (", s->not_replayable,
		        s->not_replayable == 1 ? "" : "s");
		for (int i = 0; i < s->nreasons; i++) {
			fprintf(f, "%s", i ? ", " : "");
			rr_html_text(f, s->reasons[i].why);
			fprintf(f, " %d", s->reasons[i].count);
		}
		fputs("): buffers they write cannot be rebuilt", f);
	}
	fputs(".</p>\n", f);

	fputs("<h2>Top kernels by total time</h2>\n<table>\n<tr><th>kernel</th><th class=\"n\">"
	      "count</th><th class=\"n\">total</th><th class=\"n\">% of iteration</th></tr>\n",
	      f);
	for (int i = 0; i < s->nkernels && i < 15; i++) {
		const struct rr_kernel_stat *k = &s->kernels[i];
		fputs("<tr><td class=\"mono\">", f);
		rr_html_text(f, k->name);
		fprintf(f,
		        "</td><td class=\"n\">%d</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%"
		        "</td></tr>\n",
		        k->count, rr_ns(k->total_ns, a, sizeof(a)),
		        t->duration_ns > 0 ? 100.0 * (double)k->total_ns / (double)t->duration_ns
		                           : 0);
	}
	fputs("</table>\n", f);
}

static void gaps_table(FILE *f, const struct rr_trace *t, const struct rr_stats *s)
{
	char a[32], b[32], site[512];

	fputs("<h2>Largest activations and their idle gap</h2>\n<p class=\"note\">Per-iteration "
	      "buffers that sit unused between two uses: the longest such stretch, in ops and in "
	      "time. These are what a plan can drop and rebuild.</p>\n",
	      f);
	if (s->ngaps == 0) {
		fputs("<p>No per-iteration buffer sits unused between two uses.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr><th>buffer</th><th class=\"n\">size</th><th class=\"n\">idle ops</th>"
	      "<th class=\"n\">idle time</th><th>unused over ops</th><th>written by</th>"
	      "<th>allocated at</th></tr>\n",
	      f);
	for (int i = 0; i < s->ngaps && i < 15; i++) {
		const struct rr_gap *g = &s->gaps[i];
		fprintf(f,
		        "<tr><td>#%d</td><td class=\"n\">%s</td><td class=\"n\">%d</td>"
		        "<td class=\"n\">%s</td><td>%d\u2013%d</td><td class=\"mono\">",
		        g->buf, rr_bytes(t->bufs[g->buf].rounded, a, sizeof(a)), g->ops,
		        rr_ns(g->ns, b, sizeof(b)), g->after_op + 1, g->before_op - 1);
		if (g->producer >= 0) {
			fprintf(f, "%d ", g->producer);
			rr_html_text(f, t->ops[g->producer].name);
			if (!t->ops[g->producer].replayable)
				fputs(" (never replayed)", f);
		}
		fputs("</td><td class=\"mono\">", f);
		rr_html_text(
		    f, rr_site(&t->bufs[g->buf], s->site_skip, 3, " \u2190 ", site, sizeof(site)));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* What goes to the host, when it leaves and when it comes back (plan
 * version 3). */
static void offloads(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                     const struct rr_plan *p)
{
	char a[32], b[32], line[256];
	if (p->noffloads == 0)
		return;
	fprintf(f,
	        "<h3>Offloads to pinned host memory</h3>\n<p class=\"note\">%d buffer version%s "
	        "at %g GB/s each way, %s of host memory at most; copies stick out %s in the "
	        "planner's model.</p>\n",
	        p->noffloads, p->noffloads == 1 ? "" : "s", p->gbps,
	        rr_bytes(p->host_peak, a, sizeof(a)), rr_ns(p->stall_ns, b, sizeof(b)));
	fputs("<table>\n<tr><th>buffer</th><th class=\"n\">size</th><th class=\"n\">copy out "
	      "before op</th><th class=\"n\">dropped after op</th><th class=\"n\">prefetch "
	      "before op</th><th class=\"n\">awaited before op</th><th>allocated at</th></tr>\n",
	      f);
	for (int i = 0; i < p->noffloads; i++) {
		const struct rr_offload *o = &p->offloads[i];
		fprintf(f,
		        "<tr><td>#%d</td><td class=\"n\">%s</td><td class=\"n\">%d</td><td "
		        "class=\"n\">%d</td><td class=\"n\">%d</td><td class=\"n\">%d</td><td "
		        "class=\"mono\">",
		        o->buf, rr_bytes(t->bufs[o->buf].size, a, sizeof(a)), o->out_at,
		        o->evict_after, o->fetch_at, o->await_at);
		rr_html_text(f, rr_site(&t->bufs[o->buf], s->site_skip, 1, "", line, sizeof(line)));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void plan_tables(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                        const struct rr_plan *p)
{
	char a[32], b[32], line[256];

	fputs("<h2>Plan</h2>\n<table class=\"meta\">\n", f);
	meta(f, "file", p->path);
	meta(f, "planner", p->planner);
	meta(f, "budget", rr_bytes(p->budget, a, sizeof(a)));
	snprintf(line, sizeof(line), "%s before, %s with the plan", rr_bytes(p->peak_before, a, 32),
	         rr_bytes(p->peak_after, b, 32));
	meta(f, "peak", line);
	snprintf(line, sizeof(line), "%s per iteration (%.1f%% of the iteration)",
	         rr_ns(p->recompute_ns, a, sizeof(a)),
	         t->duration_ns > 0 ? 100.0 * (double)p->recompute_ns / (double)t->duration_ns : 0);
	meta(f, "recompute", line);
	fputs("</table>\n", f);
	fprintf(f, "<p class=\"%s\">%s</p>\n", p->peak_after <= p->budget ? "ok" : "warn",
	        p->peak_after <= p->budget ? "The plan fits the budget."
	                                   : "The plan exceeds the budget.");

	fputs("<h3>Evictions</h3>\n", f);
	if (p->nevicts == 0)
		fputs("<p>None: the iteration already fits.</p>\n", f);
	else
		fputs(
		    "<table>\n<tr><th>buffer</th><th class=\"n\">size</th><th class=\"n\">after op"
		    "</th><th class=\"n\">rebuilt before op</th><th>allocated at</th></tr>\n",
		    f);
	for (int i = 0; i < p->nevicts; i++) {
		const struct rr_evict *e = &p->evicts[i];
		char until[16] = "not needed";
		if (e->before_op >= 0)
			snprintf(until, sizeof(until), "%d", e->before_op);
		fprintf(f,
		        "<tr><td>#%d</td><td class=\"n\">%s</td><td class=\"n\">%d</td>"
		        "<td class=\"n\">%s</td><td class=\"mono\">",
		        e->buf, rr_bytes(t->bufs[e->buf].rounded, a, sizeof(a)), e->after_op,
		        until);
		rr_html_text(f, rr_site(&t->bufs[e->buf], s->site_skip, 1, "", line, sizeof(line)));
		fputs("</td></tr>\n", f);
	}
	if (p->nevicts)
		fputs("</table>\n", f);

	fputs("<h3>Rebuilds</h3>\n", f);
	if (p->nrebuilds == 0)
		fputs("<p>None.</p>\n", f);
	else
		fputs("<table>\n<tr><th class=\"n\">before op</th><th class=\"n\">cost</th>"
		      "<th>replayed ops</th></tr>\n",
		      f);
	for (int i = 0; i < p->nrebuilds; i++) {
		const struct rr_rebuild *r = &p->rebuilds[i];
		fprintf(f, "<tr><td class=\"n\">%d</td><td class=\"n\">%s</td><td class=\"mono\">",
		        r->before_op, rr_ns(r->cost_ns, a, sizeof(a)));
		if (r->nreplay == 0)
			fputs("(map only)", f);
		for (int k = 0; k < r->nreplay; k++) {
			fprintf(f, "%s%d ", k ? ", " : "", r->replay[k]);
			rr_html_text(f, t->ops[r->replay[k]].name);
		}
		fputs("</td></tr>\n", f);
	}
	if (p->nrebuilds)
		fputs("</table>\n", f);
	offloads(f, t, s, p);
}

static void cupti(FILE *f, const struct rr_trace *t)
{
	fputs("<h2>CUPTI cross-check</h2>\n", f);
	if (!t->info->cupti_available || t->info->cupti_kernels < 0) {
		fputs("<p class=\"warn\">CUPTI was not available", f);
		if (t->info->cupti_note && *t->info->cupti_note) {
			fputs(": ", f);
			rr_html_text(f, t->info->cupti_note);
		}
		fputs(". No kernel durations, no cross-check.</p>\n", f);
		return;
	}
	bool ok = t->info->cupti_kernels == t->info->cupti_launches && t->info->cupti_mismatch == 0;
	fprintf(f,
	        "<p>%" PRId64 " kernels seen by CUPTI, %" PRId64 " launches intercepted: "
	        "<span class=\"%s\">%s</span></p>\n",
	        t->info->cupti_kernels, t->info->cupti_launches, ok ? "ok" : "warn",
	        ok ? "they match."
	        : t->info->cupti_kernels < t->info->cupti_launches
	            ? "mismatch: CUPTI delivered no record for some launches, those ops have "
	              "no measured duration."
	            : "mismatch: some launches bypassed interception, the op graph "
	              "is incomplete.");
}

static void legend(FILE *f, const struct rr_plan *p, bool lifetimes)
{
	fputs("<p class=\"legend note\"><span><i class=\"sw persistent\"></i>persistent</span>"
	      "<span><i class=\"sw periter\"></i>per-iteration</span>",
	      f);
	if (p && !lifetimes)
		fputs("<span><i class=\"sw saved\"></i>freed by the plan</span>"
		      "<span><i class=\"sw budget\"></i>budget</span>",
		      f);
	if (p && lifetimes)
		fputs("<span><i class=\"sw evicted\"></i>evicted by the plan</span>", f);
	if (lifetimes)
		fputs("<span>faint bars: small allocations (packed, never evicted)</span>", f);
	fputs("</p>\n", f);
}

/* The timeline file, for Perfetto or chrome://tracing: neither opens a
 * local file from a link, so the page says how. */
static void timeline_link(FILE *f, const char *timeline)
{
	fputs("<p class=\"note\">Timeline of the iteration (one track per stream, rebuilds, "
	      "evictions, memory counters): ",
	      f);
	if (!timeline) {
		fputs("write it with <code>remat report --perfetto OUT.json</code>.</p>\n", f);
		return;
	}
	fputs("<a href=\"", f);
	rr_html_text(f, timeline);
	fputs("\">", f);
	rr_html_text(f, timeline);
	fputs("</a>; open it in <a href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a> "
	      "(Open trace file) or chrome://tracing (Load).</p>\n",
	      f);
}

int rr_write_html(const char *path, const struct rr_trace *t, const struct rr_stats *s,
                  const struct rr_plan *p, const char *timeline, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		snprintf(err, errlen, "%s: cannot write the page: %s", path, strerror(errno));
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>"
	      "remat-report: ",
	      f);
	rr_html_text(f, t->path);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
	header(f, t, s);
	timeline_link(f, timeline);
	fputs("<h2>Memory over the iteration</h2>\n", f);
	legend(f, p, false);
	rr_svg_memory(f, t, s, p);
	memory_split(f, t, s);
	if (p)
		plan_tables(f, t, s, p);
	fputs("<h2>Buffer lifetimes</h2>\n<p class=\"note\">One bar per buffer, from the op after "
	      "its allocation to the op before its free; persistent buffers span the whole "
	      "iteration. Hover a bar for its size and allocation site.</p>\n",
	      f);
	legend(f, p, true);
	rr_svg_lifetimes(f, t, p);
	gaps_table(f, t, s);
	ops_tables(f, t, s);
	if (t->info->is_trace)
		cupti(f, t);
	fputs("</body>\n</html>\n", f);
	if (ferror(f) | (fclose(f) != 0)) {
		snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
