/*
 * fuzz.h — what the libFuzzer harnesses share (fuzz/README.md).  Each
 * harness defines LLVMFuzzerTestOneInput for one reader: trace.c, graph.c,
 * nodelink.c, plan.c.  The readers take paths, so an input is written to
 * a file first; replay_main.c runs saved inputs through a harness without
 * libFuzzer (the regression test of make test).
 */
#ifndef REMAT_FUZZ_H
#define REMAT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A directory of this process's own (made on first use, removed at exit). */
const char *fuzz_dir(void);
/* data written to fuzz_dir()/name; its path (static, until the next call). */
const char *fuzz_file(const char *name, const uint8_t *data, size_t size);

struct pl_graph;
/* check_graph.c: what every graph that loaded must survive (aborts). */
void fuzz_check_graph(const struct pl_graph *g);

/* A property every input must keep: a violation is a finding, reported
 * like a crash. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz: %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
