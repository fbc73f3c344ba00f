/* Memory over the iteration as a block chart in the terminal: one column
 * per slice of ops (the highest value in the slice), one row per 1/height
 * of the top value.  Layers from the bottom: persistent memory, memory
 * the iteration allocates, and with a plan the part the plan frees; the
 * plan's budget is a horizontal line. */
#include "report.h"

#include <string.h>

enum cell { EMPTY, PERSISTENT, PERITER, SAVED, BUDGET, NCELLS };

static const char *glyph_utf8[NCELLS] = {" ", "\u2592", "\u2588", "\u2591", "\u2500"};
static const char *glyph_ascii[NCELLS] = {" ", "=", "#", ".", "-"};
static const char *eighth[8] = {"",       "\u2581", "\u2582", "\u2583",
                                "\u2584", "\u2585", "\u2586", "\u2587"};
static const char *color[NCELLS] = {"", "\033[34m", "\033[33m", "\033[2m", "\033[31m"};

static int64_t column_max(const int64_t *v, int n, int c, int width)
{
	int lo = (int)((int64_t)c * n / width), hi = (int)((int64_t)(c + 1) * n / width);
	int64_t m = 0;

	if (hi <= lo)
		hi = lo + 1;
	for (int i = lo; i < hi && i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* One chart being drawn: what it shows, its rows' height in bytes
 * (step), and the rows of the top value, the persistent level and the
 * budget (-1: no plan). */
struct chart {
	FILE *f;
	const struct rr_trace *t;
	const struct rr_stats *s;
	const struct rr_plan *p;
	const struct rr_style *st;
	const char **glyph;
	int64_t top;
	double step;
	int width, height, persist_row, budget_row;
};

static int row_of(int64_t v, double step, int height)
{
	int r = (int)((double)v / step);
	return r < 0 ? 0 : r >= height ? height - 1 : r;
}

/* Labels the top row, the persistent level and the budget; returns
 * whether this row has one (its axis tick then shows). */
static bool axis_label(const struct chart *ch, int r)
{
	char a[32] = "";

	if (r == ch->height - 1)
		rr_bytes(ch->top, a, sizeof(a));
	else if (ch->p && r == ch->budget_row)
		rr_bytes(ch->p->budget, a, sizeof(a));
	else if (r == ch->persist_row)
		rr_bytes(ch->s->persistent_level, a, sizeof(a));
	fprintf(ch->f, "  %10s ", a);
	return a[0] != 0;
}

/* What row r shows for column c.  A layer fills a cell when it covers
 * the cell's middle y; in Unicode the top of the per-iteration layer is
 * drawn in eighths instead (*eighths < 8), so a 12-row chart still shows
 * changes of 1/96 of its height. */
static enum cell cell_at(const struct chart *ch, int r, int c, int *eighths)
{
	double step = ch->step, lo = r * step, hi = (r + 1) * step;
	double y = (r + 0.5) * step; /* a cell is filled when the value covers its middle */
	int64_t persistent = ch->s->persistent_level;
	int64_t before = column_max(ch->t->mem, ch->t->nops, c, ch->width);
	int64_t after = ch->p ? column_max(ch->p->mem, ch->t->nops, c, ch->width) : before;

	*eighths = 8;
	if (ch->st->unicode && after > persistent && (double)after > lo && (double)after < hi) {
		int e = (int)(((double)after - lo) * 8 / step + 0.5);
		if (e >= 8)
			return y < (double)persistent ? PERSISTENT : PERITER;
		if (e > 0 && (double)persistent <= lo) {
			*eighths = e;
			return PERITER;
		}
	}
	if (y < (double)persistent && y < (double)after)
		return PERSISTENT;
	if (y < (double)after)
		return PERITER;
	if (y < (double)before)
		return SAVED;
	return EMPTY;
}

static void print_row(const struct chart *ch, int r)
{
	const struct rr_style *st = ch->st;
	FILE *f = ch->f;
	enum cell last = EMPTY;
	bool tick = axis_label(ch, r);
	fputs(st->unicode ? (tick ? "\u2524" : "\u2502") : (tick ? "+" : "|"), f);
	for (int c = 0; c < ch->width; c++) {
		int eighths = 8;
		enum cell k = cell_at(ch, r, c, &eighths);
		if (r == ch->budget_row && (k == EMPTY || k == SAVED))
			k = BUDGET;
		if (st->color && k != last)
			fputs(k == EMPTY ? "\033[0m" : color[k], f);
		last = k;
		fputs(eighths < 8 ? eighth[eighths] : ch->glyph[k], f);
	}
	if (st->color && last != EMPTY)
		fputs("\033[0m", f);
	fputc('\n', f);
}

/* The x axis: op indices under the first, middle and last column. */
static void print_axis(const struct chart *ch)
{
	FILE *f = ch->f;
	int width = ch->width, nops = ch->t->nops;
	fprintf(f, "  %10s %s", "0 B", ch->st->unicode ? "\u2514" : "+");
	for (int c = 0; c < width; c++)
		fputs(ch->st->unicode ? "\u2500" : "-", f);
	fputc('\n', f);
	char ticks[256];
	int mid = width / 2;
	memset(ticks, ' ', sizeof(ticks));
	int n = snprintf(ticks, sizeof(ticks), "op 0");
	ticks[n] = ' ';
	char m[16], e[16];
	int lm = snprintf(m, sizeof(m), "%d", (int)((int64_t)mid * nops / width));
	int le = snprintf(e, sizeof(e), "%d", nops - 1);
	memcpy(ticks + mid - lm / 2, m, (size_t)lm);
	memcpy(ticks + width - le + 1, e, (size_t)le);
	ticks[width + 1] = 0;
	fprintf(f, "  %10s %s\n", "", ticks);
}

/* Host memory the plan's offloads hold, and where copies start: v a
 * copy out, ^ a prefetch back. */
static void print_host(const struct chart *ch)
{
	const struct rr_plan *p = ch->p;
	FILE *f = ch->f;
	int width = ch->width, nops = ch->t->nops;
	char peak[32];
	fprintf(f, "  %10s %s", rr_bytes(p->host_peak, peak, sizeof(peak)), "host ");
	for (int c = 0; c < width; c++) {
		int64_t h = column_max(p->host, nops, c, width);
		int e8 = (int)((h * 8 + p->host_peak - 1) / p->host_peak);
		fputs(e8 <= 0           ? " "
		      : e8 >= 8         ? ch->glyph[PERITER]
		      : ch->st->unicode ? eighth[e8]
		                        : ".",
		      f);
	}
	fprintf(f, "\n  %10s %s", "", "copy ");
	for (int c = 0; c < width; c++) {
		int lo = (int)((int64_t)c * nops / width);
		int hi = (int)((int64_t)(c + 1) * nops / width);
		int out = 0, in = 0;
		for (int i = 0; i < p->noffloads; i++) {
			out |= p->offloads[i].out_at >= lo && p->offloads[i].out_at < hi;
			in |= p->offloads[i].fetch_at >= lo && p->offloads[i].fetch_at < hi;
		}
		fputc(out && in ? 'x' : out ? 'v' : in ? '^' : ' ', f);
	}
	fputc('\n', f);
}

void rr_print_chart(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                    const struct rr_plan *p, const struct rr_style *st)
{
	struct chart ch = {.f = f, .t = t, .s = s, .p = p, .st = st, .budget_row = -1};
	ch.glyph = st->unicode ? glyph_utf8 : glyph_ascii;
	ch.width = st->width;
	ch.height = st->height;
	ch.top = s->peak;
	if (t->nops == 0)
		return;
	if (p && p->budget > ch.top)
		ch.top = p->budget;
	if (ch.top <= 0)
		ch.top = 1;
	ch.step = (double)ch.top / ch.height;
	/* the topmost row the persistent level fills */
	ch.persist_row =
	    row_of(s->persistent_level + (int64_t)(ch.step / 2), ch.step, ch.height) - 1;
	if (p)
		ch.budget_row = row_of(p->budget, ch.step, ch.height);

	fprintf(f, "  %10s %s per-iteration  %s persistent", "", ch.glyph[PERITER],
	        ch.glyph[PERSISTENT]);
	if (p)
		fprintf(f, "  %s freed by the plan  %s budget", ch.glyph[SAVED], ch.glyph[BUDGET]);
	fprintf(f, "\n");
	for (int r = ch.height - 1; r >= 0; r--)
		print_row(&ch, r);
	print_axis(&ch);
	if (p && p->host && p->host_peak > 0)
		print_host(&ch);
}
