/* trainer_cli.c — command-line flags shared by the trainers. */
#include "trainer.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { INT, FLOAT, U64, STR, BOOL, FORMAT, ALLOC };

struct flag {
	const char *name;
	enum kind kind;
	size_t offset;
	const char *help;
};

#define F(name, kind, field, help)                                                                 \
	{                                                                                          \
		name, kind, offsetof(struct trainer_opts, field), help                             \
	}
static const struct flag flags[] = {
    F("--batch", INT, batch, "rows per micro-batch (gpt: sequences)"),
    F("--hidden", INT, hidden, "hidden width (gpt: model width)"),
    F("--layers", INT, layers, "hidden layers / transformer blocks"),
    F("--iters", INT, iters, "optimizer steps"),
    F("--in", INT, in_dim, "input features (mlp)"),
    F("--classes", INT, classes, "output classes (mlp)"),
    F("--seq", INT, seq, "sequence length (gpt)"),
    F("--heads", INT, heads, "attention heads (gpt)"),
    F("--vocab", INT, vocab, "vocabulary size (gpt)"),
    F("--accum", INT, accum, "micro-batches accumulated per step"),
    F("--short-last", INT, short_last, "batch of the last iteration (0: same as others)"),
    F("--lr", FLOAT, lr, "learning rate"),
    F("--dropout", FLOAT, dropout, "dropout probability (mlp)"),
    F("--seed", U64, seed, "seed of data, initial weights and dropout"),
    F("--blas-workspace", U64, blas_workspace,
      "bytes of cuBLAS workspace, from --alloc's allocator (0: none; tall-k gemms go split-K)"),
    F("--kernels", STR, kernels_dir, "kernel module directory"),
    F("--ranks", INT, ranks, "data-parallel ranks, one process each (RANK/LOCAL_RANK: this one's)"),
    F("--rendezvous", STR, rendezvous, "--ranks: a directory the ranks share, empty at start"),
    F("--kernel-format", FORMAT, format, "auto | so | cubin"),
    F("--bwd-thread", BOOL, bwd_thread, "run each backward pass on a second host thread"),
    F("--pinned", BOOL, pinned, "stage inputs in pinned (cudaMallocHost) host memory"),
    F("--alloc", ALLOC, alloc, "async | caching | vmm: where tensors live"),
    F("--alloc-stats", BOOL, alloc_stats, "print the allocator's counters on stderr"),
    F("--pool-tail", INT, pool_tail,
      "caching: print a digest of the never-used segment tails after iteration N"),
    F("--graphs", BOOL, graphs, "capture the transformer blocks as CUDA graphs (gpt)"),
    F("--launch-attrs", BOOL, launch_attrs,
      "GELU launched with a cluster, layer norm cooperatively (gpt)"),
};
#undef F

static void usage(FILE *f, const struct trainer_opts *o, const char *unused)
{
	fprintf(f, "usage: %s [flags]   (output: 'iter N loss HEX' lines, then 'checksum HEX')\n",
	        trainer_prog);
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		if (strstr(unused, flags[i].name))
			continue;
		const char *p = (const char *)o + flags[i].offset;
		char def[64] = "";
		switch (flags[i].kind) {
		case INT:
			snprintf(def, sizeof def, "%d", *(const int *)p);
			break;
		case FLOAT:
			snprintf(def, sizeof def, "%g", *(const float *)p);
			break;
		case U64:
			snprintf(def, sizeof def, "%llu", *(const unsigned long long *)p);
			break;
		case STR:
			snprintf(def, sizeof def, "%s", *(const char *const *)p);
			break;
		case FORMAT:
			snprintf(def, sizeof def, "auto");
			break;
		case ALLOC:
			snprintf(def, sizeof def, "async");
			break;
		case BOOL:
			break;
		}
		fprintf(f, "  %-16s %s%s%s%s\n", flags[i].name, flags[i].help, def[0] ? " [" : "",
		        def, def[0] ? "]" : "");
	}
}

static _Noreturn void bad(const char *flag, const char *val, const char *want)
{
	fprintf(stderr, "%s: invalid value '%s' for %s (expected %s)\n", trainer_prog, val, flag,
	        want);
	exit(1);
}

