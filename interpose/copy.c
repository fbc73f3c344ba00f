/*
 * copy.c — cuMemcpy* and cuMemset* (1-D, sync and async, legacy and
 * per-thread).  They are ops of the iteration like kernels: they count in
 * the period, and a profiled copy says which buffers it moves between.
 */
#include "hooks.h"

/* ---- copies ------------------------------------------------------------- */

typedef CUresult (*cpy_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*cpy_async_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*htod_async_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*dtoh_async_fn)(void *, CUdeviceptr, size_t, CUstream);

REMAT_INLINE CUresult copy(struct remat_hook *h, int door, CUdeviceptr d, CUdeviceptr s, size_t n,
                           int async, CUstream st, int kind)
{
	void *real = remat_door_real(h, door);
	CUstream rs = async ? st : NULL;
	REMAT_OP_BODY(real, async ? ((cpy_async_fn)real)(d, s, n, st) : ((cpy_fn)real)(d, s, n),
	              .kind = REMAT_OP_MEMCPY, .via = remat_door_via(h, door),
	              .stream = remat_stream(rs, h->per_thread), .dst = d, .src = s, .bytes = n,
	              .copy = kind);
}

REMAT_INLINE CUresult htod(struct remat_hook *h, int door, CUdeviceptr d, const void *s, size_t n,
                           int async, CUstream st)
{
	void *real = remat_door_real(h, door);
	CUstream rs = async ? st : NULL;
	REMAT_OP_BODY(real, async ? ((htod_async_fn)real)(d, s, n, st) : ((htod_fn)real)(d, s, n),
	              .kind = REMAT_OP_MEMCPY, .via = remat_door_via(h, door),
	              .stream = remat_stream(rs, h->per_thread), .dst = d,
	              .src = (uint64_t)(uintptr_t)s, .bytes = n, .copy = REMAT_COPY_HTOD);
}

REMAT_INLINE CUresult dtoh(struct remat_hook *h, int door, void *d, CUdeviceptr s, size_t n,
                           int async, CUstream st)
{
	void *real = remat_door_real(h, door);
	CUstream rs = async ? st : NULL;
	REMAT_OP_BODY(real, async ? ((dtoh_async_fn)real)(d, s, n, st) : ((dtoh_fn)real)(d, s, n),
	              .kind = REMAT_OP_MEMCPY, .via = remat_door_via(h, door),
	              .stream = remat_stream(rs, h->per_thread), .dst = (uint64_t)(uintptr_t)d,
	              .src = s, .bytes = n, .copy = REMAT_COPY_DTOH);
}

REMAT_DOORS(cuMemcpy, "cuMemcpy", 0, 0, (CUdeviceptr d, CUdeviceptr s, size_t n), copy, d, s, n, 0,
            NULL, REMAT_COPY_INFER);
REMAT_DOORS(cuMemcpy_ptds, "cuMemcpy", 1, 0, (CUdeviceptr d, CUdeviceptr s, size_t n), copy, d, s,
            n, 0, NULL, REMAT_COPY_INFER);
REMAT_DOORS(cuMemcpyAsync, "cuMemcpyAsync", 0, 0,
            (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), copy, d, s, n, 1, st,
            REMAT_COPY_INFER);
REMAT_DOORS(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 1, 0,
            (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), copy, d, s, n, 1, st,
            REMAT_COPY_INFER);
REMAT_DOORS(cuMemcpyDtoD_v2, "cuMemcpyDtoD", 0, 3020, (CUdeviceptr d, CUdeviceptr s, size_t n),
            copy, d, s, n, 0, NULL, REMAT_COPY_DTOD);
REMAT_DOORS(cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD", 1, 3020, (CUdeviceptr d, CUdeviceptr s, size_t n),
            copy, d, s, n, 0, NULL, REMAT_COPY_DTOD);
REMAT_DOORS(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 0, 3020,
            (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), copy, d, s, n, 1, st,
            REMAT_COPY_DTOD);
REMAT_DOORS(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 1, 3020,
            (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), copy, d, s, n, 1, st,
            REMAT_COPY_DTOD);
REMAT_DOORS(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 0, 3020, (CUdeviceptr d, const void *s, size_t n),
            htod, d, s, n, 0, NULL);
REMAT_DOORS(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", 1, 3020, (CUdeviceptr d, const void *s, size_t n),
            htod, d, s, n, 0, NULL);
REMAT_DOORS(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 0, 3020,
            (CUdeviceptr d, const void *s, size_t n, CUstream st), htod, d, s, n, 1, st);
REMAT_DOORS(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 1, 3020,
            (CUdeviceptr d, const void *s, size_t n, CUstream st), htod, d, s, n, 1, st);
