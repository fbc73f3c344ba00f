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

static uint64_t pair_key(const void *sorted, size_t i)
{
	return remat_key_signed(((const int64_t *)sorted)[2 * i]);
}

/* Index of key in the sorted table of (key, node) pairs, or -1. */
static int32_t sorted_index(const int64_t *sorted, int32_t n, int64_t key)
{
	size_t i = remat_search_key(sorted, (size_t)n, pair_key, remat_key_signed(key));
	return i < (size_t)n ? (int32_t)i : -1;
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

/* A node-link file being read: its n nodes, their keys sorted (pairs
 * key, node index), each one's position in the execution order and the
 * node at each position, the last position reading each, the edges
 * (source, target positions) and the reads of each position. */
struct nodelink {
	struct jctx *c;
	struct pl_graph *g;
	size_t n, nl;
	struct node *nd;
	int64_t *sorted;   /* pairs (key, index) */
	int32_t *pos_of;   /* sorted index -> position */
	int32_t *node_at;  /* position -> node index */
	int32_t *last_use; /* by position */
	int32_t *nin;
	int32_t (*edge)[2];
	int64_t params, bytes, dur;
};

/* Node k: its id, duration, bytes and parameter bytes, name. */
static int read_node(struct nodelink *L, size_t k, json_t *v)
{
	struct jctx *c = L->c;
	struct node *x = &L->nd[k];
	char where[96];
	int rc;
	snprintf(where, sizeof(where), "$.nodes[%zu]", k);
	json_t *id = json_object_get(v, "id");
	if (!id)
		id = json_object_get(v, "name");
	if (!id || node_key(id, &x->key))
		return pl_jfail(c, where, "needs an integer \"id\" (or integer \"name\")");
	int is_cm = json_object_get(v, "cost_cpu") != NULL;
	/* (-1: unknown duration, as in a graph file) */
	if ((rc = pl_jint_in(pl_jo(c, v, where), is_cm ? "cost_cpu" : "duration", &x->dur,
	                     (struct jint){1, 0, -1, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, v, where), is_cm ? "cost_ram" : "out_cost", &x->ram,
	                     (struct jint){1, 0, 0, PL_MAX_AMOUNT})) ||
	    (rc = pl_jint_in(pl_jo(c, v, where), "param_cost", &x->param,
	                     (struct jint){0, 0, 0, PL_MAX_AMOUNT})))
		return rc;
	/* Each term is at most 2^53, so these sums are checked as they grow
	 * (a graph's bytes and durations add up to 2^53 at most). */
	L->params += x->param;
	L->bytes += x->param + x->ram;
	L->dur += x->dur > 0 ? x->dur : 0;
	if (L->bytes > PL_MAX_AMOUNT || L->dur > PL_MAX_AMOUNT)
		return pl_jfail(c, where, "the nodes' %s add up to more than 2^53",
		                L->bytes > PL_MAX_AMOUNT
		                    ? (is_cm ? "\"cost_ram\" and \"param_cost\""
		                             : "\"out_cost\" and \"param_cost\"")
		                    : (is_cm ? "\"cost_cpu\"" : "\"duration\""));
	json_t *nm = json_object_get(v, "name");
	x->name = json_is_string(nm) ? json_string_value(nm) : NULL;
	L->sorted[2 * k] = x->key;
	L->sorted[2 * k + 1] = (int64_t)k;
	return 0;
}

/* The nodes, and their keys sorted: no key twice. */
static int read_nodes(struct nodelink *L, json_t *nodes)
{
	size_t k;
	json_t *v;
	int rc;
	json_array_foreach(nodes, k, v)
	{
		if ((rc = read_node(L, k, v)))
			return rc;
	}
	qsort(L->sorted, L->n, 2 * sizeof(int64_t), cmp_key);
	for (size_t i = 1; i < L->n; i++)
		if (L->sorted[2 * i] == L->sorted[2 * i - 2])
			return pl_jfail(L->c, "$.nodes", "node id %lld appears twice",
			                (long long)L->sorted[2 * i]);
	return 0;
}

/* Execution order: graph.order when given, else ascending ids. */
static int exec_order(struct nodelink *L, json_t *order)
{
	size_t n = L->n, k;
	json_t *v;
	if (!order) {
		for (size_t i = 0; i < n; i++)
			L->pos_of[i] = (int32_t)i;
		return 0;
	}
	if (!json_is_array(order) || json_array_size(order) != n)
		return pl_jfail(L->c, "$.graph.order", "must list every node once (%zu nodes)", n);
	for (size_t i = 0; i < n; i++)
		L->pos_of[i] = -1;
	json_array_foreach(order, k, v)
	{
		int64_t key;
		if (node_key(v, &key))
			return pl_jfail(L->c, "$.graph.order", "element %zu is not a node id", k);
		int32_t at = sorted_index(L->sorted, (int32_t)n, key);
		if (at < 0 || L->pos_of[at] >= 0)
			return pl_jfail(L->c, "$.graph.order",
			                "element %zu: node %lld unknown or repeated", k,
			                (long long)key);
		L->pos_of[at] = (int32_t)k;
	}
	return 0;
}

/* Position of the node with key, or -1. */
static int32_t find(const struct nodelink *L, int64_t key)
{
	int32_t i = sorted_index(L->sorted, (int32_t)L->n, key);
	return i < 0 ? -1 : L->pos_of[i];
}

/* Edges, by target position. */
static int read_links(struct nodelink *L, json_t *links)
{
	struct jctx *c = L->c;
	char where[96];
	size_t k;
	json_t *v;
	L->nl = json_array_size(links);
	if (L->nl > INT32_MAX / 4)
		return pl_jfail(c, "$.links", "too many links");
	L->edge = malloc(sizeof(*L->edge) * (L->nl ? L->nl : 1));
	if (!L->edge)
		return pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
	json_array_foreach(links, k, v)
	{
		snprintf(where, sizeof(where), "$.links[%zu]", k);
		json_t *s = json_object_get(v, "source"), *t = json_object_get(v, "target");
		if (!s || !t) {
			s = json_object_get(v, "0");
			t = json_object_get(v, "1");
		}
		int64_t sk, tk;
		if (!s || !t || node_key(s, &sk) || node_key(t, &tk))
			return pl_jfail(c, where, "needs \"source\" and \"target\" node ids");
		int32_t sp = find(L, sk), tp = find(L, tk);
		if (sp < 0 || tp < 0)
			return pl_jfail(c, where, "node %lld does not exist",
			                (long long)(sp < 0 ? sk : tk));
		if (sp >= tp)
			return pl_jfail(c, where,
			                "edge %lld -> %lld goes against the execution order",
			                (long long)sk, (long long)tk);
		L->edge[k][0] = sp;
		L->edge[k][1] = tp;
		L->nin[tp]++;
		if (tp > L->last_use[sp])
			L->last_use[sp] = tp;
	}
	return 0;
}

/* An op per node writing its buffer, which its successors read. */
static int build(struct nodelink *L)
{
	struct pl_graph *g = L->g;
	g->nops = g->nbufs = (int32_t)L->n;
	if (pl_graph_reserve(g, g->nops, g->nbufs, (uint32_t)(L->nl + L->n)))
		return pl_errf(L->c->err, L->c->errlen, PL_EINTERNAL, "out of memory");
	uint32_t off = 0;
	for (int32_t p = 0; p < g->nops; p++) {
		struct node *x = &L->nd[L->node_at[p]];
		struct pl_op *op = &g->ops[p];
		char nb[32];
		snprintf(nb, sizeof(nb), "%lld", (long long)x->key);
		op->name = pl_graph_strdup(g, x->name ? x->name : nb);
		op->duration_ns = x->dur;
		op->replayable = 1;
		op->kind = PL_KIND_KERNEL;
		op->ref_off = off;
		op->nrefs = 0;
		off += (uint32_t)L->nin[p] + 1;
		struct pl_buffer *b = &g->bufs[p];
		b->size = b->rounded = x->ram;
		b->alloc_at = p;
		b->free_at = (L->last_use[p] > p ? L->last_use[p] : p) + 1;
		b->name = op->name;
	}
	for (int32_t p = 0; p < g->nops; p++)
		g->refs[g->ops[p].ref_off + g->ops[p].nrefs++] =
		    (struct pl_ref){p, 0, PL_REF_WRITE};
	for (size_t e = 0; e < L->nl; e++) {
		struct pl_op *op = &g->ops[L->edge[e][1]];
		int dup = 0;
		for (uint32_t r = 0; r < op->nrefs; r++)
			dup |= g->refs[op->ref_off + r].buf == L->edge[e][0];
		if (!dup)
			g->refs[op->ref_off + op->nrefs++] =
			    (struct pl_ref){L->edge[e][0], 0, PL_REF_READ};
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
	g->const_bytes = L->params;
	return 0;
}

static int load(struct jctx *c, json_t *root, struct pl_graph *g)
{
	json_t *nodes, *links, *graph = json_object_get(root, "graph");
	int rc;
	if ((rc = pl_jarr(pl_jo(c, root, "$"), "nodes", &nodes, 1)) ||
	    (rc = pl_jarr(pl_jo(c, root, "$"), "links", &links, 1)))
		return rc;
	size_t n = json_array_size(nodes);
	if (n == 0)
		return pl_jfail(c, "$.nodes", "empty: the graph has no nodes");
	if (n > INT32_MAX / 4)
		return pl_jfail(c, "$.nodes", "too many nodes");
	json_t *order = graph ? json_object_get(graph, "order") : NULL;
	const char *gname = graph ? json_string_value(json_object_get(graph, "name")) : NULL;
	g->name = strdup(gname ? gname : c->file);
	struct nodelink L = {.c = c, .g = g, .n = n};
	L.nd = calloc(n, sizeof(*L.nd));
	L.sorted = malloc(sizeof(int64_t) * 2 * n);
	L.pos_of = malloc(sizeof(int32_t) * n);
	L.node_at = malloc(sizeof(int32_t) * n);
	L.last_use = malloc(sizeof(int32_t) * n);
	L.nin = calloc(n, sizeof(int32_t));
	if (!L.nd || !L.sorted || !L.pos_of || !L.node_at || !L.last_use || !L.nin)
		rc = pl_errf(c->err, c->errlen, PL_EINTERNAL, "out of memory");
	else if (!(rc = read_nodes(&L, nodes)) && !(rc = exec_order(&L, order))) {
		for (size_t i = 0; i < n; i++) {
			L.node_at[L.pos_of[i]] = (int32_t)L.sorted[2 * i + 1];
			L.last_use[i] = -1;
		}
		if (!(rc = read_links(&L, links)))
			rc = build(&L);
	}
	free(L.nd);
	free(L.sorted);
	free(L.pos_of);
	free(L.node_at);
	free(L.last_use);
	free(L.nin);
	free(L.edge);
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
