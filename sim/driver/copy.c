/*
 * copy.c — cuMemcpy* and cuMemset* as stream ops.
 *
 * CUDA's host synchronization rules, by kind of host buffer:
 *  - from pageable host memory: the source is copied to a staging buffer
 *    before the call returns (the caller may reuse it at once), the device
 *    write happens in stream order;
 *  - into pageable host memory: the call returns once the copy completed;
 *  - pinned host memory (pinned.c): the asynchronous forms are fully
 *    asynchronous (no staging: the buffer is read when the copy runs), the
 *    synchronous ones return when the copy completed;
 *  - device to device and memsets: asynchronous to the host.
 * The synchronous forms use the legacy default stream (the per-thread one
 * for the _ptds entry points).  Device ranges must be live when the call is
 * made (CUDA_ERROR_INVALID_VALUE otherwise); if they are freed or unmapped
 * before the op runs, the op faults.
 */
#include "driver.h"

#include <cupti_activity.h>
#include <stdlib.h>
#include <string.h>

enum dir { ANY, HTOD, DTOH, DTOD };

static CUresult do_copy(void *dst, const void *src, size_t n, CUstream hs, bool per_thread,
                        enum dir want, bool sync)
{
	struct sim_stream *s;
	CUresult r = stream_current(hs, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (dst == NULL || src == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (n == 0)
		return CUDA_SUCCESS;
	bool ddev = dev_addr((uintptr_t)dst), sdev = dev_addr((uintptr_t)src);
	int kind = ddev
	               ? (sdev ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOD)
	               : (sdev ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
	if ((want == HTOD && kind != CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) ||
	    (want == DTOH && kind != CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) ||
	    (want == DTOD && kind != CUPTI_ACTIVITY_MEMCPY_KIND_DTOD))
		return CUDA_ERROR_INVALID_VALUE;
	if (ddev && !mem_range_ok((uintptr_t)dst, n, true))
		return CUDA_ERROR_INVALID_VALUE;
	if (sdev && !mem_range_ok((uintptr_t)src, n, false))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_op *op = op_new(OP_MEMCPY);
	op->u.copy.dst = dst;
	op->u.copy.src = src;
	op->u.copy.bytes = n;
	op->u.copy.kind = kind;
	bool src_pinned = !sdev && pinned_range(src, n), dst_pinned = !ddev && pinned_range(dst, n);
	op->u.copy.pinned_host = src_pinned || dst_pinned;
	/* Fault injection: the N-th copy between device and page-locked host
	 * memory is refused at the call (transient, nothing poisoned). */
	static _Atomic uint64_t pinned_copies;
	if (sim_cfg.fail_copy && (ddev != sdev) && op->u.copy.pinned_host &&
	    atomic_fetch_add(&pinned_copies, 1) + 1 == sim_cfg.fail_copy) {
		atomic_fetch_add(&sim_stats.faults_injected, 1);
		op_free(op);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!sdev && !src_pinned) {
		op->u.copy.staging = malloc(n);
		if (op->u.copy.staging == NULL) {
			op_free(op);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		memcpy(op->u.copy.staging, src, n);
	}
	if (capture_take(s, op, &r))
		return r;
	bool wait = (!ddev && !dst_pinned) || (sync && (!ddev || src_pinned));
	struct sim_marker *m = stream_enqueue(s, op, wait);
	if (m) {
		marker_wait(m);
		marker_unref(m);
	}
	return CUDA_SUCCESS;
}

#define D(x) ((void *)(uintptr_t)(x))

/* Entry points, legacy and per-thread-stream variants. */

EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	cuMemcpy_params p = {dst, src, ByteCount};
	API_CALL(cuMemcpy, &p, do_copy(D(dst), D(src), ByteCount, NULL, false, ANY, true));
}

CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
EXPORT CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	cuMemcpy_ptds_params p = {dst, src, ByteCount};
	API_CALL(cuMemcpy_ptds, &p, do_copy(D(dst), D(src), ByteCount, NULL, true, ANY, true));
}

EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                      CUstream hStream)
{
	cuMemcpyAsync_params p = {dst, src, ByteCount, hStream};
	API_CALL(cuMemcpyAsync, &p, do_copy(D(dst), D(src), ByteCount, hStream, false, ANY, false));
}

CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                    CUstream hStream);
EXPORT CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                           CUstream hStream)
{
	cuMemcpyAsync_ptsz_params p = {dst, src, ByteCount, hStream};
	API_CALL(cuMemcpyAsync_ptsz, &p,
	         do_copy(D(dst), D(src), ByteCount, hStream, true, ANY, false));
}

EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
                                        size_t ByteCount)
{
	cuMemcpyHtoD_v2_params p = {dstDevice, srcHost, ByteCount};
	API_CALL(cuMemcpyHtoD_v2, &p,
	         do_copy(D(dstDevice), srcHost, ByteCount, NULL, false, HTOD, true));
}

CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
                                             size_t ByteCount)
{
	cuMemcpyHtoD_v2_ptds_params p = {dstDevice, srcHost, ByteCount};
	API_CALL(cuMemcpyHtoD_v2_ptds, &p,
	         do_copy(D(dstDevice), srcHost, ByteCount, NULL, true, HTOD, true));
}

EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	cuMemcpyDtoH_v2_params p = {dstHost, srcDevice, ByteCount};
	API_CALL(cuMemcpyDtoH_v2, &p,
	         do_copy(dstHost, D(srcDevice), ByteCount, NULL, false, DTOH, true));
}

CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	cuMemcpyDtoH_v2_ptds_params p = {dstHost, srcDevice, ByteCount};
	API_CALL(cuMemcpyDtoH_v2_ptds, &p,
	         do_copy(dstHost, D(srcDevice), ByteCount, NULL, true, DTOH, true));
}

EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                        size_t ByteCount)
{
	cuMemcpyDtoD_v2_params p = {dstDevice, srcDevice, ByteCount};
	API_CALL(cuMemcpyDtoD_v2, &p,
	         do_copy(D(dstDevice), D(srcDevice), ByteCount, NULL, false, DTOD, true));
}

CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                      size_t ByteCount);
EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                             size_t ByteCount)
{
	cuMemcpyDtoD_v2_ptds_params p = {dstDevice, srcDevice, ByteCount};
	API_CALL(cuMemcpyDtoD_v2_ptds, &p,
	         do_copy(D(dstDevice), D(srcDevice), ByteCount, NULL, true, DTOD, true));
}

EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
                                             size_t ByteCount, CUstream hStream)
{
	cuMemcpyHtoDAsync_v2_params p = {dstDevice, srcHost, ByteCount, hStream};
	API_CALL(cuMemcpyHtoDAsync_v2, &p,
	         do_copy(D(dstDevice), srcHost, ByteCount, hStream, false, HTOD, false));
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                           size_t ByteCount, CUstream hStream);
EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                                  size_t ByteCount, CUstream hStream)
{
	cuMemcpyHtoDAsync_v2_ptsz_params p = {dstDevice, srcHost, ByteCount, hStream};
	API_CALL(cuMemcpyHtoDAsync_v2_ptsz, &p,
	         do_copy(D(dstDevice), srcHost, ByteCount, hStream, true, HTOD, false));
}

EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                             CUstream hStream)
{
	cuMemcpyDtoHAsync_v2_params p = {dstHost, srcDevice, ByteCount, hStream};
	API_CALL(cuMemcpyDtoHAsync_v2, &p,
	         do_copy(dstHost, D(srcDevice), ByteCount, hStream, false, DTOH, false));
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream);
EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice,
                                                  size_t ByteCount, CUstream hStream)
{
	cuMemcpyDtoHAsync_v2_ptsz_params p = {dstHost, srcDevice, ByteCount, hStream};
	API_CALL(cuMemcpyDtoHAsync_v2_ptsz, &p,
	         do_copy(dstHost, D(srcDevice), ByteCount, hStream, true, DTOH, false));
}

EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                             size_t ByteCount, CUstream hStream)
{
	cuMemcpyDtoDAsync_v2_params p = {dstDevice, srcDevice, ByteCount, hStream};
	API_CALL(cuMemcpyDtoDAsync_v2, &p,
	         do_copy(D(dstDevice), D(srcDevice), ByteCount, hStream, false, DTOD, false));
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                           size_t ByteCount, CUstream hStream);
EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                  size_t ByteCount, CUstream hStream)
{
	cuMemcpyDtoDAsync_v2_ptsz_params p = {dstDevice, srcDevice, ByteCount, hStream};
	API_CALL(cuMemcpyDtoDAsync_v2_ptsz, &p,
	         do_copy(D(dstDevice), D(srcDevice), ByteCount, hStream, true, DTOD, false));
}

/* ---- memset ------------------------------------------------------------ */

static CUresult do_set(CUdeviceptr dst, uint32_t value, unsigned elem, size_t count, CUstream hs,
                       bool per_thread)
{
	struct sim_stream *s;
	CUresult r = stream_current(hs, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if ((uintptr_t)dst % elem)
		return CUDA_ERROR_INVALID_VALUE;
	if (count == 0)
		return CUDA_SUCCESS;
	if (count > SIZE_MAX / elem || !mem_range_ok((uintptr_t)dst, count * elem, true))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_op *op = op_new(OP_MEMSET);
	op->u.set.dst = D(dst);
	op->u.set.value = value;
	op->u.set.elem = elem;
	op->u.set.count = count;
	if (capture_take(s, op, &r))
		return r;
	stream_enqueue(s, op, false);
	return CUDA_SUCCESS;
}

/* One synchronous and one asynchronous memset per element width, each in
 * a legacy and a per-thread-stream variant. */
#define MEMSET_ENTRIES(W, T, ELEM)                                                                 \
	EXPORT CUresult CUDAAPI cuMemsetD##W##_v2(CUdeviceptr dstDevice, T v, size_t N)            \
	{                                                                                          \
		cuMemsetD##W##_v2_params p = {dstDevice, v, N};                                    \
		API_CALL(cuMemsetD##W##_v2, &p, do_set(dstDevice, v, ELEM, N, NULL, false));       \
	}                                                                                          \
	CUresult CUDAAPI cuMemsetD##W##_v2_ptds(CUdeviceptr dstDevice, T v, size_t N);             \
	EXPORT CUresult CUDAAPI cuMemsetD##W##_v2_ptds(CUdeviceptr dstDevice, T v, size_t N)       \
	{                                                                                          \
		cuMemsetD##W##_v2_ptds_params p = {dstDevice, v, N};                               \
		API_CALL(cuMemsetD##W##_v2_ptds, &p, do_set(dstDevice, v, ELEM, N, NULL, true));   \
	}                                                                                          \
	EXPORT CUresult CUDAAPI cuMemsetD##W##Async(CUdeviceptr dstDevice, T v, size_t N,          \
	                                            CUstream hStream)                              \
	{                                                                                          \
		cuMemsetD##W##Async_params p = {dstDevice, v, N, hStream};                         \
		API_CALL(cuMemsetD##W##Async, &p, do_set(dstDevice, v, ELEM, N, hStream, false));  \
	}                                                                                          \
	CUresult CUDAAPI cuMemsetD##W##Async_ptsz(CUdeviceptr dstDevice, T v, size_t N,            \
	                                          CUstream hStream);                               \
	EXPORT CUresult CUDAAPI cuMemsetD##W##Async_ptsz(CUdeviceptr dstDevice, T v, size_t N,     \
	                                                 CUstream hStream)                         \
	{                                                                                          \
		cuMemsetD##W##Async_ptsz_params p = {dstDevice, v, N, hStream};                    \
		API_CALL(cuMemsetD##W##Async_ptsz, &p,                                             \
		         do_set(dstDevice, v, ELEM, N, hStream, true));                            \
	}

MEMSET_ENTRIES(8, unsigned char, 1)
MEMSET_ENTRIES(16, unsigned short, 2)
MEMSET_ENTRIES(32, unsigned int, 4)
