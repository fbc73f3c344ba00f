/*
 * context.c — the device's primary context and each thread's context
 * stack.  Only the primary context exists (cuCtxCreate is not supported),
 * which is all cudart and libremat use.
 */
#include "driver.h"

#include <stdlib.h>

struct sim_ctx sim_primary = {.id = 1, .lock = PTHREAD_MUTEX_INITIALIZER};

#define CTX_STACK 64
static __thread struct sim_ctx *stack[CTX_STACK];
static __thread int depth; /* stack[depth-1] is current */

CUresult ctx_check(CUcontext c, struct sim_ctx **out)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (c != (CUcontext)&sim_primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&sim_primary.lock);
	bool active = sim_primary.active;
	pthread_mutex_unlock(&sim_primary.lock);
	if (!active)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*out = &sim_primary;
	return CUDA_SUCCESS;
}

CUresult ctx_current(struct sim_ctx **out)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = ctx_current_query(out);
	return r != CUDA_SUCCESS ? r : ctx_sticky_error();
}

CUresult ctx_current_query(struct sim_ctx **out)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	return ctx_check((CUcontext)stack[depth - 1], out);
}

CUresult ctx_sticky_error(void)
{
	return atomic_load(&sim_primary.sticky_error);
}

void ctx_poison(CUresult error)
{
	CUresult healthy = CUDA_SUCCESS;
	atomic_compare_exchange_strong(&sim_primary.sticky_error, &healthy, error);
}

