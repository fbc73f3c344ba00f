/*
 * replay_main.c — runs saved inputs (files, or every file of a directory)
 * through a harness once each, without libFuzzer: how make test keeps every
 * corpus entry and every input that ever crashed a reader as a regression
 * test, under gcc's ASan and UBSan.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#define FUZZ_NAME "none"
#endif

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
		if ((n += got) == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", path);
		return -1;
	}
	/* an exact-size copy, so ASan sees a read past the input's end */
	uint8_t *exact = malloc(n ? n : 1);
	if (exact) {
		memcpy(exact, buf, n);
		LLVMFuzzerTestOneInput(exact, n);
	}
	free(exact);
	free(buf);
	return exact ? 0 : -1;
}

int main(int argc, char **argv)
{
	/* Without arguments: this harness's seeds and past findings. */
	char *dirs[] = {argv[0], "fuzz/corpus/" FUZZ_NAME, "fuzz/regress/" FUZZ_NAME};
	if (argc == 1) {
		argc = 3;
		argv = dirs;
	}
	int ran = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st)) {
			if (argv == dirs) /* git keeps no empty directory */
				continue;
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			ran++;
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, alphasort);
		if (n < 0) {
			perror(argv[i]);
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char p[8192];
			snprintf(p, sizeof(p), "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && !stat(p, &st) && S_ISREG(st.st_mode)) {
				if (run_file(p))
					return 1;
				ran++;
			}
			free(names[k]);
		}
		free(names);
	}
	printf("%d inputs ran\n", ran);
	/* an empty corpus would make this test pass vacuously */
	return ran > 0 ? 0 : 1;
}
