/*
 * nodelink.c — libFuzzer harness for the networkx node-link reader
 * (planner/formats/checkmate_load.c: Checkmate training graphs and
 * random layered DAGs, docs/graph-format.md), entered as
 * pl_graph_load_json enters it: a JSON object with "nodes" and "links"
 * and no "format".
 */
#include <jansson.h>

#include "../planner/formats/formats.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = fuzz_file("in.json", data, size);
	char err[2048] = "";
	json_t *root = pl_json_load_file(in, err, sizeof(err));
	if (!root)
		return 0;
	struct pl_graph *g = NULL;
	if (json_is_object(root) && !json_object_get(root, "format") &&
	    json_object_get(root, "nodes") && json_object_get(root, "links")) {
		if (pl_graph_load_nodelink(in, root, &g, err, sizeof(err)) == PL_OK)
			fuzz_check_graph(g);
		else
			FUZZ_CHECK(!g && err[0], "refused without a message, or kept a graph");
	}
	json_decref(root);
	pl_graph_free(g);
	return 0;
}
