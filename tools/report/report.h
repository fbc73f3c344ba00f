/* remat-report: a trace (or graph file) and a plan, as the views see them.
 *
 * load.c loads both through the planner library (graph loader, plan
 * loader, plan evaluator); the views read the planner's graph model
 * directly and only add what a plan does op by op (struct rr_plan).
 */
#ifndef REMAT_REPORT_H
#define REMAT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../planner/planner.h"

/* A trace directory or a graph file, as the planner loads it: the report
 * reads ops, buffers and the trace's other sections from the planner's own
 * model, so a field the loader learns is there for every view. */
struct rr_trace {
	char *path;                       /* as given: a trace directory or a graph file */
	struct pl_graph *g;               /* owned */
	const struct pl_trace_info *info; /* &g->trace */
	const struct pl_op *ops;          /* g->ops, nops of them */
	int nops;
	const struct pl_buffer *bufs; /* g->bufs, nbufs of them */
	int nbufs;
	const int64_t *mem; /* bytes in use during each op without a plan (g->live) */
	char graph_hash[20];
	int period;          /* ops per iteration (the op count of a graph file) */
	int64_t duration_ns; /* the profiler's sum of op durations, else the graph's */
};

/* An op's measured duration, -1 when the file gave none (the planner's
 * model substitutes the mean of the known ones). */
static inline int64_t rr_op_ns(const struct pl_op *o)
{
	return o->measured ? o->duration_ns : -1;
}

/* The report's four kinds: a graph launch counts with the kernels. */
static inline int rr_op_kind(const struct pl_op *o)
{
	return o->kind == PL_KIND_OTHER ? PL_KIND_KERNEL : o->kind;
}
#define RR_NKINDS 4

/* Buffer k of op o's references (each buffer once), and whether o writes it. */
static inline int rr_ref_buf(const struct rr_trace *t, const struct pl_op *o, uint32_t k)
{
	return t->g->refs[o->ref_off + k].buf;
}
static inline bool rr_ref_writes(const struct rr_trace *t, const struct pl_op *o, uint32_t k)
{
	return (t->g->refs[o->ref_off + k].flags & PL_REF_WRITE) != 0;
}

struct rr_evict {
	int buf;
	int after_op;  /* evicted once this op is done */
	int before_op; /* rebuilt before this op (-1: never needed again) */
};

struct rr_rebuild {
	int before_op;
	int *replay; /* op indices replayed, in order */
	int nreplay;
	int64_t cost_ns;
	struct pl_step *steps; /* every step at this position (map, save, replay, ...), in order */
	int nsteps;
};

struct rr_plan {
	char *path;
	char *planner;
	int64_t budget;
	int64_t peak_before, peak_after;
	int64_t recompute_ns;
	struct rr_evict *evicts;
	int nevicts;
	struct rr_rebuild *rebuilds;
	int nrebuilds;
	int64_t *mem; /* bytes in use during each op with the plan (nops entries) */
	/* Offload to host memory (plan version 3): each buffer version sent
	 * (copy out issued before op out_at, device copy dropped after op
	 * evict_after, prefetch issued before op fetch_at, awaited before op
	 * await_at), the host bytes held during each op, the model's stall. */
	struct rr_offload {
		int buf, out_at, evict_after, fetch_at, await_at;
	} * offloads;
	int noffloads;
	int64_t *host; /* nops entries, NULL without offload */
	int64_t host_peak, stall_ns;
	int nparked;          /* buffers kept on the host while the plan applies */
	int64_t parked_bytes; /* their bytes */
	double gbps;
};

/* What every view shows, computed once from a trace (analyze.c). */
struct rr_kernel_stat {
	const char *name;
	int count;
	int64_t total_ns;
};

struct rr_gap {
	int buf;
	int after_op, before_op; /* last use before the gap, first use after it */
	int ops;                 /* ops strictly between them */
	int64_t ns;              /* their known durations */
	int producer;            /* last op before the gap that wrote the buffer, -1: none */
};

/* What a buffer holds, from the reads and writes (classes.c). */
enum rr_class {
	RR_CLASS_STATE, /* parameters, optimizer state */
	RR_CLASS_GRAD,
	RR_CLASS_ACT,
	RR_CLASS_WORK,  /* dead across the boundary, none of the above */
	RR_CLASS_INPUT, /* first written by a copy from the host */
	RR_CLASS_OTHER, /* live across the boundary, never changed */
	RR_NCLASSES
};

