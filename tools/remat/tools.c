/* Where remat's companions are: next to the remat executable (the build
 * tree: build/remat, build/remat-plan, build/libremat.so), or in the
 * install layout (PREFIX/bin/remat, PREFIX/bin/remat-plan,
 * PREFIX/lib/libremat.so).  Found from /proc/self/exe, so a copy moved
 * with its prefix keeps working and PATH plays no part. */
#include "remat.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int self_dir(char *dir, size_t len)
{
	char *self = realpath("/proc/self/exe", NULL);
	if (!self)
		return -1;
	char *slash = strrchr(self, '/');
	int ok = slash && (size_t)(slash - self) < len;
	if (ok)
		snprintf(dir, len, "%.*s", (int)(slash - self), self);
	free(self);
	return ok ? 0 : -1;
}

static int found(char *path, size_t len, const char *dir, const char *rel)
{
	int n = snprintf(path, len, "%s/%s", dir, rel);
	return n > 0 && (size_t)n < len && access(path, F_OK) == 0 ? 0 : -1;
}

int remat_find_tool(const char *name, char *path, size_t len)
{
	char dir[PATH_MAX];
	return self_dir(dir, sizeof(dir)) == 0 ? found(path, len, dir, name) : -1;
}

int remat_find_library(char *path, size_t len)
{
	char dir[PATH_MAX];
	if (self_dir(dir, sizeof(dir)))
		return -1;
	return found(path, len, dir, "libremat.so") == 0 ||
	               found(path, len, dir, "../lib/libremat.so") == 0
	           ? 0
	           : -1;
}
