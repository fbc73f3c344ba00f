/*
 * acq_testutil.h — scratch directories and files for the acquisition tests.
 */
#ifndef ACQ_TESTUTIL_H
#define ACQ_TESTUTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/config.h"
#include "../../plan/plan.h"

static inline const char *acq_getenv(const char *name)
{
	return getenv(name);
}

/* The test changed the environment: read it again, as the constructor does
 * once in a real process. */
static inline void acq_reload(void)
{
	struct remat_config_msgs msgs;
	memset(&msgs, 0, sizeof(msgs));
	if (remat_config_load(acq_getenv, environ, &remat_cfg, &msgs))
		abort();
}

/* A fresh directory under $TMPDIR, removed by acq_rmtree. */
static inline void acq_mkdtemp(char *out, size_t n)
{
	const char *t = getenv("TMPDIR");
	snprintf(out, n, "%s/acqtest.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(out))
		abort();
}

static inline void acq_rmtree(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		abort();
}

__attribute__((format(printf, 3, 4))) static inline void acq_write(const char *path, int mode,
                                                                   const char *fmt, ...)
{
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
	chmod(path, (mode_t)mode);
}

/* A plan text ending in `, "end": true}` with the checksum member added
 * before "end", as remat-plan writes it (static buffer). */
static inline const char *acq_seal(const char *text)
{
	static char buf[8192];
	long at = pl_checksum_unsealed_end(text, strlen(text));
	if (at < 0 || (size_t)at + PL_CHECKSUM_TAIL_MAX > sizeof(buf))
		abort();
	memcpy(buf, text, (size_t)at);
	pl_checksum_tail(pl_checksum_of(text, (size_t)at), buf + at, sizeof(buf) - (size_t)at);
	return buf;
}

static inline int acq_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

#endif
