/*
 * budget.h — the one grammar of a memory budget, shared by REMAT_BUDGET
 * (core/config.c) and `remat-plan --budget` (planner/):
 *
 *   bytes      4096, 12G, 1536M, 1.5G, 12GiB, 7MB (K/M/G/T are powers of 1024)
 *   percent    50%, 2.5%: of the baseline peak, the physical peak of one
 *              unmodified iteration (in (0, 100])
 *
 * A percentage is resolved only once that peak is known: by the runtime
 * after the profiled iteration, by remat-plan from the graph it loaded.
 */
#ifndef REMAT_CORE_BUDGET_H
#define REMAT_CORE_BUDGET_H

#include <stddef.h>
#include <stdint.h>

struct remat_budget {
	int64_t bytes;  /* > 0 when given in bytes, else 0 */
	double percent; /* in (0, 100] when given as a percentage, else 0 */
};

/* 0, or -1 with one message in err (naming the value and what is accepted). */
int remat_budget_parse(const char *s, struct remat_budget *out, char *err, size_t errlen);

/* Bytes of the budget for a baseline peak.  0, or -1 with a message in err
 * when a percentage rounds to no byte at all. */
int remat_budget_resolve(const struct remat_budget *b, int64_t baseline_peak, int64_t *out,
                         char *err, size_t errlen);

#endif
