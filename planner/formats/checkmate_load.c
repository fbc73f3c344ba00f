/*
 * checkmate_load.c — networkx node-link graphs as used by the Checkmate
 * paper (nodes with cost_cpu/cost_ram, links source → target, node ids an
 * execution order) and by the random layered DAG generator (duration,
 * out_cost, param_cost, links "0" → "1", graph.order).  Each node is an
 * op writing one fresh buffer, read by its successors and freed after the
 * last of them.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct node {
	int64_t key; /* the node's id as written in the file */
	int64_t dur, ram, param;
	const char *name;
};

static int cmp_key(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Position of key in the sorted key table, or -1. */
static int32_t find(const int64_t *sorted, const int32_t *pos_of, int32_t n, int64_t key)
{
	int32_t lo = 0, hi = n - 1;
	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;
		if (sorted[2 * mid] == key)
			return pos_of[mid];
		if (sorted[2 * mid] < key)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static int node_key(json_t *v, int64_t *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		char *end;
		const char *s = json_string_value(v);
		*out = strtoll(s, &end, 10);
		return *s && !*end ? 0 : -1;
	}
	return -1;
}

static int load(struct jctx *c, json_t *root, struct pl_graph *g)
{
	json_t *nodes, *links, *graph = json_object_get(root, "graph");
	int rc;
	if ((rc = pl_jarr(c, root, "$", "nodes", &nodes, 1)) ||
	    (rc = pl_jarr(c, root, "$", "links", &links, 1)))
		return rc;
	size_t n = json_array_size(nodes);
	if (n == 0)
		return pl_jfail(c, "$.nodes", "empty: the graph has no nodes");
	if (n > INT32_MAX / 4)
		return pl_jfail(c, "$.nodes", "too many nodes");
	json_t *order = graph ? json_object_get(graph, "order") : NULL;
	const char *gname = graph ? json_string_value(json_object_get(graph, "name")) : NULL;
	g->name = strdup(gname ? gname : c->file);
	struct node *nd = calloc(n, sizeof(*nd));
	int64_t *sorted = malloc(sizeof(int64_t) * 2 * n); /* pairs (key, index) */
	int32_t *pos_of = malloc(sizeof(int32_t) * n);     /* sorted index -> position */
	int32_t *node_at = malloc(sizeof(int32_t) * n);    /* position -> node index */
	int32_t *last_use = malloc(sizeof(int32_t) * n);   /* by position */
	int32_t *nin = calloc(n, sizeof(int32_t));
	char where[96];
	size_t k;
	json_t *v;
	int64_t params = 0, bytes = 0, dur = 0;
	if (!nd || !sorted || !pos_of || !node_at || !last_use || !nin) {
		rc = pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
		goto out;
	}
	json_array_foreach(nodes, k, v)
	{
		snprintf(where, sizeof(where), "$.nodes[%zu]", k);
		json_t *id = json_object_get(v, "id");
		if (!id)
			id = json_object_get(v, "name");
		if (!id || node_key(id, &nd[k].key)) {
			rc = pl_jfail(c, where, "needs an integer \"id\" (or integer \"name\")");
			goto out;
		}
		int is_cm = json_object_get(v, "cost_cpu") != NULL;
		/* (-1: unknown duration, as in a graph file) */
		if ((rc = pl_jint_in(c, v, where, is_cm ? "cost_cpu" : "duration", &nd[k].dur, 1, 0,
		                     -1, PL_MAX_AMOUNT)) ||
		    (rc = pl_jint_in(c, v, where, is_cm ? "cost_ram" : "out_cost", &nd[k].ram, 1, 0,
		                     0, PL_MAX_AMOUNT)) ||
		    (rc = pl_jint_in(c, v, where, "param_cost", &nd[k].param, 0, 0, 0,
		                     PL_MAX_AMOUNT)))
			goto out;
		/* Each term is at most 2^53, so these sums are checked as they grow
		 * (a graph's bytes and durations add up to 2^53 at most). */
		params += nd[k].param;
		bytes += nd[k].param + nd[k].ram;
		dur += nd[k].dur > 0 ? nd[k].dur : 0;
		if (bytes > PL_MAX_AMOUNT || dur > PL_MAX_AMOUNT) {
			rc = pl_jfail(c, where, "the nodes' %s add up to more than 2^53",
			              bytes > PL_MAX_AMOUNT
			                  ? (is_cm ? "\"cost_ram\" and \"param_cost\""
			                           : "\"out_cost\" and \"param_cost\"")
			                  : (is_cm ? "\"cost_cpu\"" : "\"duration\""));
			goto out;
		}
		json_t *nm = json_object_get(v, "name");
		nd[k].name = json_is_string(nm) ? json_string_value(nm) : NULL;
		sorted[2 * k] = nd[k].key;
		sorted[2 * k + 1] = (int64_t)k;
	}
	qsort(sorted, n, 2 * sizeof(int64_t), cmp_key);
	for (size_t i = 1; i < n; i++)
		if (sorted[2 * i] == sorted[2 * i - 2]) {
			rc = pl_jfail(c, "$.nodes", "node id %lld appears twice",
			              (long long)sorted[2 * i]);
			goto out;
		}
	/* Execution order: graph.order when given, else ascending ids. */
	if (order) {
		if (!json_is_array(order) || json_array_size(order) != n) {
			rc = pl_jfail(c, "$.graph.order", "must list every node once (%zu nodes)",
			              n);
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			pos_of[i] = -1;
		json_array_foreach(order, k, v)
		{
			int64_t key;
			int32_t lo = 0, hi = (int32_t)n - 1, at = -1;
			if (node_key(v, &key)) {
				rc =
				    pl_jfail(c, "$.graph.order", "element %zu is not a node id", k);
				goto out;
			}
			while (lo <= hi) {
				int32_t mid = lo + (hi - lo) / 2;
				if (sorted[2 * mid] == key) {
					at = mid;
					break;
				}
				if (sorted[2 * mid] < key)
					lo = mid + 1;
				else
					hi = mid - 1;
			}
			if (at < 0 || pos_of[at] >= 0) {
				rc = pl_jfail(c, "$.graph.order",
				              "element %zu: node %lld unknown or repeated", k,
				              (long long)key);
				goto out;
			}
			pos_of[at] = (int32_t)k;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			pos_of[i] = (int32_t)i;
	}
	for (size_t i = 0; i < n; i++) {
		node_at[pos_of[i]] = (int32_t)sorted[2 * i + 1];
		last_use[i] = -1;
	}
	/* Edges, by target position. */
	size_t nl = json_array_size(links);
	if (nl > INT32_MAX / 4) {
		rc = pl_jfail(c, "$.links", "too many links");
		goto out;
	}
	int32_t(*edge)[2] = malloc(sizeof(*edge) * (nl ? nl : 1));
	if (!edge) {
		rc = pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
		goto out;
	}
	json_array_foreach(links, k, v)
	{
		snprintf(where, sizeof(where), "$.links[%zu]", k);
		json_t *s = json_object_get(v, "source"), *t = json_object_get(v, "target");
		if (!s || !t) {
			s = json_object_get(v, "0");
			t = json_object_get(v, "1");
		}
		int64_t sk, tk;
		if (!s || !t || node_key(s, &sk) || node_key(t, &tk)) {
			rc = pl_jfail(c, where, "needs \"source\" and \"target\" node ids");
			free(edge);
			goto out;
		}
		int32_t sp = find(sorted, pos_of, (int32_t)n, sk);
		int32_t tp = find(sorted, pos_of, (int32_t)n, tk);
		if (sp < 0 || tp < 0) {
			rc = pl_jfail(c, where, "node %lld does not exist",
			              (long long)(sp < 0 ? sk : tk));
			free(edge);
			goto out;
		}
		if (sp >= tp) {
			rc =
			    pl_jfail(c, where, "edge %lld -> %lld goes against the execution order",
			             (long long)sk, (long long)tk);
			free(edge);
			goto out;
		}
		edge[k][0] = sp;
		edge[k][1] = tp;
		nin[tp]++;
		if (tp > last_use[sp])
			last_use[sp] = tp;
	}
	g->nops = g->nbufs = (int32_t)n;
	if (pl_graph_reserve(g, g->nops, g->nbufs, (uint32_t)(nl + n))) {
		free(edge);
		rc = pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
		goto out;
	}
	uint32_t off = 0;
	for (int32_t p = 0; p < g->nops; p++) {
		struct node *x = &nd[node_at[p]];
		struct pl_op *op = &g->ops[p];
		char nb[32];
		snprintf(nb, sizeof(nb), "%lld", (long long)x->key);
		op->name = pl_graph_strdup(g, x->name ? x->name : nb);
		op->duration_ns = x->dur;
		op->replayable = 1;
		op->kind = PL_KIND_KERNEL;
		op->ref_off = off;
		op->nrefs = 0;
		off += (uint32_t)nin[p] + 1;
		struct pl_buffer *b = &g->bufs[p];
		b->size = b->rounded = x->ram;
		b->alloc_at = p;
		b->free_at = (last_use[p] > p ? last_use[p] : p) + 1;
		b->name = op->name;
	}
	for (int32_t p = 0; p < g->nops; p++)
		g->refs[g->ops[p].ref_off + g->ops[p].nrefs++] =
		    (struct pl_ref){p, 0, PL_REF_WRITE};
	for (size_t e = 0; e < nl; e++) {
		struct pl_op *op = &g->ops[edge[e][1]];
		int dup = 0;
		for (uint32_t r = 0; r < op->nrefs; r++)
			dup |= g->refs[op->ref_off + r].buf == edge[e][0];
		if (!dup)
			g->refs[op->ref_off + op->nrefs++] =
			    (struct pl_ref){edge[e][0], 0, PL_REF_READ};
	}
	/* Compact: duplicate edges left holes at the end of some ref lists. */
	off = 0;
	for (int32_t p = 0; p < g->nops; p++) {
		struct pl_op *op = &g->ops[p];
		memmove(&g->refs[off], &g->refs[op->ref_off], op->nrefs * sizeof(struct pl_ref));
		op->ref_off = off;
		off += op->nrefs;
	}
	g->nrefs = off;
	g->const_bytes = params;
	free(edge);
	rc = 0;
out:
	free(nd);
	free(sorted);
	free(pos_of);
	free(node_at);
	free(last_use);
	free(nin);
	return rc;
}

int pl_graph_load_nodelink(const char *path, void *root, struct pl_graph **out, char *err,
                           size_t errlen)
{
	struct jctx c = {path, err, errlen};
	struct pl_graph *g = pl_graph_new();
	if (!g)
		return pl_errf(err, errlen, PL_EINTERNAL, "out of memory");
	int rc = load(&c, root, g);
	if (!rc)
		rc = pl_graph_finish(g, 0, path, err, errlen);
	if (rc) {
		pl_graph_free(g);
		return rc;
	}
	*out = g;
	return PL_OK;
}