static void set(const struct flag *f, const char *val, struct trainer_opts *o)
{
	char *p = (char *)o + f->offset, *end;
	errno = 0;
	switch (f->kind) {
	case INT: {
		long v = strtol(val, &end, 10);
		if (errno || *end || end == val || v < 0 || v > INT_MAX / 64)
			bad(f->name, val, "a non-negative integer");
		*(int *)p = (int)v;
		break;
	}
	case FLOAT: {
		float v = strtof(val, &end);
		if (errno || *end || end == val || !(v >= 0.0f) || v > 1e6f)
			bad(f->name, val, "a non-negative number");
		*(float *)p = v;
		break;
	}
	case U64: {
		unsigned long long v = strtoull(val, &end, 10);
		if (errno || *end || end == val || val[0] == '-')
			bad(f->name, val, "an unsigned integer");
		*(unsigned long long *)p = v;
		break;
	}
	case STR:
		*(const char **)p = val;
		break;
	case FORMAT:
		if (strcmp(val, "auto") == 0)
			o->format = KF_AUTO;
		else if (strcmp(val, "so") == 0)
			o->format = KF_SO;
		else if (strcmp(val, "cubin") == 0)
			o->format = KF_CUBIN;
		else
			bad(f->name, val, "auto, so or cubin");
		break;
	case ALLOC:
		if (strcmp(val, "async") == 0)
			o->alloc = ALLOC_ASYNC;
		else if (strcmp(val, "caching") == 0)
			o->alloc = ALLOC_CACHING;
		else if (strcmp(val, "vmm") == 0)
			o->alloc = ALLOC_VMM;
		else
			bad(f->name, val, "async, caching or vmm");
		break;
	case BOOL:
		*(int *)p = 1;
		break;
	}
}

static void need_positive(int v, const char *name)
{
	if (v <= 0) {
		fprintf(stderr, "%s: %s must be at least 1\n", trainer_prog, name);
		exit(1);
	}
}

void trainer_parse(int argc, char **argv, struct trainer_opts *o, const char *unused)
{
	struct trainer_opts defaults = *o;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL;
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			usage(stdout, &defaults, unused);
			exit(0);
		}
		size_t len = strcspn(arg, "=");
		const struct flag *f = NULL;
		for (size_t j = 0; j < sizeof flags / sizeof flags[0]; j++)
			if (strlen(flags[j].name) == len && strncmp(arg, flags[j].name, len) == 0 &&
			    !strstr(unused, flags[j].name))
				f = &flags[j];
		if (f == NULL) {
			fprintf(stderr, "%s: unknown option '%s' (try --help)\n", trainer_prog,
			        arg);
			exit(1);
		}
		if (arg[len] == '=')
			val = arg + len + 1;
		else if (f->kind != BOOL) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: %s needs a value\n", trainer_prog, f->name);
				exit(1);
			}
			val = argv[++i];
		}
		if (f->kind == BOOL && val) {
			fprintf(stderr, "%s: %s takes no value\n", trainer_prog, f->name);
			exit(1);
		}
		set(f, val ? val : "", o);
	}
	need_positive(o->batch, "--batch");
	need_positive(o->hidden, "--hidden");
	need_positive(o->layers, "--layers");
	need_positive(o->iters, "--iters");
	need_positive(o->accum, "--accum");
	need_positive(o->ranks, "--ranks");
	if (o->ranks > 1 && !o->rendezvous) {
		fprintf(stderr, "%s: --ranks %d needs --rendezvous DIR\n", trainer_prog, o->ranks);
		exit(1);
	}
	if (!strstr(unused, "--seq"))
		need_positive(o->seq, "--seq");
	if (!strstr(unused, "--heads")) {
		need_positive(o->heads, "--heads");
		need_positive(o->vocab, "--vocab");
		if (o->hidden % o->heads) {
			fprintf(stderr, "%s: --hidden (%d) must be a multiple of --heads (%d)\n",
			        trainer_prog, o->hidden, o->heads);
			exit(1);
		}
	}
	if (!strstr(unused, "--classes")) {
		need_positive(o->in_dim, "--in");
		need_positive(o->classes, "--classes");
	}
	if (o->short_last > o->batch) {
		fprintf(stderr, "%s: --short-last (%d) must not exceed --batch (%d)\n",
		        trainer_prog, o->short_last, o->batch);
		exit(1);
	}
	if (o->dropout >= 1.0f) {
		fprintf(stderr, "%s: --dropout must be below 1\n", trainer_prog);
		exit(1);
	}
}

int trainer_batch(const struct trainer_opts *o, int iter)
{
	return o->short_last && iter == o->iters - 1 ? o->short_last : o->batch;
}