CUresult ctx_synchronize(struct sim_ctx *ctx)
{
	struct sim_marker **ms = NULL;
	size_t n = 0, cap = 0;
	pthread_mutex_lock(&ctx->lock);
	for (struct sim_stream *s = ctx->streams; s; s = s->next)
		cap += !s->dead && s->last;
	cap += ctx->nretired;
	ms = malloc((cap ? cap : 1) * sizeof(*ms));
	if (ms == NULL) {
		pthread_mutex_unlock(&ctx->lock);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (struct sim_stream *s = ctx->streams; s; s = s->next)
		if (!s->dead && s->last) {
			marker_ref(s->last);
			ms[n++] = s->last;
		}
	/* The retired references move to us: once waited for, the host's
	 * simulated time covers them. */
	for (size_t i = 0; i < ctx->nretired; i++)
		ms[n++] = ctx->retired[i];
	ctx->nretired = 0;
	pthread_mutex_unlock(&ctx->lock);
	for (size_t i = 0; i < n; i++) {
		marker_wait(ms[i]);
		marker_unref(ms[i]);
	}
	free(ms);
	return CUDA_SUCCESS;
}

/* ---- primary context --------------------------------------------------- */

static CUresult primary_retain(CUcontext *pctx, CUdevice dev)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (pctx == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	struct sim_ctx *c = &sim_primary;
	pthread_mutex_lock(&c->lock);
	bool need_legacy = c->legacy == NULL;
	pthread_mutex_unlock(&c->lock);
	if (need_legacy) {
		static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
		pthread_mutex_lock(&create_lock);
		struct sim_stream *s;
		CUresult r = CUDA_SUCCESS;
		if (c->legacy == NULL)
			r = stream_create(c, 0, 0, true, false, &s);
		pthread_mutex_unlock(&create_lock);
		if (r != CUDA_SUCCESS)
			return r;
	}
	pthread_mutex_lock(&c->lock);
	c->retain++;
	c->active = true;
	pthread_mutex_unlock(&c->lock);
	*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	cuDevicePrimaryCtxRetain_params p = {pctx, dev};
	API_CALL(cuDevicePrimaryCtxRetain, &p, primary_retain(pctx, dev));
}

/* What destroying the primary context frees: its streams and its
 * cuMemAlloc memory (VMM allocations belong to the process). */
static void teardown(struct sim_ctx *c)
{
	ctx_synchronize(c);
	for (;;) {
		struct sim_stream *victim = NULL;
		pthread_mutex_lock(&c->lock);
		for (struct sim_stream *s = c->streams; s && !victim; s = s->next)
			if (!s->legacy && !s->per_thread && !s->dead)
				victim = s;
		pthread_mutex_unlock(&c->lock);
		if (victim == NULL)
			break;
		stream_destroy(victim);
	}
	alloc_free_all();
}

static CUresult primary_release(CUdevice dev, bool reset)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	struct sim_ctx *c = &sim_primary;
	pthread_mutex_lock(&c->lock);
	if (!reset && c->retain == 0) {
		pthread_mutex_unlock(&c->lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	bool last = reset || c->retain == 1, was_active = c->active;
	pthread_mutex_unlock(&c->lock);
	if (last && was_active)
		teardown(c);
	pthread_mutex_lock(&c->lock);
	if (reset)
		c->retain = 0;
	else
		c->retain--;
	if (c->retain == 0) {
		c->active = false;
		c->flags = 0;
		atomic_store(&c->sticky_error, CUDA_SUCCESS);
	}
	pthread_mutex_unlock(&c->lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	cuDevicePrimaryCtxRelease_v2_params p = {dev};
	API_CALL(cuDevicePrimaryCtxRelease_v2, &p, primary_release(dev, false));
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	cuDevicePrimaryCtxReset_v2_params p = {dev};
	API_CALL(cuDevicePrimaryCtxReset_v2, &p, primary_release(dev, true));
}

static CUresult primary_set_flags(CUdevice dev, unsigned flags)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	unsigned known = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
	                 CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;
	if ((flags & ~known) || (flags & CU_CTX_SCHED_MASK) == 0x3 ||
	    (flags & CU_CTX_SCHED_MASK) > CU_CTX_SCHED_BLOCKING_SYNC)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_primary.lock);
	sim_primary.flags = flags;
	pthread_mutex_unlock(&sim_primary.lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	cuDevicePrimaryCtxSetFlags_v2_params p = {dev, flags};
	API_CALL(cuDevicePrimaryCtxSetFlags_v2, &p, primary_set_flags(dev, flags));
}

static CUresult primary_state(CUdevice dev, unsigned *flags, int *active)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (flags == NULL || active == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&sim_primary.lock);
	*flags = sim_primary.flags;
	*active = sim_primary.active;
	pthread_mutex_unlock(&sim_primary.lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	cuDevicePrimaryCtxGetState_params p = {dev, flags, active};
	API_CALL(cuDevicePrimaryCtxGetState, &p, primary_state(dev, flags, active));
}

/* ---- the thread's context stack --------------------------------------- */

static CUresult get_current(CUcontext *pctx)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (pctx == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = depth ? (CUcontext)stack[depth - 1] : NULL;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	cuCtxGetCurrent_params p = {pctx};
	API_CALL(cuCtxGetCurrent, &p, get_current(pctx));
}

static CUresult set_current(CUcontext c)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (c == NULL) {
		if (depth)
			depth--;
		return CUDA_SUCCESS;
	}
	if (c != (CUcontext)&sim_primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (depth == 0)
		depth = 1;
	stack[depth - 1] = &sim_primary;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	cuCtxSetCurrent_params p = {ctx};
	API_CALL(cuCtxSetCurrent, &p, set_current(ctx));
}

static CUresult push_current(CUcontext c)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (c != (CUcontext)&sim_primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (depth == CTX_STACK)
		return CUDA_ERROR_INVALID_VALUE;
	stack[depth++] = &sim_primary;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
	cuCtxPushCurrent_v2_params p = {ctx};
	API_CALL(cuCtxPushCurrent_v2, &p, push_current(ctx));
}

static CUresult pop_current(CUcontext *pctx)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = (CUcontext)stack[depth - 1];
	depth--;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
	cuCtxPopCurrent_v2_params p = {pctx};
	API_CALL(cuCtxPopCurrent_v2, &p, pop_current(pctx));
}

static CUresult sync_current(void)
{
	struct sim_ctx *c;
	CUresult r = ctx_current(&c);
	if (r == CUDA_SUCCESS)
		r = capture_forbids(c, NULL);
	return r != CUDA_SUCCESS ? r : ctx_synchronize(c);
}

EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
	API_CALL(cuCtxSynchronize, NULL, sync_current());
}

static CUresult sync_ctx(CUcontext h)
{
	struct sim_ctx *c;
	CUresult r = h ? ctx_check(h, &c) : ctx_current(&c);
	if (r == CUDA_SUCCESS)
		r = ctx_sticky_error();
	if (r == CUDA_SUCCESS)
		r = capture_forbids(c, NULL);
	return r != CUDA_SUCCESS ? r : ctx_synchronize(c);
}

EXPORT CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	cuCtxSynchronize_v2_params p = {ctx};
	API_CALL(cuCtxSynchronize_v2, &p, sync_ctx(ctx));
}

