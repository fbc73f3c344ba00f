/* The page's two SVG pictures: memory over the iteration (step plot over
 * the op index) and buffer lifetimes (one bar per buffer).  Plain SVG with
 * classes styled by the page's CSS; <title> children give hover text
 * without JavaScript. */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>

#define W      960
#define PLOT_H 300
#define LEFT   80
#define RIGHT  20
#define TOP    16
#define BOTTOM 36

static double xpos(int op, int nops)
{
	return LEFT + (double)op * (W - LEFT - RIGHT) / (nops > 0 ? nops : 1);
}

/* A step path through v[0..n) (value v[i] held over op i), closed down to
 * `base` when fill is set.  Equal neighbours are merged. */
static void step_path(FILE *f, const int64_t *v, int n, double (*y)(int64_t, int64_t), int64_t top,
                      bool fill, int64_t base)
{
	fprintf(f, "M%.1f %.1f", xpos(0, n), fill ? y(base, top) : y(v[0], top));
	for (int i = 0; i < n; i++) {
		if (i > 0 && v[i] == v[i - 1])
			continue;
		fprintf(f, " L%.1f %.1f L", xpos(i, n), y(v[i], top));
		int j = i;
		while (j + 1 < n && v[j + 1] == v[i])
			j++;
		fprintf(f, "%.1f %.1f", xpos(j + 1, n), y(v[i], top));
	}
	if (fill)
		fprintf(f, " L%.1f %.1f Z", xpos(n, n), y(base, top));
}

static double ymem(int64_t v, int64_t top)
{
	return TOP + (PLOT_H - TOP - BOTTOM) * (1.0 - (double)v / (double)top);
}

static void x_ticks(FILE *f, int nops, int bottom)
{
	static const int mult[] = {2, 5, 10};
	int step = 1;
	/* 1, 2, 5, 10, 20, 50, ... until at most a dozen labels */
	for (int k = 0, base = 1; nops / step > 12; k = (k + 1) % 3) {
		step = base * mult[k];
		if (k == 2)
			base *= 10;
	}
	for (int i = 0; i < nops; i += step)
		fprintf(
		    f,
		    "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n",
		    xpos(i, nops) + 0.5 * (xpos(1, nops) - xpos(0, nops)), bottom + 14, i);
	fprintf(f, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"end\">op index</text>\n",
	        W - RIGHT, bottom + 30);
}

/* Memory ticks step by the smallest power of two of at least raw bytes, so
 * they land on sizes people think in (64 MiB, 256 MiB, 1 GiB). */
static int64_t nice_step(int64_t raw)
{
	int64_t step = 1;

	while (step < raw && step < ((int64_t)1 << 50))
		step <<= 1;
	return step;
}

/* "768 MiB", "1.25 GiB": the largest unit not above v, up to 3 decimals. */
static char *tick_label(int64_t v, char *buf, size_t len)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;

	while (u < 4 && v >= ((int64_t)1 << (10 * (u + 1))))
		u++;
	snprintf(buf, len, "%.4g %s", (double)v / (double)((int64_t)1 << (10 * u)), unit[u]);
	return buf;
}

void rr_svg_memory(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                   const struct rr_plan *p)
{
	int64_t top = s->peak;
	char a[32];
	int n = t->nops;

	if (p && p->budget > top)
		top = p->budget;
	top = top + top / 20 + 1;
	fprintf(f,
	        "<svg class=\"memory\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
	        W, PLOT_H + 14, W, PLOT_H + 14);
	fprintf(f, "<title>Memory in use during each op of the iteration</title>\n");
	int64_t tick = nice_step(top / 4);
	for (int64_t v = 0; v <= top; v += tick) {
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
		        LEFT, W - RIGHT, ymem(v, top), ymem(v, top));
		fprintf(f,
		        "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
		        LEFT - 6, ymem(v, top) + 4, tick_label(v, a, sizeof(a)));
	}
	if (n == 0) {
		fprintf(f, "</svg>\n");
		return;
	}
	/* per-iteration area above the persistent band */
	fprintf(f, "<path class=\"area periter%s\" d=\"", p ? " before" : "");
	step_path(f, t->mem, n, ymem, top, true, 0);
	fprintf(f, "\"><title>without a plan: peak %s at op %d</title></path>\n",
	        rr_bytes(s->peak, a, sizeof(a)), s->peak_op);
	if (p) {
		fprintf(f, "<path class=\"area after\" d=\"");
		step_path(f, p->mem, n, ymem, top, true, 0);
		fprintf(f, "\"><title>with the plan: peak %s</title></path>\n",
		        rr_bytes(p->peak_after, a, sizeof(a)));
	}
	fprintf(f,
	        "<rect class=\"area persistent\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
	        "height=\"%.1f\"><title>persistent: %s</title></rect>\n",
	        xpos(0, n), ymem(s->persistent_level, top), xpos(n, n) - xpos(0, n),
	        ymem(0, top) - ymem(s->persistent_level, top),
	        rr_bytes(s->persistent_level, a, sizeof(a)));
	fprintf(f, "<path class=\"line base\" d=\"");
	step_path(f, t->mem, n, ymem, top, false, 0);
	fprintf(f, "\"/>\n");
	if (p) {
		fprintf(f, "<path class=\"line after\" d=\"");
		step_path(f, p->mem, n, ymem, top, false, 0);
		fprintf(f, "\"/>\n");
		fprintf(f, "<line class=\"budget\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
		        LEFT, W - RIGHT, ymem(p->budget, top), ymem(p->budget, top));
		fprintf(f,
		        "<text class=\"budget-label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
		        "budget %s</text>\n",
		        W - RIGHT - 4, ymem(p->budget, top) - 5, rr_bytes(p->budget, a, sizeof(a)));
	}
	fprintf(f, "<line class=\"axisline\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", LEFT,
	        W - RIGHT, PLOT_H - BOTTOM, PLOT_H - BOTTOM);
	x_ticks(f, n, PLOT_H - BOTTOM);
	fprintf(f, "</svg>\n");
}

