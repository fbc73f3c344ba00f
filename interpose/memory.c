/*
 * memory.c — allocation entry points, runtime (cudaMalloc, cudaFree,
 * cudaMallocAsync, cudaFreeAsync) and driver (cuMemAlloc_v2, cuMemFree_v2,
 * cuMemAllocAsync, cuMemFreeAsync).  When active, they go to the VMM
 * allocator; pointers that are not ours go to the real free.  During a
 * stream capture, a stream-ordered allocation on the capturing stream is
 * the graph's (a memory node: the real one), and so is a synchronous
 * allocation the capture forbids (the real call refuses it and
 * invalidates the capture, as without libremat).
 */
#include <stddef.h>

#include "../core/capture.h"
#include "hooks.h"

/* cudart types, without including cuda_runtime_api.h (whose declarations
 * would clash with our exported definitions' visibility). */
typedef int cudart_err;
enum { CUDART_SUCCESS = 0, CUDART_INVALID_VALUE = 1, CUDART_MEMORY_ALLOCATION = 2 };
typedef cudart_err (*cudamalloc_fn)(void **, size_t);
typedef cudart_err (*cudafree_fn)(void *);
typedef cudart_err (*cudamallocasync_fn)(void **, size_t, CUstream);
typedef cudart_err (*cudafreeasync_fn)(void *, CUstream);

static int managing(void)
{
	return remat_session_active && session_ready() == 0;
}

/* Whether an allocation now belongs to a capture rather than to us. */
static int captured(int async, CUstream s)
{
	if (likely(!__atomic_load_n(&remat_capture_active, __ATOMIC_ACQUIRE)))
		return 0;
	return async ? remat_capture_stream(s) : remat_capture_strict();
}

/* ---- runtime ------------------------------------------------------------ */

