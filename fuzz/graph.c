/*
 * graph.c — libFuzzer harness for the graph file reader
 * (planner/formats/graph_json.c, docs/graph-format.md).  A node-link
 * file given here goes on to the node-link reader, whose own harness is
 * nodelink.c.
 */
#include "../planner/planner.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = fuzz_file("in.json", data, size);
	struct pl_graph *g = NULL;
	char err[2048] = "";
	if (pl_graph_load_json(in, &g, err, sizeof(err)) != PL_OK) {
		FUZZ_CHECK(!g && err[0], "refused without a message, or kept a graph");
		return 0;
	}
	fuzz_check_graph(g);
	pl_graph_free(g);
	return 0;
}
