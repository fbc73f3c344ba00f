/*
 * internal.h — between the files of planner/formats/: reading JSON with
 * jansson and naming the exact place of a problem ("file: $.ops[3].
 * writes[1]: ..."), what graph files and traces lay out alike, and
 * writing a file whole or not at all.
 */
#ifndef LIBREMAT_PLANNER_FORMATS_INTERNAL_H
#define LIBREMAT_PLANNER_FORMATS_INTERNAL_H

#include "formats.h"

struct jctx {
	const char *file;
	char *err;
	size_t errlen;
};

/* Parses n bytes read from the file `name`; NULL with its message. */
json_t *pl_json_load_bytes(const char *name, const char *bytes, size_t n, char *err, size_t errlen);
/* An object being read: the file's context, the object, and its JSON
 * path (`where`, "$.ops[3]"). */
struct jobj {
	struct jctx *c;
	json_t *obj;
	const char *where;
};

static inline struct jobj pl_jo(struct jctx *c, json_t *obj, const char *where)
{
	return (struct jobj){c, obj, where};
}

/* Each returns 0, or PL_EINPUT with a message naming file and path; key
 * is the member of o.obj. */
int pl_jint(struct jobj o, const char *key, int64_t *out, int required, int64_t dflt);
/* pl_jint, and the value must lie in lo..hi: the message names the member
 * and the range.  Sizes, durations and counts from files are read with it
 * (PL_MAX_AMOUNT bounds them), so later sums cannot overflow. */
struct jint {
	int required;
	int64_t dflt, lo, hi;
};
int pl_jint_in(struct jobj o, const char *key, int64_t *out, struct jint rule);
int pl_jbool(struct jobj o, const char *key, int *out, int required, int dflt);
int pl_jstr(struct jobj o, const char *key, const char **out, int required, const char *dflt);
int pl_jarr(struct jobj o, const char *key, json_t **out, int required);
int pl_jhash(struct jobj o, const char *key, uint64_t *out, int *present);
int pl_jfail(struct jctx *c, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- graph_read.c: what graph files and traces lay out alike ---- */
/* Sizes g for the arrays bufs and ops; `what` ("graph", "trace") names
 * the file in the message for an empty op list. */
int pl_jreserve(struct jctx *c, struct pl_graph *g, json_t *bufs, json_t *ops, const char *what);
/* The optional "device_copy" member (a copy inside device memory: fixed_ns
 * + bytes / bytes_per_us µs) into g->copy_fixed_ns, g->copy_bytes_per_us. */
int pl_jdevice_copy(struct jctx *c, struct pl_graph *g, json_t *root);
/* Checks buffer k's id and lifetime as read from its entry o (jb; its
 * size and rounded are read into g already), reads the optional
 * dead_across_boundary member of o and stores lifetime and flags. */
struct jbuf {
	int64_t id, alloc_at, free_at;
	int small, persistent;
};
int pl_jbuffer_set(struct jobj o, struct pl_graph *g, size_t k, const struct jbuf *jb);
/* Reads $.ops into g.  trace: "kind" and "replayable" are required and a
 * list element may be an [id, ...] ref; a graph file defaults them. */
int pl_jops(struct jctx *c, struct pl_graph *g, json_t *ops, int trace);
/* $.shared_chunks of a graph file or trace, into g (its buffers are read);
 * their bytes are taken out of g->const_bytes, which must hold them. */
int pl_jshared(struct jctx *c, struct pl_graph *g, void *root);

/* atomic_file.c: writes go to tmp (PATH.tmp) and replace path on commit.
 * open returns NULL with a message in err; commit closes f either way. */
FILE *pl_atomic_open(const char *path, char *tmp, size_t tmplen, char *err, size_t errlen);
int pl_atomic_commit(FILE *f, const char *tmp, const char *path, char *err, size_t errlen);

#endif
