/*
 * gen.c — synthetic training graphs for the planner benchmark: a forward
 * pass described op by op (inputs, output size, duration), and a backward
 * pass derived from it the way autodiff does (each backward op reads the
 * gradient of its forward op's output and that op's inputs, and writes or
 * accumulates the gradients of those inputs).
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB 1048576LL

struct fwd {
	int32_t in[3];
	int nin;
	int64_t size, dur;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double unif(uint64_t *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/* Forward ops of each family; -1 in `in` is the network input. */
static int32_t forward(enum gen_family fam, int32_t nf, struct fwd *f, uint64_t *s)
{
	int32_t n = 0;
	switch (fam) {
	case GEN_UNIFORM_CHAIN:
		for (; n < nf; n++)
			f[n] = (struct fwd){{n - 1}, 1, 8 * MiB, 100000};
		break;
	case GEN_HETERO_CHAIN:
		for (; n < nf; n++) {
			double u = unif(s);
			f[n] = (struct fwd){{n - 1},
			                    1,
			                    (int64_t)(1 + 63 * u * u) * MiB / 2,
			                    (int64_t)(10000 + 990000 * unif(s) * unif(s))};
		}
		break;
	case GEN_RESNET:
		/* block: c1 -> c2 -> c3, add(c3, block input) */
		while (n + 4 <= nf) {
			int32_t x = n - 1;
			int64_t sz = (int64_t)(4 + 12 * unif(s)) * MiB;
			f[n] = (struct fwd){{x}, 1, sz / 2, 150000};
			f[n + 1] = (struct fwd){{n}, 1, sz / 2, 300000};
			f[n + 2] = (struct fwd){{n + 1}, 1, sz, 150000};
			f[n + 3] = (struct fwd){{n + 2, x}, 2, sz, 20000};
			n += 4;
		}
		break;
	case GEN_TRANSFORMER:
		/* layer: ln, qkv, scores (big), softmax, ctx, proj, add, ln,
		 * up (4x), gelu, down, add */
		while (n + 12 <= nf) {
			int32_t x = n - 1;
			int64_t h = 4 * MiB;
			f[n] = (struct fwd){{x}, 1, h, 20000};
			f[n + 1] = (struct fwd){{n}, 1, 3 * h, 200000};
			f[n + 2] = (struct fwd){{n + 1}, 1, 8 * h, 150000};
			f[n + 3] = (struct fwd){{n + 2}, 1, 8 * h, 60000};
			f[n + 4] = (struct fwd){{n + 3, n + 1}, 2, h, 150000};
			f[n + 5] = (struct fwd){{n + 4}, 1, h, 70000};
			f[n + 6] = (struct fwd){{n + 5, x}, 2, h, 10000};
			f[n + 7] = (struct fwd){{n + 6}, 1, h, 20000};
			f[n + 8] = (struct fwd){{n + 7}, 1, 4 * h, 280000};
			f[n + 9] = (struct fwd){{n + 8}, 1, 4 * h, 40000};
			f[n + 10] = (struct fwd){{n + 9}, 1, h, 280000};
			f[n + 11] = (struct fwd){{n + 10, n + 6}, 2, h, 10000};
			n += 12;
		}
		break;
	}
	return n;
}

const char *gen_family_name(enum gen_family f)
{
	static const char *names[] = {"uniform-chain", "hetero-chain", "resnet", "transformer"};
	return names[f];
}

