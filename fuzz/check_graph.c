/*
 * check_graph.c — what a graph that loaded must survive, whichever reader
 * made it: remat-plan's first uses of it (the lower bound of any plan's
 * peak), and a save as a graph file that reads back with the same ops,
 * buffers, hash and baseline peak.
 */
#include "../planner/planner.h"
#include "fuzz.h"

void fuzz_check_graph(const struct pl_graph *g)
{
	char err[2048], path[4200];
	struct pl_graph *back = NULL;
	int64_t lb = pl_graph_lower_bound(g);
	FUZZ_CHECK(lb <= g->baseline_peak, "lower bound %lld over the baseline peak %lld",
	           (long long)lb, (long long)g->baseline_peak);
	snprintf(path, sizeof(path), "%s/saved-graph.json", fuzz_dir());
	FUZZ_CHECK(pl_graph_save_json(g, path, err, sizeof(err)) == PL_OK, "%s", err);
	FUZZ_CHECK(pl_graph_load_json(path, &back, err, sizeof(err)) == PL_OK,
	           "the saved graph does not read back: %s", err);
	FUZZ_CHECK(back->nops == g->nops && back->nbufs == g->nbufs && back->hash == g->hash &&
	               back->baseline_peak == g->baseline_peak,
	           "read back as %d ops, %d buffers, hash %016llx, peak %lld (was %d, %d, %016llx, "
	           "%lld)",
	           back->nops, back->nbufs, (unsigned long long)back->hash,
	           (long long)back->baseline_peak, g->nops, g->nbufs, (unsigned long long)g->hash,
	           (long long)g->baseline_peak);
	pl_graph_free(back);
}
