/*
 * memory.c — device memory: allocation, copies, sets, free/total.
 *
 * The _ptds/_ptsz variants (what code built with
 * --default-stream per-thread calls) take the same arguments and reach the
 * driver's per-thread-default-stream functions; their params structs have
 * the same layout as the plain ones, which the asserts below check.
 */
#include <assert.h>
#include "rt.h"

static_assert(sizeof(cudaMemcpy_ptds_v7000_params) == sizeof(cudaMemcpy_v3020_params), "");
static_assert(sizeof(cudaMemcpyAsync_ptsz_v7000_params) == sizeof(cudaMemcpyAsync_v3020_params),
              "");
static_assert(sizeof(cudaMemset_ptds_v7000_params) == sizeof(cudaMemset_v3020_params), "");
static_assert(sizeof(cudaMemsetAsync_ptsz_v7000_params) == sizeof(cudaMemsetAsync_v3020_params),
              "");
static_assert(sizeof(cudaMallocAsync_ptsz_v11020_params) == sizeof(cudaMallocAsync_v11020_params),
              "");
static_assert(sizeof(cudaFreeAsync_ptsz_v11020_params) == sizeof(cudaFreeAsync_v11020_params), "");

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

RT_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	cudaMalloc_v3020_params p = {devPtr, size};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaMalloc_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !devPtr)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess) {
		/* A zero-byte request succeeds with NULL, unlike cuMemAlloc. */
		CUdeviceptr d = 0;
		if (size)
			e = rt_check(DRV(cuMemAlloc, &d, size));
		*devPtr = e == cudaSuccess ? (void *)(uintptr_t)d : NULL;
	}
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaFree(void *devPtr)
{
	cudaFree_v3020_params p = {devPtr};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaFree_v3020), &p, NULL, RT_CONTEXT);
	/* cudaFree(NULL) is the classic way to force context creation. */
	if (e == cudaSuccess && devPtr)
		e = rt_check(DRV(cuMemFree, DP(devPtr)));
	return rt_exit(&c, e);
}

static cudaError_t malloc_async(int pt, CUpti_CallbackId cbid, const char *name, void **devPtr,
                                size_t size, cudaStream_t stream)
{
	cudaMallocAsync_v11020_params p = {devPtr, size, stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !devPtr)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess) {
		CUdeviceptr d = 0;
		if (size)
			e = rt_check(RT_DRV(pt, cuMemAllocAsync, &d, size, (CUstream)stream));
		*devPtr = e == cudaSuccess ? (void *)(uintptr_t)d : NULL;
	}
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	return malloc_async(0, RT_FN(cudaMallocAsync_v11020), devPtr, size, hStream);
}

RT_EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	return malloc_async(1, RT_FN(cudaMallocAsync_ptsz_v11020), devPtr, size, hStream);
}

static cudaError_t free_async(int pt, CUpti_CallbackId cbid, const char *name, void *devPtr,
                              cudaStream_t stream)
{
	cudaFreeAsync_v11020_params p = {devPtr, stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(RT_DRV(pt, cuMemFreeAsync, DP(devPtr), (CUstream)stream));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	return free_async(0, RT_FN(cudaFreeAsync_v11020), devPtr, hStream);
}

RT_EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	return free_async(1, RT_FN(cudaFreeAsync_ptsz_v11020), devPtr, hStream);
}

/* Each explicit kind goes to the matching driver copy, which checks that
 * the pointers are of that kind; cudaMemcpyDefault lets the driver infer
 * the direction from the unified address space. */
static cudaError_t copy(int pt, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	switch (kind) {
	case cudaMemcpyHostToDevice:
		return rt_check(RT_DRV(pt, cuMemcpyHtoD, DP(dst), src, count));
	case cudaMemcpyDeviceToHost:
		return rt_check(RT_DRV(pt, cuMemcpyDtoH, dst, DP(src), count));
	case cudaMemcpyDeviceToDevice:
		return rt_check(RT_DRV(pt, cuMemcpyDtoD, DP(dst), DP(src), count));
	case cudaMemcpyHostToHost: /* ordered after the stream's work, like any copy */
	case cudaMemcpyDefault:
		return rt_check(RT_DRV(pt, cuMemcpy, DP(dst), DP(src), count));
	}
	return cudaErrorInvalidMemcpyDirection;
}

