/* The terminal view of a plan: its summary, what it evicts and where it
 * rebuilds. */
#include "report.h"

#include <inttypes.h>

#define MAX_ROWS 20

static void print_summary(FILE *f, const struct rr_trace *t, const struct rr_plan *p)
{
	char a[32], b[32], c[32];
	double pct =
	    t->duration_ns > 0 ? 100.0 * (double)p->recompute_ns / (double)t->duration_ns : 0;

	fprintf(f, "  file       %s\n", p->path);
	fprintf(f, "  planner    %s\n", p->planner);
	fprintf(f, "  budget     %s\n", rr_bytes(p->budget, a, sizeof(a)));
	fprintf(f, "  peak       %s before, %s with the plan (%s)\n",
	        rr_bytes(p->peak_before, a, sizeof(a)), rr_bytes(p->peak_after, b, sizeof(b)),
	        p->peak_after <= p->budget ? "fits the budget" : "OVER the budget");
	fprintf(f, "  recompute  %s per iteration, %.1f%% of the iteration's %s\n",
	        rr_ns(p->recompute_ns, a, sizeof(a)), pct, rr_ns(t->duration_ns, c, sizeof(c)));
	fprintf(f, "  evictions  %d, rebuilds before %d op%s\n", p->nevicts, p->nrebuilds,
	        p->nrebuilds == 1 ? "" : "s");
	if (p->noffloads)
		fprintf(f,
		        "  offload    %d buffer version%s to pinned host memory at %g GB/s, %s "
		        "held at most; copies stick out %s\n",
		        p->noffloads, p->noffloads == 1 ? "" : "s", p->gbps,
		        rr_bytes(p->host_peak, a, sizeof(a)), rr_ns(p->stall_ns, b, sizeof(b)));
	if (p->nparked)
		fprintf(f,
		        "  parked     %d buffer%s no op touches, %s, on the host while the plan "
		        "applies (copied once)\n",
		        p->nparked, p->nparked == 1 ? "" : "s",
		        rr_bytes(p->parked_bytes, a, sizeof(a)));
}

/* What goes to the host, when it leaves and when it comes back. */
static void print_offloads(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                           const struct rr_plan *p)
{
	char a[32], site[160];
	fprintf(f, "  %-6s %10s  %-10s %-12s %-12s %-10s %s\n", "buffer", "size", "copy out",
	        "dropped after", "prefetch at", "awaited at", "allocated at");
	for (int i = 0; i < p->noffloads && i < MAX_ROWS; i++) {
		const struct rr_offload *o = &p->offloads[i];
		const struct pl_buffer *b = &t->bufs[o->buf];
		fprintf(f, "  #%-5d %10s  %-10d %-12d %-12d %-10d %s\n", o->buf,
		        rr_bytes(b->size, a, sizeof(a)), o->out_at, o->evict_after, o->fetch_at,
		        o->await_at, rr_site(b, s->site_skip, 1, "", site, sizeof(site)));
	}
	if (p->noffloads > MAX_ROWS)
		fprintf(f, "  (%d more)\n", p->noffloads - MAX_ROWS);
}

static void print_evicts(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                         const struct rr_plan *p)
{
	char a[32], site[160];
	fprintf(f, "  %-6s %10s  %-8s %-14s %s\n", "buffer", "size", "after op", "rebuilt before",
	        "allocated at");
	for (int i = 0; i < p->nevicts && i < MAX_ROWS; i++) {
		const struct rr_evict *e = &p->evicts[i];
		const struct pl_buffer *b = &t->bufs[e->buf];
		char until[16] = "-";
		if (e->before_op >= 0)
			snprintf(until, sizeof(until), "%d", e->before_op);
		fprintf(f, "  #%-5d %10s  %-8d %-14s %s\n", e->buf,
		        rr_bytes(b->rounded, a, sizeof(a)), e->after_op, until,
		        rr_site(b, s->site_skip, 1, "", site, sizeof(site)));
	}
	if (p->nevicts > MAX_ROWS)
		fprintf(f, "  (%d more)\n", p->nevicts - MAX_ROWS);
}

static void print_rebuilds(FILE *f, const struct rr_trace *t, const struct rr_plan *p)
{
	char a[32];

	fprintf(f, "  %-9s %10s  %s\n", "before op", "cost", "replayed ops");
	for (int i = 0; i < p->nrebuilds && i < MAX_ROWS; i++) {
		const struct rr_rebuild *r = &p->rebuilds[i];
		fprintf(f, "  %-9d %10s  ", r->before_op, rr_ns(r->cost_ns, a, sizeof(a)));
		if (r->nreplay == 0)
			fprintf(f, "(map only)");
		for (int k = 0; k < r->nreplay; k++) {
			int op = r->replay[k];
			fprintf(f, "%s%d %s", k ? ", " : "", op,
			        op >= 0 && op < t->nops ? t->ops[op].name : "?");
			if (k == 5 && r->nreplay > 6) {
				fprintf(f, ", ... (%d ops)", r->nreplay);
				break;
			}
		}
		fputc('\n', f);
	}
	if (p->nrebuilds > MAX_ROWS)
		fprintf(f, "  (%d more)\n", p->nrebuilds - MAX_ROWS);
}

void rr_print_plan(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                   const struct rr_plan *p, const struct rr_style *st)
{
	rr_heading(f, st, "PLAN");
	print_summary(f, t, p);
	rr_heading(f, st, "PLAN: EVICTIONS");
	if (p->nevicts == 0)
		fprintf(f, "  none: the iteration already fits the budget\n");
	else
		print_evicts(f, t, s, p);
	rr_heading(f, st, "PLAN: REBUILDS");
	if (p->nrebuilds == 0)
		fprintf(f, "  none\n");
	else
		print_rebuilds(f, t, p);
	if (p->noffloads) {
		rr_heading(f, st, "PLAN: OFFLOADS TO HOST MEMORY");
		print_offloads(f, t, s, p);
	}
}