static const struct rr_trace *order_trace;
static int by_lifetime(const void *a, const void *b)
{
	const struct pl_buffer *x = &order_trace->bufs[*(const int *)a];
	const struct pl_buffer *y = &order_trace->bufs[*(const int *)b];
	/* what the iteration allocates first: it is what a plan works on */
	if (x->persistent != y->persistent)
		return x->persistent ? 1 : -1;
	if (x->alloc_at != y->alloc_at)
		return x->alloc_at - y->alloc_at;
	return *(const int *)a - *(const int *)b;
}

void rr_svg_lifetimes(FILE *f, const struct rr_trace *t, const struct rr_plan *p)
{
	int n = t->nops, nb = t->nbufs;
	/* rows shrink to fit ~600 px, but a bar stays at least 3 px tall */
	int row = nb > 0 && 600 / nb < 14 ? (600 / nb < 4 ? 4 : 600 / nb) : 14;
	int bar = row >= 8 ? row - 2 : row - 1;
	int height = TOP + nb * row + BOTTOM;
	int *order = calloc((size_t)nb + 1, sizeof(*order));
	int *rowof = calloc((size_t)nb + 1, sizeof(*rowof));
	char a[32], site[256];

	for (int i = 0; i < nb; i++)
		order[i] = i;
	order_trace = t;
	qsort(order, (size_t)nb, sizeof(*order), by_lifetime);
	fprintf(f,
	        "<svg class=\"lifetimes\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
	        W, height, W, height);
	fprintf(f, "<title>When each buffer is allocated during the iteration</title>\n");
	for (int r = 0; r < nb; r++) {
		int id = order[r];
		const struct pl_buffer *b = &t->bufs[id];
		int from = b->alloc_at < 0 ? 0 : b->alloc_at, to = b->free_at < 0 ? n : b->free_at;
		double y = TOP + r * row;
		rowof[id] = r;
		if (row >= 10)
			fprintf(f,
			        "<text class=\"tick\" x=\"%d\" y=\"%.1f\" "
			        "text-anchor=\"end\">#%d</text>\n",
			        LEFT - 6, y + row - 3, id);
		fprintf(f,
		        "<rect class=\"bar %s%s\" data-buf=\"%d\" x=\"%.1f\" y=\"%.1f\" "
		        "width=\"%.1f\" height=\"%d\"><title>",
		        b->persistent ? "persistent" : "periter", b->small ? " small" : "", id,
		        xpos(from, n), y + 1, xpos(to, n) - xpos(from, n), bar);
		fprintf(f, "#%d %s (%s), ops %d..%d, ", id, rr_bytes(b->size, a, sizeof(a)),
		        rr_buf_role(b), from, to - 1);
		rr_html_text(f, rr_site(b, 0, 8, " < ", site, sizeof(site)));
		fprintf(f, "</title></rect>\n");
	}
	for (int i = 0; p && i < p->nevicts; i++) {
		const struct rr_evict *e = &p->evicts[i]; /* not rebuilt: the gap lasts until the
		                                             program frees the buffer */
		int free_at = t->bufs[e->buf].free_at;
		int to = e->before_op >= 0 ? e->before_op : free_at >= 0 ? free_at : n;
		fprintf(f,
		        "<rect class=\"evicted\" data-buf=\"%d\" x=\"%.1f\" y=\"%.1f\" "
		        "width=\"%.1f\" height=\"%d\"><title>#%d evicted after op %d, ",
		        e->buf, xpos(e->after_op + 1, n), TOP + rowof[e->buf] * (double)row + 1,
		        xpos(to, n) - xpos(e->after_op + 1, n), bar, e->buf, e->after_op);
		if (e->before_op < 0)
			fprintf(f, "not needed again</title></rect>\n");
		else
			fprintf(f, "rebuilt before op %d</title></rect>\n", e->before_op);
	}
	fprintf(f, "<line class=\"axisline\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", LEFT,
	        W - RIGHT, height - BOTTOM, height - BOTTOM);
	x_ticks(f, n, height - BOTTOM);
	fprintf(f, "</svg>\n");
	free(order);
	free(rowof);
}
