/*
 * input_file.c — inputs as files for readers that take paths, in one
 * directory per process under $TMPDIR (make fuzz points it into the build
 * tree), rewritten for each input.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[4096];

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[8192];
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/remat-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror(dir);
			exit(2);
		}
		atexit(remove_dir);
	}
	return dir;
}

const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[8192];
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
		perror(path);
		exit(2);
	}
	return path;
}