struct rr_stats {
	int kinds[RR_NKINDS];
	int copies[4];         /* HtoD, DtoH, DtoD, HtoH */
	int64_t copy_bytes[4]; /* bytes moved in each direction */
	int streams;           /* distinct stream ids */
	int not_replayable;    /* ops never replayed ... */
	struct rr_reason {     /* ... grouped by reason, most frequent first */
		const char *why;
		int count;
	} * reasons;
	int nreasons;
	struct {
		const char *via;
		int count;
	} * vias;
	int nvias;
	struct rr_kernel_stat *kernels; /* by total time, descending */
	int nkernels;
	int unknown_duration_ops;
	int64_t persistent_large, persistent_small_req, periter_small_req;
	int npersistent_large, npersistent_small, nperiter_small, nperiter_large;
	/* Long-lived buffers (regions of the program's own pools and arenas)
	 * the profile proved dead across the boundary: activations a plan
	 * evicts like per-iteration ones; not in persistent_level.  And the
	 * live-across ones no op touches (a pool's free space), counted in
	 * persistent_large: kept, or parked on the host when offload is on. */
	int64_t regions_dead, untouched;
	int nregions_dead, nuntouched;
	/* Chunks regions share (docs/graph-format.md): with a region live
	 * across the boundary (in persistent_level), or only activations'. */
	int64_t shared_live, shared_dead;
	int nshared_live, nshared_dead;
	int64_t peak;             /* max of trace->mem */
	int peak_op;              /* first op where it is reached */
	int64_t persistent_level; /* persistent large + small pool */
	struct rr_gap *gaps;      /* large activations with an idle gap, largest first */
	int ngaps;
	/* Leading call-stack frames every per-iteration buffer shares (the
	 * framework's allocator wrapper): the tables show the frames after. */
	int site_skip;
	/* classes.c: each buffer's class, the bytes and buffers of each, and
	 * the op backward begins at (-1: no gradient found) */
	uint8_t *buf_class;
	int64_t class_bytes[RR_NCLASSES];
	int class_n[RR_NCLASSES];
	int backward_op;
};

/* load.c: 0 on success; otherwise one message in err naming the file.
 * path: a trace directory or a graph file (pl_graph_load). */
int rr_load_trace(const char *path, struct rr_trace *t, char *err, size_t errlen);
int rr_load_plan(const char *path, const struct rr_trace *t, struct rr_plan *p, char *err,
                 size_t errlen);
int rr_export_graph(const struct rr_trace *t, const char *out, char *err, size_t errlen);
void rr_trace_free(struct rr_trace *t);
void rr_plan_free(struct rr_plan *p);

/* analyze.c */
void rr_analyze(const struct rr_trace *t, struct rr_stats *s);
void rr_stats_free(struct rr_stats *s);
const char *rr_buf_role(const struct pl_buffer *b);
/* classes.c: fills buf_class, class_bytes, class_n and backward_op. */
void rr_classify(const struct rr_trace *t, struct rr_stats *s);

/* fmt.c: human units into a caller buffer, returned for chaining */
char *rr_bytes(int64_t bytes, char *buf, size_t len);
char *rr_ns(int64_t ns, char *buf, size_t len);
char *rr_site(const struct pl_buffer *b, int skip, int frames, const char *sep, char *buf,
              size_t len);
/* Frame k of a buffer's call stack (its length in *len), NULL past the last. */
const char *rr_frame(const struct pl_buffer *b, int k, size_t *len);
int rr_nframes(const struct pl_buffer *b);

/* summary.c, plan_view.c, chart_term.c: the terminal report */
struct rr_style {
	bool color;
	bool unicode;
	int width, height; /* rr_print_chart's columns and rows */
};
/* A section title on its own line after a blank one, bold in color. */
void rr_heading(FILE *f, const struct rr_style *st, const char *title);
void rr_print_summary(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                      const struct rr_style *st);
void rr_print_plan(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                   const struct rr_plan *p, const struct rr_style *st);
void rr_print_chart(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                    const struct rr_plan *p, const struct rr_style *st);

/* html.c, svg.c: the page */
/* timeline: the --perfetto file the page links to (as the link's href), or NULL */
int rr_write_html(const char *path, const struct rr_trace *t, const struct rr_stats *s,
                  const struct rr_plan *p, const char *timeline, char *err, size_t errlen);
void rr_svg_memory(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                   const struct rr_plan *p);
void rr_svg_lifetimes(FILE *f, const struct rr_trace *t, const struct rr_plan *p);
void rr_html_text(FILE *f, const char *s);

/* sweep_view.c: the budget curve of remat-plan --sweep */
void rr_print_sweep(FILE *f, const struct pl_sweep *sw, const char *name, const struct rr_style *st,
                    int width);
int rr_write_sweep_html(const char *path, const struct pl_sweep *sw, const char *name, char *err,
                        size_t errlen);

/* perfetto.c: the Chrome trace-event file (docs/remat-report.md); the
 * memory counter tracks are named RR_COUNTER_BASE and, with a plan,
 * RR_COUNTER_PLAN. */
#define RR_COUNTER_BASE "memory without the plan (bytes)"
#define RR_COUNTER_PLAN "memory with the plan (bytes)"
int rr_write_perfetto(const char *path, const struct rr_trace *t, const struct rr_plan *p,
                      char *err, size_t errlen);

#endif
