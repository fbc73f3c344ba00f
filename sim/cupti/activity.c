/*
 * activity.c — the activity API: record kinds on and off, the client's
 * buffers, records for kernels, copies, sets and API calls, delivery.
 *
 * Records are written by whichever thread reports the event (a stream
 * worker of the driver for kernels and copies, the calling thread for API
 * records) into the buffer being filled.  A full buffer goes to a delivery
 * thread that hands it to the client's bufferCompleted, as the real CUPTI
 * does from its own thread; cuptiActivityFlushAll hands over everything
 * written so far before it returns, from any thread.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cupti_int.h"

static _Atomic unsigned char enabled[CUPTI_ACTIVITY_KIND_COUNT];

struct buffer {
	uint8_t *data;
	size_t size, used, max_records, records;
	struct buffer *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* full buffers queued */
static pthread_cond_t idle = PTHREAD_COND_INITIALIZER; /* a delivery finished */
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static struct buffer *filling;         /* records go here */
static struct buffer *spare;           /* requested but not yet used */
static struct buffer *full, *full_end; /* waiting for delivery, oldest first */
static unsigned delivering;            /* buffers being handed over right now */
static int worker_started;
static size_t dropped;

int cupti_activity_enabled(CUpti_ActivityKind kind)
{
	return (unsigned)kind < CUPTI_ACTIVITY_KIND_COUNT &&
	       atomic_load_explicit(&enabled[kind], memory_order_relaxed);
}

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return sizeof(CUpti_ActivityAPI);
	default:
		return 0;
	}
}

/* Records start on 8-byte boundaries, as the structs' alignment wants. */
static size_t padded(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Set on a thread inside bufferCompleted: a flush from there must not
 * wait for its own delivery to end. */
static __thread int tl_delivering;

static void deliver(struct buffer *b)
{
	tl_delivering++;
	if (completed)
		completed(NULL, 0, b->data, b->size, b->used);
	tl_delivering--;
	free(b);
}

/* Under lock, with a full buffer queued: hands the oldest to the client
 * with the lock dropped (bufferCompleted may call CUPTI); `delivering`
 * lets a flush wait for it. */
static void deliver_oldest(void)
{
	struct buffer *b = full;
	full = b->next;
	if (!full)
		full_end = NULL;
	delivering++;
	pthread_mutex_unlock(&lock);
	deliver(b);
	pthread_mutex_lock(&lock);
	delivering--;
	pthread_cond_broadcast(&idle);
}

static void *delivery_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!full)
			pthread_cond_wait(&work, &lock);
		deliver_oldest();
	}
	return NULL;
}

/* Under lock. */
static void queue_full(struct buffer *b)
{
	b->next = NULL;
	if (full_end)
		full_end->next = b;
	else
		full = b;
	full_end = b;
}

/* Under lock; returns with lock held.  The client's bufferRequested runs
 * without it, so it may call CUPTI. */
static struct buffer *buffer_with_room(size_t need)
{
	for (int tries = 0; tries < 4; tries++) {
		if (filling && filling->used + need <= filling->size &&
		    (!filling->max_records || filling->records < filling->max_records))
			return filling;
		if (filling) {
			queue_full(filling);
			filling = NULL;
			if (!worker_started) {
				pthread_t t;
				if (pthread_create(&t, NULL, delivery_thread, NULL) == 0) {
					pthread_detach(t);
					worker_started = 1;
				}
			}
			pthread_cond_signal(&work);
		}
		if (spare) {
			filling = spare;
			spare = spare->next;
			continue;
		}
		if (!requested)
			return NULL;
		uint8_t *data = NULL;
		size_t size = 0, max_records = 0;
		CUpti_BuffersCallbackRequestFunc req = requested;
		pthread_mutex_unlock(&lock);
		req(&data, &size, &max_records);
		struct buffer *b = data && size ? calloc(1, sizeof(*b)) : NULL;
		pthread_mutex_lock(&lock);
		if (!b)
			return NULL;
		*b = (struct buffer){data, size, 0, max_records, 0, spare};
		spare = b;
	}
	return NULL;
}

static void write_record(const void *rec, size_t size)
{
	pthread_mutex_lock(&lock);
	struct buffer *b = buffer_with_room(padded(size));
	if (b) {
		memcpy(b->data + b->used, rec, size);
		b->used += padded(size);
		b->records++;
	} else {
		dropped++;
	}
	pthread_mutex_unlock(&lock);
}

/* Kernel names live as long as the process: a record may be read after
 * the module that named it is unloaded. */