#define RUNTIME_REAL(name, type)                                                                   \
	static type real_##name;                                                                   \
	if (unlikely(!real_##name))                                                                \
		real_##name = (type)remat_real_next(#name);                                        \
	if (unlikely(!real_##name))                                                                \
		return 35 /* cudaErrorInsufficientDriver */;

static cudart_err to_cudart(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return CUDART_SUCCESS;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return CUDART_MEMORY_ALLOCATION;
	case CUDA_ERROR_INVALID_VALUE:
		return CUDART_INVALID_VALUE;
	default:
		/* The runtime numbers the sticky errors of a faulted context
		 * (cudaErrorIllegalAddress .. cudaErrorLaunchFailure) as the
		 * driver does: the program must see which one it was.  Stream
		 * capture's errors have the same numbers in both APIs too
		 * (cudaErrorStreamCaptureUnsupported = 900, ...). */
		if ((r >= CUDA_ERROR_ILLEGAL_ADDRESS && r <= CUDA_ERROR_LAUNCH_FAILED) ||
		    (r >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
		     r <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD))
			return (cudart_err)r;
		return 999; /* cudaErrorUnknown */
	}
}

REMAT_EXPORT cudart_err cudaFree(void *p);
REMAT_EXPORT cudart_err cudaMalloc(void **p, size_t n);
REMAT_EXPORT cudart_err cudaMallocAsync(void **p, size_t n, CUstream s);
REMAT_EXPORT cudart_err cudaFreeAsync(void *p, CUstream s);

/* The runtime makes its primary context current on first use; our
 * allocation must not be the first use, so let the runtime do it. */
static int runtime_context(void)
{
	CUcontext c = NULL;
	if (remat_drv.cuCtxGetCurrent(&c) == CUDA_SUCCESS && c)
		return 0;
	cudafree_fn f = (cudafree_fn)remat_real_next("cudaFree");
	return f ? f(NULL) : -1;
}

cudart_err cudaMalloc(void **p, size_t n)
{
	RUNTIME_REAL(cudaMalloc, cudamalloc_fn);
	if (likely(!remat_session_active) || !p || !managing() || runtime_context() ||
	    captured(0, NULL))
		return real_cudaMalloc(p, n);
	if (n == 0) {
		*p = NULL;
		return CUDART_SUCCESS;
	}
	CUdeviceptr d = 0;
	CUresult r = session_alloc(&d, n, NULL, 0);
	if (r == CUDA_ERROR_NOT_SUPPORTED)
		return real_cudaMalloc(p, n);
	if (r == CUDA_SUCCESS)
		*p = (void *)(uintptr_t)d;
	return to_cudart(r);
}

cudart_err cudaFree(void *p)
{
	RUNTIME_REAL(cudaFree, cudafree_fn);
	CUresult rc;
	if (likely(!remat_session_active) || !p ||
	    !session_free((CUdeviceptr)(uintptr_t)p, NULL, 0, &rc))
		return real_cudaFree(p);
	return to_cudart(rc);
}

cudart_err cudaMallocAsync(void **p, size_t n, CUstream s)
{
	RUNTIME_REAL(cudaMallocAsync, cudamallocasync_fn);
	if (likely(!remat_session_active) || !p || !managing() || runtime_context() ||
	    captured(1, s))
		return real_cudaMallocAsync(p, n, s);
	if (n == 0) {
		*p = NULL;
		return CUDART_SUCCESS;
	}
	CUdeviceptr d = 0;
	CUresult r = session_alloc(&d, n, s, 1);
	if (r == CUDA_ERROR_NOT_SUPPORTED)
		return real_cudaMallocAsync(p, n, s);
	if (r == CUDA_SUCCESS)
		*p = (void *)(uintptr_t)d;
	return to_cudart(r);
}

cudart_err cudaFreeAsync(void *p, CUstream s)
{
	RUNTIME_REAL(cudaFreeAsync, cudafreeasync_fn);
	CUresult rc;
	if (likely(!remat_session_active) || !p ||
	    !session_free((CUdeviceptr)(uintptr_t)p, s, 1, &rc))
		return real_cudaFreeAsync(p, s);
	return to_cudart(rc);
}

/* ---- driver ------------------------------------------------------------- */

typedef CUresult (*memalloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*memfree_fn)(CUdeviceptr);
typedef CUresult (*memallocasync_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*memfreeasync_fn)(CUdeviceptr, CUstream);

REMAT_INLINE CUresult mem_alloc(struct remat_hook *h, int door, CUdeviceptr *p, size_t n)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (likely(!remat_session_active) || !p || !n || !managing() || captured(0, NULL))
		return ((memalloc_fn)real)(p, n);
	CUresult r = session_alloc(p, n, NULL, 0);
	return r == CUDA_ERROR_NOT_SUPPORTED ? ((memalloc_fn)real)(p, n) : r;
}

REMAT_INLINE CUresult mem_free(struct remat_hook *h, int door, CUdeviceptr p)
{
	void *real = remat_door_real(h, door);
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult rc;
	if (likely(!remat_session_active) || !session_free(p, NULL, 0, &rc))
		return ((memfree_fn)real)(p);
	return rc;
}

REMAT_INLINE CUresult mem_alloc_async(struct remat_hook *h, int door, CUdeviceptr *p, size_t n,
                                      CUstream s)
{
	void *real = remat_door_real(h, door);
	int pt = h->per_thread;
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (likely(!remat_session_active) || !p || !n || !managing() ||
	    captured(1, remat_stream(s, pt)))
		return ((memallocasync_fn)real)(p, n, s);
	CUresult r = session_alloc(p, n, remat_stream(s, pt), 1);
	return r == CUDA_ERROR_NOT_SUPPORTED ? ((memallocasync_fn)real)(p, n, s) : r;
}

REMAT_INLINE CUresult mem_free_async(struct remat_hook *h, int door, CUdeviceptr p, CUstream s)
{
	void *real = remat_door_real(h, door);
	int pt = h->per_thread;
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult rc;
	if (likely(!remat_session_active) || !session_free(p, remat_stream(s, pt), 1, &rc))
		return ((memfreeasync_fn)real)(p, s);
	return rc;
}

REMAT_DOORS(cuMemAlloc_v2, "cuMemAlloc", 0, 3020, (CUdeviceptr * p, size_t n), mem_alloc, p, n);
REMAT_DOORS(cuMemFree_v2, "cuMemFree", 0, 3020, (CUdeviceptr p), mem_free, p);
REMAT_DOORS(cuMemAllocAsync, "cuMemAllocAsync", 0, 0, (CUdeviceptr * p, size_t n, CUstream s),
            mem_alloc_async, p, n, s);
REMAT_DOORS(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 1, 0, (CUdeviceptr * p, size_t n, CUstream s),
            mem_alloc_async, p, n, s);
REMAT_DOORS(cuMemFreeAsync, "cuMemFreeAsync", 0, 0, (CUdeviceptr p, CUstream s), mem_free_async, p,
            s);
REMAT_DOORS(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 1, 0, (CUdeviceptr p, CUstream s),
            mem_free_async, p, s);
