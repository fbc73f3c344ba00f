/*
 * plan.c — libFuzzer harness for both plan readers (docs/plan-format.md):
 * remat-plan's (planner/formats/plan_json.c, which remat-report also
 * uses) and the runtime's (acquire/plan_read.c, jansson through dlopen).
 *
 * The graph the plans are read against is the fixture the seed plans were
 * made for (FUZZ_PLAN_TRACE, a trace directory).  remat-plan's reader goes
 * first without the graph (the plan's own figures then stand for the
 * graph's), then with it when the plan names it; the runtime's reader is
 * asked with the same figures.  Where both accept a plan they must read
 * the same steps, evictions and boundary list; a plan remat-plan's reader
 * accepts against the graph is then simulated by its evaluator.
 */
#include <string.h>

#include "../acquire/internal.h"
#include "../planner/planner.h"
#include "fuzz.h"

#ifndef FUZZ_PLAN_TRACE
#define FUZZ_PLAN_TRACE "tests/report/fixtures/mlp3"
#endif
/* The budget of the seed plans for that trace. */
#define SEED_BUDGET 146800640

static const struct pl_graph *fixture(void)
{
	static struct pl_graph *g;
	static int tried;
	char err[2048];
	if (!tried++ && pl_graph_load_trace(FUZZ_PLAN_TRACE, &g, err, sizeof(err)) != PL_OK) {
		fprintf(stderr, "fuzz: %s (run from the repository root)\n", err);
		exit(2);
	}
	return g;
}

/* n bytes equal (either pointer may be NULL when n is 0). */
static int same_bytes(const void *a, const void *b, size_t n)
{
	return !n || !memcmp(a, b, n);
}

static void same_plan(const struct pl_plan *a, const struct pl_plan *b)
{
	FUZZ_CHECK(a->nops == b->nops && a->graph_hash == b->graph_hash && a->budget == b->budget,
	           "the readers disagree on the header");
	size_t offs = ((size_t)a->nops + 1) * sizeof(uint32_t);
	FUZZ_CHECK(same_bytes(a->step_off, b->step_off, offs) &&
	               same_bytes(a->evict_off, b->evict_off, offs),
	           "the readers disagree on the step or eviction lists' lengths");
	FUZZ_CHECK(same_bytes(a->steps, b->steps, a->step_off[a->nops] * sizeof(*a->steps)) &&
	               same_bytes(a->evict, b->evict, a->evict_off[a->nops] * sizeof(*a->evict)),
	           "the readers disagree on the steps or evictions");
	FUZZ_CHECK(a->nboundary == b->nboundary &&
	               same_bytes(a->boundary, b->boundary, (size_t)a->nboundary * sizeof(int32_t)),
	           "the readers disagree on the boundary list");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct pl_graph *g = fixture();
	const char *in = fuzz_file("p.plan.json", data, size);
	char err[2048] = "";
	struct pl_plan *alone = NULL, *against = NULL, *runtime = NULL;
	uint64_t hash = g->hash;
	int32_t nops = g->nops, nbufs = g->nbufs;
	int64_t budget = SEED_BUDGET;
	if (pl_plan_load_json(in, NULL, &alone, err, sizeof(err)) == PL_OK) {
		FUZZ_CHECK(alone != NULL, "accepted without a plan");
		if (alone->graph_hash == g->hash && alone->nops == g->nops &&
		    pl_plan_load_json(in, g, &against, err, sizeof(err)) == PL_OK) {
			struct pl_eval e;
			FUZZ_CHECK(pl_evaluate(g, against, &e) == PL_OK, "the evaluator failed");
			FUZZ_CHECK(e.valid || e.error[0], "invalid without a reason");
			pl_eval_free(&e);
		} else {
			nbufs = -1; /* the runtime without a trace: ids unchecked */
		}
		hash = alone->graph_hash;
		nops = alone->nops;
		budget = alone->budget;
	} else {
		FUZZ_CHECK(!alone && err[0], "refused without a message, or kept a plan");
	}
	err[0] = '\0';
	if (acq_plan_read(in, hash, nops, budget, nbufs, &runtime, err, sizeof(err)) == 0) {
		FUZZ_CHECK(runtime != NULL, "accepted without a plan");
		if (alone)
			same_plan(alone, runtime);
	} else {
		FUZZ_CHECK(!runtime && err[0], "refused without a message, or kept a plan");
	}
	pl_plan_free(runtime);
	pl_plan_free(against);
	pl_plan_free(alone);
	return 0;
}
