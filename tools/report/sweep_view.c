/* The budget curve of remat-plan --sweep: what each budget costs in
 * recompute time, on the terminal (a bar per budget) and as an SVG chart
 * in its own page (rr_write_sweep_html), so a user sees what each
 * gigabyte costs before choosing a budget. */
#include "report.h"

#include <errno.h>
#include <string.h>

static double pct(int64_t ns, int64_t iter)
{
	return ns < 0 ? 0 : 100.0 * (double)ns / (double)(iter > 0 ? iter : 1);
}

void rr_print_sweep(FILE *f, const struct pl_sweep *sw, const char *name, const struct rr_style *st,
                    int width)
{
	char b1[32], b2[32], b3[32];
	double top = 0;
	for (int32_t k = 0; k < sw->npoints; k++)
		top = pct(sw->points[k].recompute_ns, sw->iteration_ns) > top
		          ? pct(sw->points[k].recompute_ns, sw->iteration_ns)
		          : top;
	rr_heading(f, st, "RECOMPUTE TIME BY BUDGET");
	fprintf(f, "graph %s: baseline peak %s, smallest budget reached %s, no plan below %s\n\n",
	        name, rr_bytes(sw->baseline_peak, b1, sizeof(b1)),
	        rr_bytes(sw->min_peak, b2, sizeof(b2)), rr_bytes(sw->peak_bound, b3, sizeof(b3)));
	fprintf(f, "%11s %7s %9s %7s  %s\n", "budget", "of peak", "overhead", "gap", "");
	int bar = width - 40 > 10 ? width - 40 : 10;
	for (int32_t k = 0; k < sw->npoints; k++) {
		const struct pl_sweep_point *pt = &sw->points[k];
		double v = pct(pt->recompute_ns, sw->iteration_ns);
		char gs[16] = "n/a";
		if (pt->gap >= 0)
			snprintf(gs, sizeof(gs), "%.1f%%", 100 * pt->gap);
		fprintf(f, "%11s %6.1f%% %8.2f%% %7s  ", rr_bytes(pt->budget, b1, sizeof(b1)),
		        100.0 * (double)pt->budget / (double)sw->baseline_peak, v, gs);
		int n = top > 0 ? (int)(v / top * bar + 0.5) : 0;
		for (int i = 0; i < n; i++)
			fputs(st->unicode ? "\u2588" : "#", f);
		fputc('\n', f);
	}
	fprintf(f, "\noverhead: recompute time as a share of the iteration; gap: to the proven "
	           "bound (no plan within that budget recomputes less)\n");
}

/* x: budget from the smallest reached to the baseline; y: overhead. */
static void svg_curve(FILE *f, const struct pl_sweep *sw)
{
	const double W = 760, H = 340, L = 64, R = 16, T = 16, B = 44;
	int64_t x0 = sw->points[sw->npoints - 1].budget, x1 = sw->baseline_peak;
	double top = 0.5;
	for (int32_t k = 0; k < sw->npoints; k++) {
		double v = pct(sw->points[k].recompute_ns, sw->iteration_ns);
		top = v > top ? v : top;
	}
	top *= 1.1;
	if (x1 <= x0)
		x0 = x1 - 1;
#define XP(b) (L + (W - L - R) * (double)((b)-x0) / (double)(x1 - x0))
#define YP(v) (T + (H - T - B) * (1 - (v) / top))
	fprintf(f,
	        "<svg id=\"sweep\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
	        "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
	        "<title>recompute overhead by budget</title>\n",
	        W, H, W, H);
	char b1[32];
	for (int i = 0; i <= 4; i++) {
		double v = top * i / 4;
		fprintf(f,
		        "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
		        "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" "
		        "text-anchor=\"end\">%.1f%%</text>\n",
		        L, YP(v), W - R, YP(v), L - 6, YP(v) + 4, v);
		int64_t b = x0 + (int64_t)((double)(x1 - x0) * i / 4);
		fprintf(
		    f,
		    "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
		    XP(b), H - B + 16, rr_bytes(b, b1, sizeof(b1)));
	}
	fprintf(f,
	        "<line class=\"axisline\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n"
	        "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">budget "
	        "(bytes)</text>\n",
	        L, H - B, W - R, H - B, (L + W - R) / 2, H - 6);
	/* the bound, dashed, then the plans' curve and a point per budget */
	fputs("<polyline class=\"bound\" points=\"", f);
	for (int32_t k = 0; k < sw->npoints; k++)
		if (sw->points[k].bound_ns >= 0)
			fprintf(f, "%.1f,%.1f ", XP(sw->points[k].budget),
			        YP(pct(sw->points[k].bound_ns, sw->iteration_ns)));
	fputs("\"/>\n<polyline class=\"curve\" points=\"", f);
	for (int32_t k = 0; k < sw->npoints; k++)
		fprintf(f, "%.1f,%.1f ", XP(sw->points[k].budget),
		        YP(pct(sw->points[k].recompute_ns, sw->iteration_ns)));
	fputs("\"/>\n", f);
	for (int32_t k = 0; k < sw->npoints; k++) {
		const struct pl_sweep_point *pt = &sw->points[k];
		fprintf(f,
		        "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"><title>budget %s: "
		        "%.2f%% of the iteration (%s)</title></circle>\n",
		        XP(pt->budget), YP(pct(pt->recompute_ns, sw->iteration_ns)),
		        rr_bytes(pt->budget, b1, sizeof(b1)),
		        pct(pt->recompute_ns, sw->iteration_ns), pt->planner);
	}
	fputs("</svg>\n", f);
#undef XP
#undef YP
}

