/*
 * file.c — a plan file read whole: its checksum covers its bytes, so
 * both readers (planner/formats/plan_json.c, acquire/plan_read.c) parse
 * from memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/grow.h"
#include "plan.h"

char *pl_file_read(const char *path, size_t *n, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	do {
		/* 64 KiB first: most plans are read in one go. */
		if (REMAT_RESERVE(buf, cap ? len + 2 : 65536, cap)) {
			free(buf);
			fclose(f);
			snprintf(err, errlen, "%s: out of memory", path);
			return NULL;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		snprintf(err, errlen, "%s: read error", path);
		return NULL;
	}
	buf[len] = '\0';
	*n = len;
	return buf;
}
