/* remat-report: the report's own view of a trace and a plan.
 *
 * load.c fills these from the planner library (trace loader, plan loader,
 * plan evaluator) plus the few fields it does not keep (trace_extras.c);
 * everything else only reads them, so the renderers never depend on how
 * the planner stores its graph.
 */
#ifndef REMAT_REPORT_H
#define REMAT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum rr_kind { RR_KERNEL, RR_MEMCPY, RR_MEMSET, RR_HOST_FUNC, RR_NKINDS };

struct rr_op {
	enum rr_kind kind;
	char *name;   /* kernel name; memcpyHtoD, memset, ... otherwise */
	char *via;    /* entry point that issued it */
	char copy[8]; /* memcpy: HtoD | DtoH | DtoD | HtoH */
	int stream;
	int64_t duration_ns; /* -1: unknown */
	int64_t bytes;       /* memcpy/memset */
	bool replayable;
	char *why_not; /* why it is not replayable, "" when it is */
	int *uses;     /* buffer ids read or written, ascending, no duplicates */
	int nuses;
	int *writes; /* buffer ids it changes */
	int nwrites;
};

struct rr_buf {
	int64_t size;    /* requested */
	int64_t rounded; /* physical, 0 for packed small ones */
	bool small, persistent;
	int alloc_at, free_at; /* op indices as in the trace; -1 = outside */
	char **site;           /* allocating call stack, innermost first */
	int nsite;
};

struct rr_trace {
	char *dir;
	char graph_hash[40];
	char *cmdline, *device;
	int64_t granularity, device_memory;
	int period, iterations_seen;
	int64_t duration_ns;
	int64_t peak_bytes, small_pool_bytes;
	struct rr_op *ops;
	int nops;
	struct rr_buf *bufs;
	int nbufs;
	int64_t cupti_kernels, cupti_launches, cupti_mismatch;
	bool cupti_available; /* false: no durations, no cross-check (cupti_note says why) */
	char *cupti_note;
	int64_t *mem; /* bytes in use during each op, without a plan (nops entries) */
};

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
	int64_t peak;             /* max of trace->mem */
	int peak_op;              /* first op where it is reached */
	int64_t persistent_level; /* persistent large + small pool */
	struct rr_gap *gaps;      /* large per-iteration buffers with an idle gap, largest first */
	int ngaps;
	/* Leading call-stack frames every per-iteration buffer shares (the
	 * framework's allocator wrapper): the tables show the frames after. */
	int site_skip;
};

/* load.c: 0 on success; otherwise one message in err naming the file. */
int rr_load_trace(const char *dir, struct rr_trace *t, char *err, size_t errlen);
int rr_load_plan(const char *path, const struct rr_trace *t, struct rr_plan *p, char *err,
                 size_t errlen);
int rr_export_graph(const char *dir, const char *out, char *err, size_t errlen);
void rr_trace_free(struct rr_trace *t);
void rr_plan_free(struct rr_plan *p);
/* trace_extras.c: fields the graph model does not keep (via, stream, site, ...) */
int rr_trace_extras(const char *dir, struct rr_trace *t, char *err, size_t errlen);

/* analyze.c */
void rr_analyze(const struct rr_trace *t, struct rr_stats *s);
void rr_stats_free(struct rr_stats *s);
const char *rr_buf_role(const struct rr_buf *b);

/* fmt.c: human units into a caller buffer, returned for chaining */
char *rr_bytes(int64_t bytes, char *buf, size_t len);
char *rr_ns(int64_t ns, char *buf, size_t len);
char *rr_site(const struct rr_buf *b, int skip, int frames, const char *sep, char *buf, size_t len);

/* summary.c, plan_view.c, chart_term.c: the terminal report */
struct rr_style {
	bool color;
	bool unicode;
};
/* A section title on its own line after a blank one, bold in color. */
void rr_heading(FILE *f, const struct rr_style *st, const char *title);
void rr_print_summary(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                      const struct rr_style *st);
void rr_print_plan(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                   const struct rr_plan *p, const struct rr_style *st);
void rr_print_chart(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                    const struct rr_plan *p, const struct rr_style *st, int width, int height);

/* html.c, svg.c: the page */
int rr_write_html(const char *path, const struct rr_trace *t, const struct rr_stats *s,
                  const struct rr_plan *p, char *err, size_t errlen);
void rr_svg_memory(FILE *f, const struct rr_trace *t, const struct rr_stats *s,
                   const struct rr_plan *p);
void rr_svg_lifetimes(FILE *f, const struct rr_trace *t, const struct rr_plan *p);
void rr_html_text(FILE *f, const char *s);

#endif
