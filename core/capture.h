/*
 * capture.h — stream captures in progress in the process, as the
 * interposed capture entry points (interpose/capture.c) see them begin
 * and end, and what they forbid.  While a stream captures, work issued to
 * it does not run: it becomes a graph node, and libremat leaves it alone.
 * A capture also forbids "unsafe" calls (cuCtxSynchronize, cuEventQuery,
 * cuEventSynchronize, cuMemAlloc, cuMemFree) in some threads: the driver
 * refuses them and invalidates the capture, so libremat must not make one
 * of its own there (the allocator's reclaim, the profiler's
 * synchronisations).
 */
#ifndef REMAT_CORE_CAPTURE_H
#define REMAT_CORE_CAPTURE_H

#include <cuda.h>

/* Captures in progress (read unlocked: zero is the common case and makes
 * every check here one load). */
extern int remat_capture_active;

/* A capture began on s in mode (by the calling thread), or ended there. */
void remat_capture_begun(CUstream s, CUstreamCaptureMode mode);
void remat_capture_ended(CUstream s);
/* The calling thread's interaction mode (cuThreadExchangeStreamCaptureMode). */
void remat_capture_thread_mode(CUstreamCaptureMode mode);

/* 1 when an unsafe call from the calling thread would be refused now: its
 * interaction mode is not RELAXED and it has a non-relaxed capture of its
 * own, or its mode is GLOBAL and some thread has a GLOBAL capture. */
int remat_capture_strict(void);
/* 1 when work issued to s now would be captured rather than run (or
 * refused: the legacy stream while a blocking stream captures). */
int remat_capture_stream(CUstream s);

#endif
