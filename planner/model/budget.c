/*
 * budget.c — `--budget`: the grammar shared with REMAT_BUDGET
 * (core/budget.h), a percentage resolved against the graph's baseline peak.
 */
#include "model.h"

#include "../../core/budget.h"

int pl_parse_budget(const char *s, int64_t baseline_peak, int64_t *out, char *err, size_t errlen)
{
	struct remat_budget b;
	if (remat_budget_parse(s, &b, err, errlen) ||
	    remat_budget_resolve(&b, baseline_peak, out, err, errlen))
		return PL_EINPUT;
	return PL_OK;
}
