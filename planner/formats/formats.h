/*
 * formats.h — planner/formats/: the files the planner reads and writes
 * (docs/trace-format.md, graph-format.md, plan-format.md, and the sweep
 * file of remat-plan --sweep).  planner.h declares the loaders and
 * writers; here is the rest a caller outside the folder may use: the
 * node-link reader on its own, as pl_graph_load_json enters it (the
 * fuzz harness does).
 */
#ifndef LIBREMAT_PLANNER_FORMATS_H
#define LIBREMAT_PLANNER_FORMATS_H

#include "../model/model.h"

#include <jansson.h>

/* The JSON of path, duplicate members refused; NULL with the message. */
json_t *pl_json_load_file(const char *path, char *err, size_t errlen);
/* A networkx node-link graph (Checkmate training graphs, random layered
 * DAGs) already parsed from path into root (a json_t *). */
int pl_graph_load_nodelink(const char *path, void *root, struct pl_graph **out, char *err,
                           size_t errlen);

#endif
