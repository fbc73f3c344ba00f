/*
 * atomic_file.c — graph and plan files are written to PATH.tmp and
 * renamed over PATH, so a reader (libremat loading a cached plan) never
 * sees half a file and a failed write leaves the old one in place.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

FILE *pl_atomic_open(const char *path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
	snprintf(tmp, tmplen, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		pl_errf(err, errlen, PL_EINPUT, "%s: %s", tmp, strerror(errno));
	return f;
}

int pl_atomic_commit(FILE *f, const char *tmp, const char *path, char *err, size_t errlen)
{
	int ioerr = ferror(f);
	if (fclose(f) != 0 || ioerr) {
		remove(tmp);
		return pl_errf(err, errlen, PL_EINPUT, "%s: write failed", tmp);
	}
	if (rename(tmp, path) != 0) {
		int e = errno;
		remove(tmp);
		return pl_errf(err, errlen, PL_EINPUT, "%s: %s", path, strerror(e));
	}
	return PL_OK;
}
