/*
 * testutil.h — helpers shared by the planner's unit tests: random small
 * training-like graphs and an independent, deliberately naive plan
 * simulator to check the evaluator against.
 */
#ifndef LIBREMAT_TESTS_PLANNER_TESTUTIL_H
#define LIBREMAT_TESTS_PLANNER_TESTUTIL_H

#include "../../planner/search/search.h"

struct rg_opts {
	int layers;      /* forward ops; the graph has about 2*layers+1 ops */
	int side_writes; /* allow ops with extra outputs (workspaces, stats) */
	int inplace;     /* allow in-place ops */
	int nonreplay;   /* allow non-replayable ops */
	int dead;        /* some activations live in long-lived memory, dead across the boundary */
	int partial;     /* some writes cover only part of their buffer */
	int shared;      /* some buffers next to each other share a chunk (shared_chunks) */
	/* long-lived regions that hold one tensor, then another (a pool's
	 * reuse), and a memset of several regions whose zeros a partial write
	 * keeps (an arena's) */
	int reuse;
};

/* Deterministic xorshift so failures reproduce from the seed. */
uint64_t tu_rand(uint64_t *s);
struct pl_graph *tu_random_graph(uint64_t seed, const struct rg_opts *o);
/* The cross-checks' mix: every feature on for some seeds, off for others. */
struct rg_opts tu_mixed_opts(uint64_t seed);

/* The plan of a random set of compatible candidates (each one offered is
 * taken with probability 1/3), the set in *sel, which this initialises
 * (the caller frees both); NULL when out of memory. */
struct pl_plan *tu_random_selection(const struct pl_graph *g, const struct pl_cands *cs,
                                    uint64_t *s, struct pl_selection *sel);

struct tu_sim {
	int valid;
	int64_t peak, recompute;
	int64_t *curve;
};
/* The reference simulation: same rules as the evaluator, naive code. */
void tu_simulate(const struct pl_graph *g, const struct pl_plan *p, struct tu_sim *r);

/* A hand-made graph: nbufs buffers (rounded = size), refs (op, buffer,
 * flags) in op order, every op replayable and named `name`, op i lasting
 * dur0 + i * dur_step ns. */
struct tu_ref {
	int32_t op, buf;
	uint32_t flags;
};
struct pl_graph *tu_hand_graph(const char *name, int32_t nops, const struct pl_buffer *bufs,
                               int32_t nbufs, const struct tu_ref *refs, size_t nrefs, int64_t dur0,
                               int64_t dur_step);

/* tu_hand_graph, and chunks pairs of buffers share: group i of sh[i].bytes,
 * held by buffers sh[i].a and sh[i].b (counted in the baseline, not in
 * const_bytes). */
struct tu_share {
	int64_t bytes;
	int32_t a, b;
};
struct pl_graph *tu_hand_graph_shared(const char *name, int32_t nops, const struct pl_buffer *bufs,
                                      int32_t nbufs, const struct tu_ref *refs, size_t nrefs,
                                      int64_t dur0, int64_t dur_step, const struct tu_share *sh,
                                      size_t nsh);

/* Two regions A (buffer 0) and B (1) of 100 bytes share a 64-byte chunk;
 * C (2, 150 bytes) lives for op 2 only.  Op 0 writes A, op 1 reads A and
 * writes B, op 2 writes C, op 3 reads B, op 4 reads A (5 ops of 10 ns).
 * tu_shared_plan: A evicted after op 1 and rebuilt before op 4 (both 0),
 * or A and B evicted after op 1 and rebuilt before op 3 (both 1). */
struct pl_graph *tu_shared_graph(void);
/* A graph file (text) for parking: buffer 0 (1000 bytes) lives across the
 * boundary and no op references it, buffer 1 (100) too but op 0 writes
 * it, buffer 3 (50) no op references either but it is allocated inside
 * the iteration; baseline peak 1950, 950 with buffer 0 parked. */
extern const char tu_park_graph[];
struct pl_plan *tu_shared_plan(int both);

/* A copy of plan p with one random change (a step or eviction dropped,
 * moved or added, the boundary list changed): mostly invalid plans. */
struct pl_plan *tu_mutate(const struct pl_graph *g, const struct pl_plan *p, uint64_t *s);

/* text with the first `from` replaced by `to` (which must occur); free it. */
char *tu_replace(const char *text, const char *from, const char *to);

/* Writes text to dir/name; returns the path in a static buffer. */
const char *tu_write(const char *dir, const char *name, const char *text);
char *tu_tmpdir(void);
void tu_rmdir(char *dir);

#endif
