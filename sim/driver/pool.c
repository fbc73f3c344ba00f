/*
 * pool.c — the device's one memory pool, the one cuMemAllocAsync uses.
 * It caches nothing (every stream-ordered free gives memory back), so the
 * reserved and used sizes are the same: the bytes of live stream-ordered
 * allocations.  Only the default pool exists (cuMemPoolCreate is not
 * supported).
 */
#include "driver.h"

struct sim_pool {
	int reuse_follow_events, reuse_opportunistic, reuse_internal;
	uint64_t release_threshold;
	uint64_t used, used_high;
};

static struct sim_pool pool = {1, 1, 1, 0, 0, 0};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

bool pool_is_default(CUmemoryPool p)
{
	return p == (CUmemoryPool)&pool;
}

void pool_account(int64_t bytes)
{
	pthread_mutex_lock(&lock);
	pool.used += (uint64_t)bytes;
	if (pool.used > pool.used_high)
		pool.used_high = pool.used;
	pthread_mutex_unlock(&lock);
}

static CUresult get_pool(CUmemoryPool *out, CUdevice dev)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*out = (CUmemoryPool)&pool;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	cuDeviceGetDefaultMemPool_params p = {pool_out, dev};
	API_CALL(cuDeviceGetDefaultMemPool, &p, get_pool(pool_out, dev));
}

EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	cuDeviceGetMemPool_params p = {pool_out, dev};
	API_CALL(cuDeviceGetMemPool, &p, get_pool(pool_out, dev));
}

static CUresult set_pool(CUdevice dev, CUmemoryPool p)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	return pool_is_default(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool mp)
{
	cuDeviceSetMemPool_params p = {dev, mp};
	API_CALL(cuDeviceSetMemPool, &p, set_pool(dev, mp));
}

static CUresult attribute(CUmemoryPool p, CUmemPool_attribute a, void *value, bool set)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool_is_default(p) || value == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&lock);
	int *flag = NULL;
	switch (a) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		flag = &pool.reuse_follow_events;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		flag = &pool.reuse_opportunistic;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		flag = &pool.reuse_internal;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		if (set)
			pool.release_threshold = *(cuuint64_t *)value;
		else
			*(cuuint64_t *)value = pool.release_threshold;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		if (set)
			r = CUDA_ERROR_INVALID_VALUE; /* read-only */
		else
			*(cuuint64_t *)value = pool.used;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		/* Settable only to 0: a reset of the high-water mark. */
		if (set && *(cuuint64_t *)value != 0)
			r = CUDA_ERROR_INVALID_VALUE;
		else if (set)
			pool.used_high = pool.used;
		else
			*(cuuint64_t *)value = pool.used_high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
	if (flag) {
		if (set)
			*flag = *(int *)value != 0;
		else
			*(int *)value = *flag;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool mp, CUmemPool_attribute attr,
                                              void *value)
{
	cuMemPoolGetAttribute_params p = {mp, attr, value};
	API_CALL(cuMemPoolGetAttribute, &p, attribute(mp, attr, value, false));
}

EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool mp, CUmemPool_attribute attr,
                                              void *value)
{
	cuMemPoolSetAttribute_params p = {mp, attr, value};
	API_CALL(cuMemPoolSetAttribute, &p, attribute(mp, attr, value, true));
}

static CUresult trim(CUmemoryPool p)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Nothing is cached, so there is nothing to trim. */
	return pool_is_default(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool mp, size_t minBytesToKeep)
{
	cuMemPoolTrimTo_params p = {mp, minBytesToKeep};
	API_CALL(cuMemPoolTrimTo, &p, trim(mp));
}
