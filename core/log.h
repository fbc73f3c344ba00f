/*
 * log.h — one line per message, prefixed "libremat: ", written with a
 * single write() so lines from several threads never interleave.
 */
#ifndef REMAT_CORE_LOG_H
#define REMAT_CORE_LOG_H

enum remat_log_level { REMAT_LOG_ERROR = 0, REMAT_LOG_INFO = 1, REMAT_LOG_DEBUG = 2 };

/* Printed when REMAT_LOG is at level or above. */
void remat_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Always printed, whatever REMAT_LOG says: bad input the user must see.
 * Goes to stderr, and to REMAT_LOG_FILE too when there is one. */
void remat_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Opens REMAT_LOG_FILE (at lazy init: the constructor writes nothing). */
void remat_log_open(void);

/* Start-up messages: the constructor may not print, so it keeps them here;
 * they are printed (remat_warn) at the first CUDA call that reaches the
 * driver, each once.  Thread-safe. */
void remat_warn_later(const char *msg);
void remat_warn_flush(void);

#endif