REMAT_DOORS(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 0, 3020, (void *d, CUdeviceptr s, size_t n), dtoh, d,
            s, n, 0, NULL);
REMAT_DOORS(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", 1, 3020, (void *d, CUdeviceptr s, size_t n), dtoh,
            d, s, n, 0, NULL);
REMAT_DOORS(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 0, 3020,
            (void *d, CUdeviceptr s, size_t n, CUstream st), dtoh, d, s, n, 1, st);
REMAT_DOORS(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 1, 3020,
            (void *d, CUdeviceptr s, size_t n, CUstream st), dtoh, d, s, n, 1, st);

/* ---- memsets ------------------------------------------------------------ */

typedef CUresult (*set8_fn)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*set16_fn)(CUdeviceptr, unsigned short, size_t);
typedef CUresult (*set32_fn)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*set8a_fn)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*set16a_fn)(CUdeviceptr, unsigned short, size_t, CUstream);
typedef CUresult (*set32a_fn)(CUdeviceptr, unsigned int, size_t, CUstream);

REMAT_INLINE CUresult memset_op(struct remat_hook *h, int door, CUdeviceptr d, unsigned v, size_t n,
                                unsigned elem, int async, CUstream st)
{
	void *real = remat_door_real(h, door);
	CUstream rs = async ? st : NULL;
#define SET_CALL                                                                                   \
	(elem == 1   ? (async ? ((set8a_fn)real)(d, (unsigned char)v, n, st)                       \
	                      : ((set8_fn)real)(d, (unsigned char)v, n))                           \
	 : elem == 2 ? (async ? ((set16a_fn)real)(d, (unsigned short)v, n, st)                     \
	                      : ((set16_fn)real)(d, (unsigned short)v, n))                         \
	             : (async ? ((set32a_fn)real)(d, v, n, st) : ((set32_fn)real)(d, v, n)))
	REMAT_OP_BODY(real, SET_CALL, .kind = REMAT_OP_MEMSET, .via = remat_door_via(h, door),
	              .stream = remat_stream(rs, h->per_thread), .dst = d, .bytes = n * elem,
	              .value = v, .elem = elem);
#undef SET_CALL
}

REMAT_DOORS(cuMemsetD8_v2, "cuMemsetD8", 0, 3020, (CUdeviceptr d, unsigned char v, size_t n),
            memset_op, d, v, n, 1, 0, NULL);
REMAT_DOORS(cuMemsetD8_v2_ptds, "cuMemsetD8", 1, 3020, (CUdeviceptr d, unsigned char v, size_t n),
            memset_op, d, v, n, 1, 0, NULL);
REMAT_DOORS(cuMemsetD16_v2, "cuMemsetD16", 0, 3020, (CUdeviceptr d, unsigned short v, size_t n),
            memset_op, d, v, n, 2, 0, NULL);
REMAT_DOORS(cuMemsetD16_v2_ptds, "cuMemsetD16", 1, 3020,
            (CUdeviceptr d, unsigned short v, size_t n), memset_op, d, v, n, 2, 0, NULL);
REMAT_DOORS(cuMemsetD32_v2, "cuMemsetD32", 0, 3020, (CUdeviceptr d, unsigned int v, size_t n),
            memset_op, d, v, n, 4, 0, NULL);
REMAT_DOORS(cuMemsetD32_v2_ptds, "cuMemsetD32", 1, 3020, (CUdeviceptr d, unsigned int v, size_t n),
            memset_op, d, v, n, 4, 0, NULL);
REMAT_DOORS(cuMemsetD8Async, "cuMemsetD8Async", 0, 0,
            (CUdeviceptr d, unsigned char v, size_t n, CUstream st), memset_op, d, v, n, 1, 1, st);
REMAT_DOORS(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 1, 0,
            (CUdeviceptr d, unsigned char v, size_t n, CUstream st), memset_op, d, v, n, 1, 1, st);
REMAT_DOORS(cuMemsetD16Async, "cuMemsetD16Async", 0, 0,
            (CUdeviceptr d, unsigned short v, size_t n, CUstream st), memset_op, d, v, n, 2, 1, st);
REMAT_DOORS(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 1, 0,
            (CUdeviceptr d, unsigned short v, size_t n, CUstream st), memset_op, d, v, n, 2, 1, st);
REMAT_DOORS(cuMemsetD32Async, "cuMemsetD32Async", 0, 0,
            (CUdeviceptr d, unsigned int v, size_t n, CUstream st), memset_op, d, v, n, 4, 1, st);
REMAT_DOORS(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 1, 0,
            (CUdeviceptr d, unsigned int v, size_t n, CUstream st), memset_op, d, v, n, 4, 1, st);
