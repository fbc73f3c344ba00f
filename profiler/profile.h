/*
 * profile.h — recording one iteration into a struct remat_trace.  Called by
 * record.c with the profiler lock held.
 */
#ifndef REMAT_PROFILE_H
#define REMAT_PROFILE_H

#include "internal.h"
#include "profiler.h"

int remat_profile_begin(uint64_t start_op, size_t period, size_t iteration, int cupti_ok,
                        const char *cupti_note);
uint64_t remat_profile_start(void);
/* A buffer allocated just before the first op, after the low point: it
 * belongs to the iteration (alloc_at 0). */
void remat_profile_adopt(struct remat_pbuf *b);
void remat_profile_op_before(struct remat_op *op, uint64_t k, int64_t level);
void remat_profile_op_after(struct remat_op *op, uint64_t k, CUresult rc);
void remat_profile_alloc(struct remat_pbuf *b, uint64_t next_op);
void remat_profile_free(struct remat_pbuf *b, uint64_t next_op);
/* The iteration is over: durations from CUPTI, buffers, memory figures. */
void remat_profile_end(int cupti_ok);
void remat_profile_drop(void);
void remat_profile_set_sig(uint64_t k, uint64_t sig);
/* Run mode: what the replay engine needs of the finished profile (call
 * after remat_profile_end, before remat_profile_publish).  NULL when out
 * of memory. */
struct replay_profile *remat_profile_snapshot(int64_t level0);
/* Hands the finished trace to the writer thread. */
void remat_profile_publish(const char *dir);
void remat_profile_join(void);

#endif
