/*
 * graph.c — a graph launch in run mode.  Its kernels run without libremat
 * seeing them, so before the launch every evicted buffer one of them
 * references must be back: the plan rebuilds what it knows the graph
 * uses (the profile's references of the graph op), and this check catches
 * anything else (an unplanned access: everything is rebuilt first, as for
 * any op).  What a graph touches was read from its nodes when it was
 * instantiated (profiler/graphs.c); a graph that could not be read may
 * touch anything.
 */
#include "internal.h"

int32_t replay_graph_touches_evicted(const struct remat_op *op)
{
	const struct remat_graph_refs *g = op->graph;
	if (!g || g->opaque)
		return replay_engine.niv ? replay_engine.iv[0].buf : -1;
	for (size_t i = 0; i < g->n; i++) {
		int32_t b = replay_find_evicted(g->range[i][0], g->range[i][1]);
		if (b >= 0)
			return b;
	}
	return -1;
}
