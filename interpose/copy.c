/*
 * copy.c — cuMemcpy* and cuMemset* (1-D, sync and async, legacy and
 * per-thread).  They are ops of the iteration like kernels: they count in
 * the period, and a profiled copy says which buffers it moves between.
 */
#include "procaddr.h"

/* The body shared by every wrapper: CALL is the real call expression. */
#define OP_BODY(real, CALL, ...)                                                                   \
	do {                                                                                       \
		if (unlikely(!(real)))                                                             \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		if (likely(!remat_session_watch))                                                  \
			return CALL;                                                               \
		struct remat_op op = {__VA_ARGS__};                                                \
		CUresult r_ = session_op_begin(&op);                                               \
		if (r_ != CUDA_SUCCESS)                                                            \
			return r_;                                                                 \
		r_ = CALL;                                                                         \
		session_op_end(&op, r_);                                                           \
		return r_;                                                                         \
	} while (0)

#define TWO_DOORS(id, base, pt, minver, RET, PARAMS, IMPL_ARGS)                                    \
	extern struct remat_hook remat_hook_##id;                                                  \
	REMAT_EXPORT RET id PARAMS;                                                                \
	RET id PARAMS                                                                              \
	{                                                                                          \
		return IMPL_ARGS(remat_hook_exp_real(&remat_hook_##id), #id, pt);                  \
	}                                                                                          \
	static RET pa_##id PARAMS                                                                  \
	{                                                                                          \
		return IMPL_ARGS(remat_hook_pa_real(&remat_hook_##id), remat_hook_##id.pa_via,     \
		                 pt);                                                              \
	}                                                                                          \
	REMAT_HOOK(id, base, pt, minver, id, pa_##id)

/* ---- copies ------------------------------------------------------------- */

typedef CUresult (*cpy_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*cpy_async_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*htod_async_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*dtoh_async_fn)(void *, CUdeviceptr, size_t, CUstream);

REMAT_INLINE CUresult copy(void *real, const char *via, int pt, CUdeviceptr d, CUdeviceptr s,
                           size_t n, int async, CUstream st, int kind)
{
	CUstream rs = async ? st : NULL;
	OP_BODY(real, async ? ((cpy_async_fn)real)(d, s, n, st) : ((cpy_fn)real)(d, s, n),
	        .kind = REMAT_OP_MEMCPY, .via = via, .stream = remat_stream(rs, pt), .dst = d,
	        .src = s, .bytes = n, .copy = kind);
}

REMAT_INLINE CUresult htod(void *real, const char *via, int pt, CUdeviceptr d, const void *s,
                           size_t n, int async, CUstream st)
{
	CUstream rs = async ? st : NULL;
	OP_BODY(real, async ? ((htod_async_fn)real)(d, s, n, st) : ((htod_fn)real)(d, s, n),
	        .kind = REMAT_OP_MEMCPY, .via = via, .stream = remat_stream(rs, pt), .dst = d,
	        .src = (uint64_t)(uintptr_t)s, .bytes = n, .copy = REMAT_COPY_HTOD);
}

REMAT_INLINE CUresult dtoh(void *real, const char *via, int pt, void *d, CUdeviceptr s, size_t n,
                           int async, CUstream st)
{
	CUstream rs = async ? st : NULL;
	OP_BODY(real, async ? ((dtoh_async_fn)real)(d, s, n, st) : ((dtoh_fn)real)(d, s, n),
	        .kind = REMAT_OP_MEMCPY, .via = via, .stream = remat_stream(rs, pt),
	        .dst = (uint64_t)(uintptr_t)d, .src = s, .bytes = n, .copy = REMAT_COPY_DTOH);
}

#define CPY(real, via, pt)   copy(real, via, pt, d, s, n, 0, NULL, REMAT_COPY_INFER)
#define CPYA(real, via, pt)  copy(real, via, pt, d, s, n, 1, st, REMAT_COPY_INFER)
#define DTOD(real, via, pt)  copy(real, via, pt, d, s, n, 0, NULL, REMAT_COPY_DTOD)
#define DTODA(real, via, pt) copy(real, via, pt, d, s, n, 1, st, REMAT_COPY_DTOD)
#define HTOD(real, via, pt)  htod(real, via, pt, d, s, n, 0, NULL)
#define HTODA(real, via, pt) htod(real, via, pt, d, s, n, 1, st)
#define DTOH(real, via, pt)  dtoh(real, via, pt, d, s, n, 0, NULL)
#define DTOHA(real, via, pt) dtoh(real, via, pt, d, s, n, 1, st)

TWO_DOORS(cuMemcpy, "cuMemcpy", 0, 0, CUresult, (CUdeviceptr d, CUdeviceptr s, size_t n), CPY);
TWO_DOORS(cuMemcpy_ptds, "cuMemcpy", 1, 0, CUresult, (CUdeviceptr d, CUdeviceptr s, size_t n), CPY);
TWO_DOORS(cuMemcpyAsync, "cuMemcpyAsync", 0, 0, CUresult,
          (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), CPYA);
TWO_DOORS(cuMemcpyAsync_ptsz, "cuMemcpyAsync", 1, 0, CUresult,
          (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), CPYA);
TWO_DOORS(cuMemcpyDtoD_v2, "cuMemcpyDtoD", 0, 3020, CUresult,
          (CUdeviceptr d, CUdeviceptr s, size_t n), DTOD);
TWO_DOORS(cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD", 1, 3020, CUresult,
          (CUdeviceptr d, CUdeviceptr s, size_t n), DTOD);
TWO_DOORS(cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync", 0, 3020, CUresult,
          (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), DTODA);
TWO_DOORS(cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync", 1, 3020, CUresult,
          (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), DTODA);
TWO_DOORS(cuMemcpyHtoD_v2, "cuMemcpyHtoD", 0, 3020, CUresult,
          (CUdeviceptr d, const void *s, size_t n), HTOD);
TWO_DOORS(cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD", 1, 3020, CUresult,
          (CUdeviceptr d, const void *s, size_t n), HTOD);
TWO_DOORS(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync", 0, 3020, CUresult,
          (CUdeviceptr d, const void *s, size_t n, CUstream st), HTODA);
TWO_DOORS(cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync", 1, 3020, CUresult,
          (CUdeviceptr d, const void *s, size_t n, CUstream st), HTODA);
TWO_DOORS(cuMemcpyDtoH_v2, "cuMemcpyDtoH", 0, 3020, CUresult, (void *d, CUdeviceptr s, size_t n),
          DTOH);
TWO_DOORS(cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH", 1, 3020, CUresult,
          (void *d, CUdeviceptr s, size_t n), DTOH);
TWO_DOORS(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync", 0, 3020, CUresult,
          (void *d, CUdeviceptr s, size_t n, CUstream st), DTOHA);
TWO_DOORS(cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync", 1, 3020, CUresult,
          (void *d, CUdeviceptr s, size_t n, CUstream st), DTOHA);

/* ---- memsets ------------------------------------------------------------ */

typedef CUresult (*set8_fn)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*set16_fn)(CUdeviceptr, unsigned short, size_t);
typedef CUresult (*set32_fn)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*set8a_fn)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*set16a_fn)(CUdeviceptr, unsigned short, size_t, CUstream);
typedef CUresult (*set32a_fn)(CUdeviceptr, unsigned int, size_t, CUstream);

REMAT_INLINE CUresult memset_op(void *real, const char *via, int pt, CUdeviceptr d, unsigned v,
                                size_t n, unsigned elem, int async, CUstream st)
{
	CUstream rs = async ? st : NULL;
#define SET_CALL                                                                                   \
	(elem == 1   ? (async ? ((set8a_fn)real)(d, (unsigned char)v, n, st)                       \
	                      : ((set8_fn)real)(d, (unsigned char)v, n))                           \
	 : elem == 2 ? (async ? ((set16a_fn)real)(d, (unsigned short)v, n, st)                     \
	                      : ((set16_fn)real)(d, (unsigned short)v, n))                         \
	             : (async ? ((set32a_fn)real)(d, v, n, st) : ((set32_fn)real)(d, v, n)))
	OP_BODY(real, SET_CALL, .kind = REMAT_OP_MEMSET, .via = via, .stream = remat_stream(rs, pt),
	        .dst = d, .bytes = n * elem, .value = v, .elem = elem);
#undef SET_CALL
}

#define SET8(real, via, pt)   memset_op(real, via, pt, d, v, n, 1, 0, NULL)
#define SET16(real, via, pt)  memset_op(real, via, pt, d, v, n, 2, 0, NULL)
#define SET32(real, via, pt)  memset_op(real, via, pt, d, v, n, 4, 0, NULL)
#define SET8A(real, via, pt)  memset_op(real, via, pt, d, v, n, 1, 1, st)
#define SET16A(real, via, pt) memset_op(real, via, pt, d, v, n, 2, 1, st)
#define SET32A(real, via, pt) memset_op(real, via, pt, d, v, n, 4, 1, st)

TWO_DOORS(cuMemsetD8_v2, "cuMemsetD8", 0, 3020, CUresult,
          (CUdeviceptr d, unsigned char v, size_t n), SET8);
TWO_DOORS(cuMemsetD8_v2_ptds, "cuMemsetD8", 1, 3020, CUresult,
          (CUdeviceptr d, unsigned char v, size_t n), SET8);
TWO_DOORS(cuMemsetD16_v2, "cuMemsetD16", 0, 3020, CUresult,
          (CUdeviceptr d, unsigned short v, size_t n), SET16);
TWO_DOORS(cuMemsetD16_v2_ptds, "cuMemsetD16", 1, 3020, CUresult,
          (CUdeviceptr d, unsigned short v, size_t n), SET16);
TWO_DOORS(cuMemsetD32_v2, "cuMemsetD32", 0, 3020, CUresult,
          (CUdeviceptr d, unsigned int v, size_t n), SET32);
TWO_DOORS(cuMemsetD32_v2_ptds, "cuMemsetD32", 1, 3020, CUresult,
          (CUdeviceptr d, unsigned int v, size_t n), SET32);
TWO_DOORS(cuMemsetD8Async, "cuMemsetD8Async", 0, 0, CUresult,
          (CUdeviceptr d, unsigned char v, size_t n, CUstream st), SET8A);
TWO_DOORS(cuMemsetD8Async_ptsz, "cuMemsetD8Async", 1, 0, CUresult,
          (CUdeviceptr d, unsigned char v, size_t n, CUstream st), SET8A);
TWO_DOORS(cuMemsetD16Async, "cuMemsetD16Async", 0, 0, CUresult,
          (CUdeviceptr d, unsigned short v, size_t n, CUstream st), SET16A);
TWO_DOORS(cuMemsetD16Async_ptsz, "cuMemsetD16Async", 1, 0, CUresult,
          (CUdeviceptr d, unsigned short v, size_t n, CUstream st), SET16A);
TWO_DOORS(cuMemsetD32Async, "cuMemsetD32Async", 0, 0, CUresult,
          (CUdeviceptr d, unsigned int v, size_t n, CUstream st), SET32A);
TWO_DOORS(cuMemsetD32Async_ptsz, "cuMemsetD32Async", 1, 0, CUresult,
          (CUdeviceptr d, unsigned int v, size_t n, CUstream st), SET32A);