int rr_write_sweep_html(const char *path, const struct pl_sweep *sw, const char *name, char *err,
                        size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot write the page: %s", path, strerror(errno));
		return -1;
	}
	char b1[32], b2[32];
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<title>remat-report: budget curve of ",
	      f);
	rr_html_text(f, name);
	fputs("</title>\n<style>\nbody{font:14px/1.45 system-ui,sans-serif;color:#222;margin:24px "
	      "auto;max-width:820px;padding:0 16px;background:#fff}\n"
	      "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}\n"
	      "svg text{font:11px system-ui,sans-serif;fill:#444}\n"
	      "svg .grid{stroke:#e4e4e4}svg .axisline{stroke:#888}\n"
	      "svg .curve{fill:none;stroke:#1f77b4;stroke-width:3}\n"
	      "svg .bound{fill:none;stroke:#2ca02c;stroke-width:1.5;stroke-dasharray:6 4}\n"
	      "svg .pt{fill:#1f77b4}\n</style>\n</head>\n<body>\n<h1>What each budget costs</h1>\n"
	      "<p>",
	      f);
	rr_html_text(f, name);
	fprintf(f,
	        ": baseline peak %s, smallest budget reached %s. Blue: recompute time of the "
	        "plan at each budget, as a share of the iteration; dashed green: the proven bound "
	        "(no plan within that budget recomputes less).</p>\n",
	        rr_bytes(sw->baseline_peak, b1, sizeof(b1)),
	        rr_bytes(sw->min_peak, b2, sizeof(b2)));
	if (sw->npoints > 0)
		svg_curve(f, sw);
	fputs("<table>\n<tr><th>budget</th><th>of peak</th><th>overhead</th><th>gap</th>"
	      "<th>planner</th></tr>\n",
	      f);
	for (int32_t k = 0; k < sw->npoints; k++) {
		const struct pl_sweep_point *pt = &sw->points[k];
		fprintf(f, "<tr><td>%s</td><td>%.1f%%</td><td>%.2f%%</td><td>",
		        rr_bytes(pt->budget, b1, sizeof(b1)),
		        100.0 * (double)pt->budget / (double)sw->baseline_peak,
		        pct(pt->recompute_ns, sw->iteration_ns));
		if (pt->gap >= 0)
			fprintf(f, "%.1f%%", 100 * pt->gap);
		else
			fputs("n/a", f);
		fputs("</td><td>", f);
		rr_html_text(f, pt->planner);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</body>\n</html>\n", f);
	if (ferror(f) | (fclose(f) != 0)) {
		snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
