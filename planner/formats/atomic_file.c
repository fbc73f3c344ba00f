/*
 * atomic_file.c — graph and plan files are written to PATH.<pid>.tmp and
 * renamed over PATH, so a reader (libremat loading a cached plan) never
 * sees half a file, a failed write leaves the old one in place, and two
 * planners writing one cache entry (two ranks of a job) never share a
 * temporary file.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

FILE *pl_atomic_open(const char *path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
	snprintf(tmp, tmplen, "%s.%d.tmp", path, (int)getpid());
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
