/*
 * cands_internal.h — candidate generation internals shared by
 * candidates.c and segments.c.
 */
#ifndef LIBREMAT_PLANNER_CANDS_INTERNAL_H
#define LIBREMAT_PLANNER_CANDS_INTERNAL_H

#include "internal.h"

#define RC_MAX_CHAIN 8   /* writes of one buffer replayed to rebuild it */
#define RC_MAX_OPS   64  /* ops replayed by one rebuild */
#define RC_MAX_T     32  /* buffers rebuilt and kept by one rebuild */
#define RC_MAX_INTER 8   /* buffers rebuilt only to feed the replays */
#define RC_MAX_TOUCH 256 /* buffers one rebuild touches */
#define RC_MAX_STEPS 512

struct cindex {
	uint32_t *wr_off; /* writers of b: writers[wr_off[b] .. wr_off[b+1]), ascending */
	int32_t *writers;
	uint32_t *use_off; /* ops referencing b, ascending */
	int32_t *uses;
	uint32_t *gap_off; /* gaps of b: cs->gaps[gap_off[b] .. gap_off[b+1]) */
	int32_t *single;   /* per gap: its single candidate, or -1 */
};

/* Scratch and result of building one rebuild recipe. */
struct recipe {
	/* input: the buffers to rebuild and keep, with the versions they must end with */
	int nt;
	int32_t tb[RC_MAX_T], tv[RC_MAX_T];
	/* derived */
	int ni;
	int32_t ib[RC_MAX_INTER], iv[RC_MAX_INTER];
	int nops;
	int32_t ops[RC_MAX_OPS];
	int ntouched;
	int32_t touched[RC_MAX_TOUCH];
	int nsteps, overflow;
	struct pl_step steps[RC_MAX_STEPS];
	int nforbid;
	int32_t forbid[RC_MAX_TOUCH];
	int64_t cost, transient;
	int32_t last_op;
	/* per-buffer scratch, valid where stamp == epoch */
	uint32_t epoch;
	uint32_t *stamp;
	int32_t *lver, *first;
	uint8_t *role;
};

struct cbuild {
	struct pl_cands *cs;
	size_t cap_c, cap_r, cap_g, cap_f, cap_s, cap_gaps;
};

int pl_recipe_init(struct recipe *rc, int32_t nbufs);
void pl_recipe_free(struct recipe *rc);
int pl_recipe_build(struct recipe *rc, const struct pl_graph *g, const struct cindex *ix,
                    const struct pl_cands *cs, int32_t c, int strict);
int32_t pl_ver_at(const struct pl_graph *g, const struct cindex *ix, int32_t b, int32_t p);
int32_t pl_gap_at(const struct pl_cands *cs, const struct cindex *ix, int32_t b, int32_t p,
                  int end_ok);
int pl_cands_add(struct cbuild *cb, const struct pl_cand *proto, const struct pl_range *ranges,
                 int nranges, const int32_t *gaps, int ngaps, const struct recipe *rc);
int pl_segments_build(const struct pl_graph *g, const struct cindex *ix, struct cbuild *cb,
                      struct recipe *rc, int strict, int max_segment);

#endif
