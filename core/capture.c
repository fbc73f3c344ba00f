/*
 * capture.c — the captures in progress (capture.h).  A handful at most at
 * any time, so a small table under a mutex; only touched while
 * remat_capture_active says some capture exists.
 */
#include <pthread.h>

#include "capture.h"
#include "driver.h"

#define MAX_CAPTURES 64

struct capture {
	CUstream stream;
	CUstreamCaptureMode mode;
	pthread_t thread;
};

int remat_capture_active;
/* The captures in progress, under lock. */
static struct capture_state {
	pthread_mutex_t lock;
	struct capture table[MAX_CAPTURES];
	int ncaptures;
	/* Captures we could not keep track of (table full): counted strict,
	 * for everyone, until the table empties. */
	int untracked;
} captures = {.lock = PTHREAD_MUTEX_INITIALIZER};
static __thread int thread_mode __attribute__((tls_model("initial-exec")));

static void publish(void)
{
	__atomic_store_n(&remat_capture_active, captures.ncaptures + captures.untracked,
	                 __ATOMIC_RELEASE);
}

void remat_capture_begun(CUstream s, CUstreamCaptureMode mode)
{
	pthread_mutex_lock(&captures.lock);
	if (captures.ncaptures < MAX_CAPTURES)
		captures.table[captures.ncaptures++] = (struct capture){s, mode, pthread_self()};
	else
		captures.untracked++;
	publish();
	pthread_mutex_unlock(&captures.lock);
}

static void drop(int i)
{
	captures.table[i] = captures.table[--captures.ncaptures];
	if (!captures.ncaptures)
		captures.untracked = 0;
}

void remat_capture_ended(CUstream s)
{
	pthread_mutex_lock(&captures.lock);
	for (int i = 0; i < captures.ncaptures; i++)
		if (captures.table[i].stream == s) {
			drop(i);
			break;
		}
	publish();
	pthread_mutex_unlock(&captures.lock);
}

void remat_capture_thread_mode(CUstreamCaptureMode mode)
{
	thread_mode = (int)mode;
}

/* A capture that ended without its end reaching us (its stream was
 * destroyed) would keep every thread strict: such entries go. */
static int still_capturing(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	return !remat_drv.cuStreamIsCapturing ||
	       (remat_drv.cuStreamIsCapturing(s, &st) == CUDA_SUCCESS &&
	        st != CU_STREAM_CAPTURE_STATUS_NONE);
}

int remat_capture_strict(void)
{
	if (!__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE) ||
	    thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return 0;
	int strict = 0;
	pthread_mutex_lock(&captures.lock);
	for (int i = 0; i < captures.ncaptures;) {
		/* The per-thread stream is another stream in every thread. */
		int mine = pthread_equal(captures.table[i].thread, pthread_self());
		if ((mine || captures.table[i].stream != CU_STREAM_PER_THREAD) &&
		    !still_capturing(captures.table[i].stream)) {
			drop(i);
			continue;
		}
		const struct capture *c = &captures.table[i++];
		if (c->mode == CU_STREAM_CAPTURE_MODE_RELAXED)
			continue;
		strict |= pthread_equal(c->thread, pthread_self()) ||
		          (thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
		           c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
	}
	strict |= captures.untracked > 0;
	publish();
	pthread_mutex_unlock(&captures.lock);
	return strict;
}

int remat_capture_stream(CUstream s)
{
	if (!__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE))
		return 0;
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (!remat_drv.cuStreamIsCapturing)
		return 1;
	/* An error (the legacy stream while a blocking stream captures) means
	 * the op will fail the same way: it is not ours either. */
	return remat_drv.cuStreamIsCapturing(s, &st) != CUDA_SUCCESS ||
	       st != CU_STREAM_CAPTURE_STATUS_NONE;
}
