/*
 * iteration.h — finding the training iteration in the stream of ops.
 *
 * Each op is reduced to a signature (function, grid, block, sizes) and
 * paired with the managed bytes allocated when it was issued.  Pairing
 * matters: a model of N identical layers repeats every layer, but the
 * memory level climbs from one layer to the next, so only the whole
 * iteration repeats the pairs.  A period P holds as long as every pair
 * repeats the pair P earlier; when one does not, the period becomes the
 * smallest P for which the last 2P pairs are two copies of one sequence
 * (or none).  The boundary goes after the plateau of lowest memory
 * (between optimizer step and next forward).  Where the level is flat (a
 * program that keeps its own pool: PyTorch's caching allocator, JAX's
 * BFC, an arena), it goes after the period's last copy to the host (the
 * loss or a metric read back at the end of a step), else before its first
 * copy from the host (the next batch), else at the next op.  A loop
 * inside an iteration repeats too (a radix sort's passes, seen with
 * PyTorch): remat_det_steady refuses a period that is flat right after the
 * level moved until it has repeated for as long as everything before it
 * ran, and one whose ops are given other buffers than one period earlier
 * (an optimizer's loop over tensors, an RNN's time steps, a start-up loop
 * over layers): an iteration works on the same buffers every time.
 */
#ifndef REMAT_ITERATION_H
#define REMAT_ITERATION_H

#include <stddef.h>
#include <stdint.h>

#include "../core/map.h"

struct remat_det_slot {
	uint64_t key; /* the paired signature */
	int64_t idx;  /* the last op with it */
};

struct remat_detector {
	uint64_t *sig;  /* signature paired with level, per op */
	uint64_t *args; /* what the op was given (its pointers), 0 unknown */
	int64_t *level; /* managed bytes when the op was issued */
	int64_t *gap;   /* lowest managed bytes between the previous op and this one */
	int64_t *prev;  /* previous op with the same paired signature, -1 none */
	uint8_t *copy;  /* REMAT_DET_TO_HOST / REMAT_DET_FROM_HOST, per op */
	size_t n, cap, max;
	struct remat_map map; /* records of struct remat_det_slot, by paired signature */
	size_t period;        /* 0 = none now */
	size_t phase;         /* op i starts an iteration iff i % period == phase */
	size_t run;           /* consecutive ops equal to the op one period earlier */
	size_t rep_start;     /* first op of the period's first copy */
	int moved_before;     /* the level moved in the period's length before rep_start */
	int full;             /* max ops seen without a period: detection gave up */
};

/* What an op copies, for the boundary where memory is flat. */
enum { REMAT_DET_OTHER, REMAT_DET_TO_HOST, REMAT_DET_FROM_HOST };

/* One op as the detector sees it. */
struct remat_det_op {
	uint64_t sig;  /* function, launch shape, sizes */
	uint64_t args; /* a hash of its arguments (the buffers it is given), 0 unknown */
	int64_t level; /* managed bytes when it was issued */
	int64_t gap;   /* lowest managed bytes since the previous op */
	int copy;      /* REMAT_DET_* */
};

void remat_det_init(struct remat_detector *d, size_t max_ops);
void remat_det_fini(struct remat_detector *d);
/* Appends one op; returns its index, or -1 once max_ops is exceeded. */
int64_t remat_det_push(struct remat_detector *d, const struct remat_det_op *op);
/* Op i starts an iteration under the current period. */
int remat_det_is_boundary(const struct remat_detector *d, size_t i);
/* The last two periods matched, and the period is credible: most of its
 * ops were given the same buffers as one period earlier (a loop over
 * layers, tensors or time steps is given others each time round), and the
 * memory level moves within it, or it has held for four periods. */
int remat_det_steady(const struct remat_detector *d);
/* The memory level does not move within the last period: the boundary
 * was guessed from the copies to and from the host. */
int remat_det_flat(const struct remat_detector *d);
/* Index of the iteration that op i (a boundary) starts: the boundaries
 * before it, set-up and a partial first iteration counting as iteration 0. */
size_t remat_det_iteration_index(const struct remat_detector *d, size_t i);

/* Pure helpers, exposed for the tests. */
size_t remat_det_choose_phase(const int64_t *level, const uint8_t *copy, size_t n, size_t period);
uint64_t remat_det_pair(uint64_t sig, int64_t level);

#endif
