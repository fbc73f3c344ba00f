/*
 * classes.c — what the memory holds, told from the trace's reads and
 * writes alone (issue 31): a trainer's arenas hold parameters, gradients
 * and activations side by side, and no allocation site says which.
 * Parameters live across the boundary, are read and then updated; the
 * ops that update them are the step; optimizer state is what only the
 * step touches, gradients what else it reads; backward begins at the first
 * write of a gradient that is not a memset, and activations are written
 * before it and read after it.  docs/remat-report.md ("WHAT THE MEMORY HOLDS").
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

/* The ref reads the buffer (a ref that only references it counts). */
static bool ref_reads(const struct pl_ref *r)
{
	return (r->flags & PL_REF_READ) || !(r->flags & PL_REF_WRITE);
}

static bool across(const struct pl_buffer *b)
{
	return b->alloc_at < 0 && b->free_at < 0;
}

/* Parameters: live across the boundary, read first (by the forward pass)
 * and written last (by the step): a tensor written in forward and read
 * in backward whose first access is a read (a pointer's reach takes it
 * in) is none.  What is live across and never written stays as it is;
 * the rest is workspace until shown otherwise. */
static void find_params(const struct rr_trace *t, uint8_t *cls)
{
	size_t n = (size_t)t->nbufs + 1;
	uint8_t *seen = calloc(n, 1), *first_read = calloc(n, 1), *written = calloc(n, 1),
	        *last_write = calloc(n, 1);
	bool ok = seen && first_read && written && last_write;
	for (int i = 0; ok && i < t->nops; i++)
		for (uint32_t k = 0; k < t->ops[i].nrefs; k++) {
			const struct pl_ref *r = &t->g->refs[t->ops[i].ref_off + k];
			bool w = (r->flags & PL_REF_WRITE) != 0;
			if (!seen[r->buf]++)
				first_read[r->buf] = ref_reads(r) && !w;
			written[r->buf] |= w;
			last_write[r->buf] = w;
		}
	for (int b = 0; ok && b < t->nbufs; b++) {
		const struct pl_buffer *u = &t->bufs[b];
		bool live = across(u) && !u->dead_across;
		cls[b] = live && first_read[b] && last_write[b] ? RR_CLASS_STATE
		         : live && !written[b]                  ? RR_CLASS_OTHER
		                                                : RR_CLASS_WORK;
	}
	free(seen);
	free(first_read);
	free(written);
	free(last_write);
}

/* The step: the ops that write a parameter. */
static uint8_t *find_step(const struct rr_trace *t, const uint8_t *cls)
{
	uint8_t *step = calloc((size_t)t->nops + 1, 1);
	for (int i = 0; step && i < t->nops; i++)
		for (uint32_t k = 0; k < t->ops[i].nrefs && !step[i]; k++) {
			const struct pl_ref *r = &t->g->refs[t->ops[i].ref_off + k];
			step[i] = (r->flags & PL_REF_WRITE) && cls[r->buf] == RR_CLASS_STATE;
		}
	return step;
}

/* Optimizer state: live across the boundary and touched by the step only
 * (AdamW's moments).  Gradients: what else the step reads. */
static void find_state_and_gradients(const struct rr_trace *t, uint8_t *cls, const uint8_t *step)
{
	size_t n = (size_t)t->nbufs + 1;
	uint8_t *other = calloc(n, 1), *by_step = calloc(n, 1);
	for (int i = 0; other && by_step && i < t->nops; i++)
		for (uint32_t k = 0; k < t->ops[i].nrefs; k++) {
			int32_t b = t->g->refs[t->ops[i].ref_off + k].buf;
			(step[i] ? by_step : other)[b] = 1;
		}
	for (int b = 0; other && by_step && b < t->nbufs; b++)
		if (cls[b] == RR_CLASS_WORK && by_step[b] && !other[b] && across(&t->bufs[b]) &&
		    !t->bufs[b].dead_across)
			cls[b] = RR_CLASS_STATE;
	for (int i = 0; i < t->nops; i++)
		for (uint32_t k = 0; step[i] && k < t->ops[i].nrefs; k++) {
			const struct pl_ref *r = &t->g->refs[t->ops[i].ref_off + k];
			if (ref_reads(r) && !(r->flags & PL_REF_WRITE) &&
			    cls[r->buf] == RR_CLASS_WORK)
				cls[r->buf] = RR_CLASS_GRAD;
		}
	free(other);
	free(by_step);
}

/* The first op that writes a gradient and is not a memset (zeroing them
 * for the step comes first), -1 none. */
static int backward_start(const struct rr_trace *t, const uint8_t *cls)
{
	for (int i = 0; i < t->nops; i++) {
		const struct pl_op *o = &t->ops[i];
		for (uint32_t k = 0; o->kind != PL_KIND_MEMSET && k < o->nrefs; k++) {
			const struct pl_ref *r = &t->g->refs[o->ref_off + k];
			if ((r->flags & PL_REF_WRITE) && cls[r->buf] == RR_CLASS_GRAD)
				return i;
		}
	}
	return -1;
}

/* Of what is left dead across the boundary: inputs (first written by a
 * copy from the host) and activations (written before backward, read
 * from it on); the rest stays workspace. */
static void find_activations(const struct rr_trace *t, uint8_t *cls, int bwd)
{
	uint8_t *fwd = calloc((size_t)t->nbufs + 1, 1), *seen = calloc((size_t)t->nbufs + 1, 1);
	for (int i = 0; fwd && seen && i < t->nops; i++) {
		const struct pl_op *o = &t->ops[i];
		bool from_host = o->kind == PL_KIND_MEMCPY && o->copy && !strcmp(o->copy, "HtoD");
		for (uint32_t k = 0; k < o->nrefs; k++) {
			const struct pl_ref *r = &t->g->refs[o->ref_off + k];
			bool w = (r->flags & PL_REF_WRITE) != 0;
			if (cls[r->buf] != RR_CLASS_WORK)
				continue;
			if (w && !seen[r->buf]++ && from_host)
				cls[r->buf] = RR_CLASS_INPUT;
			else if (w && bwd >= 0 && i < bwd)
				fwd[r->buf] = 1;
			else if (!w && ref_reads(r) && fwd[r->buf] && bwd >= 0 && i >= bwd)
				cls[r->buf] = RR_CLASS_ACT;
		}
	}
	free(fwd);
	free(seen);
}

void rr_classify(const struct rr_trace *t, struct rr_stats *s)
{
	uint8_t *cls = calloc((size_t)t->nbufs + 1, 1);
	s->buf_class = cls;
	s->backward_op = -1;
	if (!cls)
		return;
	find_params(t, cls);
	uint8_t *step = find_step(t, cls);
	if (step)
		find_state_and_gradients(t, cls, step);
	free(step);
	s->backward_op = backward_start(t, cls);
	find_activations(t, cls, s->backward_op);
	for (int b = 0; b < t->nbufs; b++) {
		s->class_bytes[cls[b]] += t->bufs[b].size;
		s->class_n[cls[b]]++;
	}
}