static const char *intern(const char *name)
{
	static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
	static struct name {
		struct name *next;
		char text[];
	} * names;
	if (!name)
		return NULL;
	pthread_mutex_lock(&names_lock);
	struct name *n = names;
	while (n && strcmp(n->text, name) != 0)
		n = n->next;
	if (!n) {
		size_t len = strlen(name) + 1;
		n = malloc(sizeof(*n) + len);
		if (n) {
			memcpy(n->text, name, len);
			n->next = names;
			names = n;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return n ? n->text : name;
}

void cupti_activity_kernel(const struct simcuda_activity_kernel *k)
{
	CUpti_ActivityKind kind;
	if (cupti_activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
		kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	else if (cupti_activity_enabled(CUPTI_ACTIVITY_KIND_KERNEL))
		kind = CUPTI_ACTIVITY_KIND_KERNEL;
	else
		return;
	static _Atomic int64_t grid_ids;
	CUpti_ActivityKernel10 r;
	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.start = k->start_ns;
	r.end = k->end_ns;
	r.completed = k->end_ns;
	r.deviceId = k->device_id;
	r.contextId = k->context_id;
	r.streamId = k->stream_id;
	r.gridX = (int32_t)k->grid.x;
	r.gridY = (int32_t)k->grid.y;
	r.gridZ = (int32_t)k->grid.z;
	r.blockX = (int32_t)k->block.x;
	r.blockY = (int32_t)k->block.y;
	r.blockZ = (int32_t)k->block.z;
	r.dynamicSharedMemory = (int32_t)k->dynamic_smem;
	r.correlationId = k->correlation_id;
	r.gridId = atomic_fetch_add(&grid_ids, 1) + 1;
	r.name = intern(k->name);
	r.queued = CUPTI_TIMESTAMP_UNKNOWN;
	r.submitted = CUPTI_TIMESTAMP_UNKNOWN;
	r.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	write_record(&r, sizeof(r));
}

static uint8_t memory_kind(int copy_kind, int src)
{
	switch (copy_kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		return src ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE
		           : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		return src ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
		           : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	default:
		return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
	}
}

void cupti_activity_memop(const struct simcuda_activity_memop *m)
{
	if (m->kind == SIMCUDA_MEMCPY && cupti_activity_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
		CUpti_ActivityMemcpy6 r;
		memset(&r, 0, sizeof(r));
		r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		r.copyKind = (uint8_t)m->copy_kind;
		r.srcKind = memory_kind(m->copy_kind, 1);
		r.dstKind = memory_kind(m->copy_kind, 0);
		r.bytes = m->bytes;
		r.start = m->start_ns;
		r.end = m->end_ns;
		r.deviceId = m->device_id;
		r.contextId = m->context_id;
		r.streamId = m->stream_id;
		r.correlationId = m->correlation_id;
		write_record(&r, sizeof(r));
	} else if (m->kind == SIMCUDA_MEMSET &&
	           cupti_activity_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) {
		CUpti_ActivityMemset4 r;
		memset(&r, 0, sizeof(r));
		r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		r.value = m->value;
		r.bytes = m->bytes;
		r.start = m->start_ns;
		r.end = m->end_ns;
		r.deviceId = m->device_id;
		r.contextId = m->context_id;
		r.streamId = m->stream_id;
		r.correlationId = m->correlation_id;
		r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		write_record(&r, sizeof(r));
	}
}

void cupti_activity_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t start_ns,
                        uint64_t end_ns, uint32_t correlation_id, uint32_t return_value)
{
	CUpti_ActivityAPI r;
	memset(&r, 0, sizeof(r));
	r.kind = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME
	                                               : CUPTI_ACTIVITY_KIND_DRIVER;
	r.cbid = cbid;
	r.start = start_ns;
	r.end = end_ns;
	r.processId = (uint32_t)getpid();
	r.threadId = (uint32_t)syscall(SYS_gettid);
	r.correlationId = correlation_id;
	r.returnValue = return_value;
	write_record(&r, sizeof(r));
}

CUPTI_EXPORT CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	if (!funcBufferRequested || !funcBufferCompleted)
		return CUPTI_ERROR_INVALID_PARAMETER;
	CUptiResult r = cupti_init();
	if (r != CUPTI_SUCCESS)
		return r;
	pthread_mutex_lock(&lock);
	requested = funcBufferRequested;
	completed = funcBufferCompleted;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, unsigned char on)
{
	if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT || kind == CUPTI_ACTIVITY_KIND_INVALID)
		return CUPTI_ERROR_INVALID_KIND;
	if (!record_size(kind))
		return CUPTI_ERROR_NOT_SUPPORTED;
	CUptiResult r = cupti_init();
	if (r != CUPTI_SUCCESS)
		return r;
	atomic_store(&enabled[kind], on);
	return CUPTI_SUCCESS;
}

void cupti_activity_disable_all(void)
{
	for (unsigned k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		atomic_store(&enabled[k], 0);
}

CUPTI_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return set_kind(kind, 1);
}

CUPTI_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return set_kind(kind, 0);
}

CUPTI_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                    CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t at = 0;
	if (*record) {
		uint8_t *cur = (uint8_t *)*record;
		size_t size = record_size((*record)->kind);
		if (cur < buffer || !size)
			return CUPTI_ERROR_INVALID_KIND;
		at = (size_t)(cur - buffer) + padded(size);
	}
	if (at >= validBufferSizeBytes) {
		*record = NULL;
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	CUpti_Activity *next = (CUpti_Activity *)(buffer + at);
	size_t size = record_size(next->kind);
	if (!size || at + size > validBufferSizeBytes)
		return CUPTI_ERROR_INVALID_KIND;
	*record = next;
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag; /* every record written is of a finished operation */
	pthread_mutex_lock(&lock);
	if (filling && filling->used) {
		queue_full(filling);
		filling = NULL;
	}
	while (full)
		deliver_oldest();
	/* A buffer the delivery thread took before us counts as written. */
	while (delivering > (unsigned)tl_delivering)
		pthread_cond_wait(&idle, &lock);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                           size_t *droppedOut)
{
	(void)context, (void)streamId; /* counted for the whole process */
	if (!droppedOut)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	*droppedOut = dropped;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}
