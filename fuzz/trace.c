/*
 * trace.c — libFuzzer harness for the trace reader
 * (planner/formats/trace_load.c, docs/trace-format.md): the input is
 * trace.json, beside an empty params.bin (the seeds say so: size 0, the
 * FNV-1a of nothing).
 */
#include "../planner/planner.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file("params.bin", (const uint8_t *)"", 0);
	fuzz_file("trace.json", data, size);
	struct pl_graph *g = NULL;
	char err[2048] = "";
	if (pl_graph_load_trace(fuzz_dir(), &g, err, sizeof(err)) != PL_OK) {
		FUZZ_CHECK(!g && err[0], "refused without a message, or kept a graph");
		return 0;
	}
	fuzz_check_graph(g);
	pl_graph_free(g);
	return 0;
}