struct pl_graph *gen_graph(enum gen_family fam, int32_t nops, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	int32_t nf = (nops - 2) / 2;
	struct fwd *f = calloc(nf, sizeof(*f));
	nf = forward(fam, nf, f, &s);
	/* ops: input copy, nf forward, loss, nf backward; buffers: input,
	 * activations, weights, their gradients, activation gradients */
	int32_t n = 2 * nf + 2;
	int32_t nb = 1 + nf + 2 + nf + 1;
	struct pl_graph *g = pl_graph_new();
	if (!f || !g || pl_graph_reserve(g, n, nb, (uint32_t)(16 * (size_t)nf + 16))) {
		free(f);
		pl_graph_free(g);
		return NULL;
	}
	char name[64];
	snprintf(name, sizeof(name), "%s-%d", gen_family_name(fam), n);
	g->name = strdup(name);
	g->granularity = 2 * MiB;
	g->const_bytes = 2 * MiB;
	g->small_pool_bytes = 2 * MiB;
	int32_t in = 0, act0 = 1, wts = 1 + nf, wgrad = wts + 1, grad0 = wgrad + 1;
	g->nbufs = nb;
	for (int32_t b = 0; b < nb; b++)
		g->bufs[b] = (struct pl_buffer){.alloc_at = 0, .free_at = -1, .name = ""};
	g->bufs[in].size = 8 * MiB;
	g->bufs[wts] = (struct pl_buffer){
	    .size = 64 * MiB, .alloc_at = -1, .free_at = -1, .persistent = 1, .name = "weights"};
	g->bufs[wgrad] = g->bufs[wts];
	g->bufs[wgrad].name = "weight grads";
	int32_t *last = calloc(nb, sizeof(int32_t));
	int32_t *gradbuf = malloc(sizeof(int32_t) * (nf + 1)); /* grad of act i (i = -1 input) */
	for (int32_t i = 0; i <= nf; i++)
		gradbuf[i] = -1;
	int32_t op = 0;
#define OP(d, r)                                                                                   \
	do {                                                                                       \
		g->ops[op] = (struct pl_op){.name = "",                                            \
		                            .duration_ns = (d),                                    \
		                            .ref_off = g->nrefs,                                   \
		                            .replayable = (uint8_t)(r),                            \
		                            .why_not = ""};                                        \
		g->nops = ++op;                                                                    \
	} while (0)
#define REF(b, fl)                                                                                 \
	do {                                                                                       \
		g->refs[g->nrefs++] = (struct pl_ref){(b), 0, (fl)};                               \
		g->ops[op - 1].nrefs++;                                                            \
		last[(b)] = op - 1;                                                                \
	} while (0)
	OP(50000, 0); /* input from the host */
	g->ops[0].why_not = "copy from host";
	REF(in, PL_REF_WRITE);
	for (int32_t k = 0; k < nf; k++) {
		OP(f[k].dur, 1);
		for (int i = 0; i < f[k].nin; i++)
			REF(f[k].in[i] < 0 ? in : act0 + f[k].in[i], PL_REF_READ);
		REF(wts, PL_REF_READ);
		g->bufs[act0 + k].size = f[k].size;
		g->bufs[act0 + k].alloc_at = op - 1;
		REF(act0 + k, PL_REF_WRITE);
	}
	OP(20000, 1); /* loss and its gradient */
	REF(act0 + nf - 1, PL_REF_READ);
	int32_t gb = grad0;
	g->bufs[gb].size = f[nf - 1].size;
	g->bufs[gb].alloc_at = op - 1;
	REF(gb, PL_REF_WRITE);
	gradbuf[nf] = gb;
	int32_t next_grad = grad0 + 1;
	for (int32_t k = nf - 1; k >= 0; k--) {
		OP(2 * f[k].dur, 1);
		REF(gradbuf[k + 1], PL_REF_READ);
		REF(act0 + k, PL_REF_READ);
		REF(wts, PL_REF_READ);
		REF(wgrad, PL_REF_READ | PL_REF_WRITE);
		for (int i = 0; i < f[k].nin; i++) {
			int32_t src = f[k].in[i]; /* -1: the input needs no gradient */
			if (src < 0)
				continue;
			REF(src < 0 ? in : act0 + src, PL_REF_READ);
			if (gradbuf[src + 1] < 0) {
				int32_t ng = next_grad < nb ? next_grad++ : -1;
				if (ng < 0)
					continue;
				g->bufs[ng].size = f[src].size;
				g->bufs[ng].alloc_at = op - 1;
				gradbuf[src + 1] = ng;
				REF(ng, PL_REF_WRITE);
			} else {
				REF(gradbuf[src + 1], PL_REF_READ | PL_REF_WRITE);
			}
		}
	}
	for (int32_t b = 0; b < nb; b++) {
		struct pl_buffer *bf = &g->bufs[b];
		if (!bf->persistent) {
			bf->rounded = pl_round_up(bf->size, g->granularity);
			bf->free_at = last[b] + 1 < n ? last[b] + 1 : -1;
			if (bf->size == 0) { /* unused gradient slot */
				bf->alloc_at = 0;
				bf->free_at = 1;
			}
		} else {
			bf->rounded = bf->size;
		}
	}
	free(f);
	free(last);
	free(gradbuf);
	char err[256];
	if (pl_graph_finish(g, 0, name, err, sizeof(err))) {
		fprintf(stderr, "gen: %s\n", err);
		pl_graph_free(g);
		return NULL;
	}
	return g;
}
