/*
 * log.c — logging (log.h).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

#define MAX_LATER 24 /* above REMAT_CONFIG_MAX_MSGS: every start-up message kept */

static struct log_state {
	int fd; /* stderr, or REMAT_LOG_FILE's */
	/* start-up messages, printed at the first CUDA call */
	char later[MAX_LATER][640];
	int nlater, later_pending;
} logs = {.fd = 2};

void remat_log_open(void)
{
	if (!remat_cfg.log_file[0])
		return;
	int fd = open(remat_cfg.log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		remat_warn("cannot open REMAT_LOG_FILE=%s; logging to stderr", remat_cfg.log_file);
		return;
	}
	if (logs.fd != 2)
		close(logs.fd);
	logs.fd = fd;
}

static void emit(int fd, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "libremat: ");
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t r = write(fd, line, (size_t)n);
	(void)r;
}

void remat_log(int level, const char *fmt, ...)
{
	if (level > remat_cfg.log_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit(logs.fd, fmt, ap);
	va_end(ap);
}

void remat_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(2, fmt, ap);
	va_end(ap);
	if (logs.fd != 2) {
		va_start(ap, fmt);
		emit(logs.fd, fmt, ap);
		va_end(ap);
	}
}

void remat_warn_later(const char *msg)
{
	/* Only the constructor calls this: no other thread runs yet. */
	if (logs.nlater == MAX_LATER)
		return;
	snprintf(logs.later[logs.nlater++], sizeof(logs.later[0]), "%s", msg);
	__atomic_store_n(&logs.later_pending, 1, __ATOMIC_RELEASE);
}

void remat_warn_flush(void)
{
	/* Called on every driver lookup: one load when there is nothing. */
	if (__builtin_expect(!__atomic_load_n(&logs.later_pending, __ATOMIC_ACQUIRE), 1))
		return;
	if (!__atomic_exchange_n(&logs.later_pending, 0, __ATOMIC_ACQ_REL))
		return;
	for (int i = 0; i < logs.nlater; i++)
		remat_warn("%s", logs.later[i]);
}