static CUresult ctx_device(CUdevice *d, CUcontext h)
{
	struct sim_ctx *c;
	CUresult r = h ? ctx_check(h, &c) : ctx_current_query(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if (d == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*d = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	cuCtxGetDevice_params p = {device};
	API_CALL(cuCtxGetDevice, &p, ctx_device(device, NULL));
}

EXPORT CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	cuCtxGetDevice_v2_params p = {device, ctx};
	API_CALL(cuCtxGetDevice_v2, &p, ctx_device(device, ctx));
}

static CUresult ctx_id(CUcontext h, unsigned long long *id)
{
	struct sim_ctx *c;
	CUresult r = h ? ctx_check(h, &c) : ctx_current_query(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if (id == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*id = c->id;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
	cuCtxGetId_params p = {ctx, ctxId};
	API_CALL(cuCtxGetId, &p, ctx_id(ctx, ctxId));
}

static CUresult ctx_flags(unsigned *flags)
{
	struct sim_ctx *c;
	CUresult r = ctx_current_query(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if (flags == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&c->lock);
	*flags = c->flags;
	pthread_mutex_unlock(&c->lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
	cuCtxGetFlags_params p = {flags};
	API_CALL(cuCtxGetFlags, &p, ctx_flags(flags));
}

static CUresult priority_range(int *least, int *greatest)
{
	struct sim_ctx *c;
	CUresult r = ctx_current_query(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if (least)
		*least = 0;
	if (greatest)
		*greatest = -5;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	cuCtxGetStreamPriorityRange_params p = {leastPriority, greatestPriority};
	API_CALL(cuCtxGetStreamPriorityRange, &p, priority_range(leastPriority, greatestPriority));
}

/* ---- limits and preferences -------------------------------------------- */

static size_t limits[CU_LIMIT_MAX] = {
    [CU_LIMIT_STACK_SIZE] = 1024,
    [CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20,
    [CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20,
    [CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048,
    [CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64,
};
static pthread_mutex_t limits_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult limit_get(size_t *v, CUlimit l)
{
	struct sim_ctx *c;
	CUresult r = ctx_current(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if (v == NULL || (int)l < 0 || l >= CU_LIMIT_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	pthread_mutex_lock(&limits_lock);
	*v = limits[l];
	pthread_mutex_unlock(&limits_lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	cuCtxGetLimit_params p = {pvalue, limit};
	API_CALL(cuCtxGetLimit, &p, limit_get(pvalue, limit));
}

static CUresult limit_set(CUlimit l, size_t v)
{
	struct sim_ctx *c;
	CUresult r = ctx_current(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if ((int)l < 0 || l >= CU_LIMIT_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (l == CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	if (l == CU_LIMIT_MAX_L2_FETCH_GRANULARITY && v > 128)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&limits_lock);
	limits[l] = v;
	pthread_mutex_unlock(&limits_lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
	cuCtxSetLimit_params p = {limit, value};
	API_CALL(cuCtxSetLimit, &p, limit_set(limit, value));
}

static CUresult cache_config(CUfunc_cache *get, int set)
{
	struct sim_ctx *c;
	CUresult r = ctx_current(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if (get) {
		*get = CU_FUNC_CACHE_PREFER_NONE;
		return CUDA_SUCCESS;
	}
	return set >= CU_FUNC_CACHE_PREFER_NONE && set <= CU_FUNC_CACHE_PREFER_EQUAL
	           ? CUDA_SUCCESS
	           : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
	cuCtxGetCacheConfig_params p = {pconfig};
	API_CALL(cuCtxGetCacheConfig, &p,
	         pconfig ? cache_config(pconfig, 0) : CUDA_ERROR_INVALID_VALUE);
}

EXPORT CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config)
{
	cuCtxSetCacheConfig_params p = {config};
	API_CALL(cuCtxSetCacheConfig, &p, cache_config(NULL, (int)config));
}

static CUresult api_version(CUcontext h, unsigned *v)
{
	struct sim_ctx *c;
	CUresult r = h ? ctx_check(h, &c) : ctx_current_query(&c);
	if (r != CUDA_SUCCESS)
		return r;
	if (v == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 3020; /* what every context created since CUDA 3.2 reports */
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	cuCtxGetApiVersion_params p = {ctx, version};
	API_CALL(cuCtxGetApiVersion, &p, api_version(ctx, version));
}
