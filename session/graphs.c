/*
 * graphs.c — the session's part in graphs: the executable graphs whose
 * nodes the profiler reads, under the session's lock.
 */
#include "../profiler/profiler.h"
#include "internal.h"

void session_graph_instantiated(CUgraphExec exec, CUgraph g)
{
	if (session_ready())
		return;
	pthread_mutex_lock(&session.lock);
	prof_graph_read(exec, g);
	pthread_mutex_unlock(&session.lock);
}

void session_graph_destroyed(CUgraphExec exec)
{
	pthread_mutex_lock(&session.lock);
	prof_graph_forget(exec);
	pthread_mutex_unlock(&session.lock);
}

void session_graph_changed(CUgraphExec exec)
{
	pthread_mutex_lock(&session.lock);
	prof_graph_opaque(exec);
	pthread_mutex_unlock(&session.lock);
}