static cudaError_t copy_async(int pt, void *dst, const void *src, size_t count,
                              enum cudaMemcpyKind kind, CUstream s)
{
	switch (kind) {
	case cudaMemcpyHostToHost:
	case cudaMemcpyDefault:
		return rt_check(RT_DRV(pt, cuMemcpyAsync, DP(dst), DP(src), count, s));
	case cudaMemcpyHostToDevice:
		return rt_check(RT_DRV(pt, cuMemcpyHtoDAsync, DP(dst), src, count, s));
	case cudaMemcpyDeviceToHost:
		return rt_check(RT_DRV(pt, cuMemcpyDtoHAsync, dst, DP(src), count, s));
	case cudaMemcpyDeviceToDevice:
		return rt_check(RT_DRV(pt, cuMemcpyDtoDAsync, DP(dst), DP(src), count, s));
	}
	return cudaErrorInvalidMemcpyDirection;
}

static cudaError_t memcpy_sync(int pt, CUpti_CallbackId cbid, const char *name, void *dst,
                               const void *src, size_t count, enum cudaMemcpyKind kind)
{
	cudaMemcpy_v3020_params p = {dst, src, count, kind};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && (unsigned)kind > cudaMemcpyDefault)
		e = cudaErrorInvalidMemcpyDirection;
	if (e == cudaSuccess && count)
		e = copy(pt, dst, src, count, kind);
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return memcpy_sync(0, RT_FN(cudaMemcpy_v3020), dst, src, count, kind);
}

RT_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                      enum cudaMemcpyKind kind)
{
	return memcpy_sync(1, RT_FN(cudaMemcpy_ptds_v7000), dst, src, count, kind);
}

static cudaError_t memcpy_async(int pt, CUpti_CallbackId cbid, const char *name, void *dst,
                                const void *src, size_t count, enum cudaMemcpyKind kind,
                                cudaStream_t stream)
{
	cudaMemcpyAsync_v3020_params p = {dst, src, count, kind, stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && (unsigned)kind > cudaMemcpyDefault)
		e = cudaErrorInvalidMemcpyDirection;
	if (e == cudaSuccess && count)
		e = copy_async(pt, dst, src, count, kind, (CUstream)stream);
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return memcpy_async(0, RT_FN(cudaMemcpyAsync_v3020), dst, src, count, kind, stream);
}

RT_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return memcpy_async(1, RT_FN(cudaMemcpyAsync_ptsz_v7000), dst, src, count, kind, stream);
}

static cudaError_t memset_sync(int pt, CUpti_CallbackId cbid, const char *name, void *devPtr,
                               int value, size_t count)
{
	cudaMemset_v3020_params p = {devPtr, value, count};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && count)
		e = rt_check(RT_DRV(pt, cuMemsetD8, DP(devPtr), (unsigned char)value, count));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	return memset_sync(0, RT_FN(cudaMemset_v3020), devPtr, value, count);
}

RT_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	return memset_sync(1, RT_FN(cudaMemset_ptds_v7000), devPtr, value, count);
}

static cudaError_t memset_async(int pt, CUpti_CallbackId cbid, const char *name, void *devPtr,
                                int value, size_t count, cudaStream_t stream)
{
	cudaMemsetAsync_v3020_params p = {devPtr, value, count, stream};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && count)
		e = rt_check(RT_DRV(pt, cuMemsetD8Async, DP(devPtr), (unsigned char)value, count,
		                    (CUstream)stream));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return memset_async(0, RT_FN(cudaMemsetAsync_v3020), devPtr, value, count, stream);
}

RT_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                           cudaStream_t stream)
{
	return memset_async(1, RT_FN(cudaMemsetAsync_ptsz_v7000), devPtr, value, count, stream);
}

RT_EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	cudaMemGetInfo_v3020_params p = {free, total};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaMemGetInfo_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && (!free || !total))
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuMemGetInfo, free, total));
	return rt_exit(&c, e);
}
