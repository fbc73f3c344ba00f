/*
 * cache.c — the plan cache: one file per (graph hash, budget), so a rerun
 * of the same job applies its plan right after its first profile.
 *
 * Entries are written by rename() from a temporary name in the same
 * directory (by remat-plan itself, see spawn.c), so a reader
 * never sees half a plan; a plan is validated again every time it is read,
 * so a damaged entry costs one message and a re-plan, never a bad replay.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/config.h"
#include "../core/grow.h"
#include "internal.h"

/* mkdir -p; the leaf gets mode (0700: plans describe the user's jobs). */
static int make_dirs(char *path, mode_t mode)
{
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int r = mkdir(path, 0755);
		*s = '/';
		if (r && errno != EEXIST)
			return -1;
	}
	if (mkdir(path, mode) && errno != EEXIST)
		return -1;
	struct stat st;
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

int acq_cache_dir(char *dir, size_t n, char *err, size_t errlen)
{
	const char *what = remat_cfg.cache_dir_from;
	if (!remat_cfg.cache_dir[0]) {
		if (!strcmp(what, "too long"))
			snprintf(err, errlen,
			         "no plan cache: the directory from XDG_CACHE_HOME or "
			         "HOME is too long");
		else
			snprintf(err, errlen,
			         "no plan cache: neither REMAT_CACHE_DIR, "
			         "XDG_CACHE_HOME nor HOME is set");
		return -1;
	}
	int len = snprintf(dir, n, "%s", remat_cfg.cache_dir);
	if (len < 0 || (size_t)len >= n - 64) {
		snprintf(err, errlen, "plan cache directory from %s is too long", what);
		return -1;
	}
	while (len > 1 && dir[len - 1] == '/')
		dir[--len] = '\0';
	if (make_dirs(dir, 0700)) {
		snprintf(err, errlen, "plan cache directory %s (from %s): %s", dir, what,
		         strerror(errno));
		return -1;
	}
	return 0;
}

void acq_cache_path(const char *dir, uint64_t graph_hash, int64_t budget, char *out, size_t n)
{
	snprintf(out, n, "%s/%016llx-%lld.plan.json", dir, (unsigned long long)graph_hash,
	         (long long)budget);
}

void acq_cache_touch(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, 0);
}

static int ends_with(const char *n, const char *suffix)
{
	size_t l = strlen(n), s = strlen(suffix);
	return n[0] != '.' && l > s && !strcmp(n + l - s, suffix);
}

struct entry {
	struct timespec mtime;
	char name[256];
};

/* One kind of file the cache holds, pruned on its own: its newest keep
 * stay. */
struct kind {
	const char *suffix;
	struct entry *e;
	size_t n, cap;
};

static int older_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void keep_newest(int dir_fd, struct kind *k, int keep)
{
	if (k->n > (size_t)keep) {
		qsort(k->e, k->n, sizeof(*k->e), older_first);
		for (size_t i = 0; i < k->n - (size_t)keep; i++)
			unlinkat(dir_fd, k->e[i].name, 0);
	}
	free(k->e);
}

/* Plans and refused plans set aside (<entry>.rejected) are pruned on the
 * same rule but counted apart, so that refused plans never push good ones
 * out (nor good ones the refused, which a bug report may need). */
void acq_cache_prune(const char *dir, int keep)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct kind kinds[] = {{".plan.json", NULL, 0, 0}, {".plan.json.rejected", NULL, 0, 0}};
	struct dirent *de;
	time_t now = time(NULL);
	while ((de = readdir(d))) {
		struct stat st;
		/* Temporaries of planners killed mid-write (remat-plan writes
		 * <entry>.<pid>.tmp, then renames it); a day is far past any time
		 * limit. */
		size_t len = strlen(de->d_name);
		if (len > 4 && !strcmp(de->d_name + len - 4, ".tmp") &&
		    !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode) && st.st_mtime < now - 86400) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		struct kind *k = NULL;
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (ends_with(de->d_name, kinds[i].suffix))
				k = &kinds[i];
		if (!k || len >= sizeof(k->e->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (REMAT_GROW(k->e, k->n, k->cap))
			break;
		k->e[k->n].mtime = st.st_mtim;
		snprintf(k->e[k->n].name, sizeof(k->e[k->n].name), "%s", de->d_name);
		k->n++;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		keep_newest(dirfd(d), &kinds[i], keep);
	closedir(d);
}
