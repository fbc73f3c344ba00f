/*
 * internal.h — between the files of planner/cands/: how candidates are
 * added while they are built, and the parts of a recipe only candidate
 * building needs.
 */
#ifndef LIBREMAT_PLANNER_CANDS_INTERNAL_H
#define LIBREMAT_PLANNER_CANDS_INTERNAL_H

#include "cands.h"

/* The memory ranges the recipe just built adds at c besides its
 * targets: each stash, held from the first use of its buffer to c
 * (negative saved bytes).  Appends to out; -1 when out of memory. */
int pl_recipe_stash_ranges(const struct recipe *rc, const struct pl_graph *g, int32_t c,
                           struct pl_ranges *out);
int32_t pl_gap_at(const struct pl_cands *cs, const struct cindex *ix, int32_t b, int32_t p,
                  int end_ok);
/* Adds proto with its proto->nranges ranges and proto->ngaps gaps, and
 * the forbidden gaps and steps of rc (NULL: none): 0, 1 when it saves
 * nothing (left out), -1 out of memory. */
int pl_cands_add(struct cbuild *cb, const struct pl_cand *proto, const struct pl_range *ranges,
                 const int32_t *gaps, const struct recipe *rc);
/* offload.c: offload candidates for the gaps built so far, at gbps. */
int pl_offload_build(const struct pl_graph *g, struct cbuild *cb, double gbps);
int pl_segments_build(struct pl_setb *sb, int max_segment);

#endif
