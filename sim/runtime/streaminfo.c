/*
 * streaminfo.c — what a stream is (priority, flags, id, device), the
 * priority range, and stream callbacks.
 */
#include <stdlib.h>
#include "rt.h"

/* One getter: a stream in, one value out through the driver. */
#define STREAM_GETTER(fn, ver, ptsz_ver, type, drv, cast)                                          \
	static cudaError_t fn##_impl(int pt, CUpti_CallbackId cbid, const char *name,              \
	                             cudaStream_t s, type *out)                                    \
	{                                                                                          \
		fn##_##ver##_params p = {s, out};                                                  \
		struct rt_call c;                                                                  \
		cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);                    \
		if (e == cudaSuccess && !out)                                                      \
			e = cudaErrorInvalidValue;                                                 \
		if (e == cudaSuccess)                                                              \
			e = rt_check(RT_DRV(pt, drv, (CUstream)s, (cast *)out));                   \
		return rt_exit(&c, e);                                                             \
	}                                                                                          \
	RT_EXPORT cudaError_t fn(cudaStream_t s, type *out)                                        \
	{                                                                                          \
		return fn##_impl(0, RT_FN(fn##_##ver), s, out);                                    \
	}                                                                                          \
	RT_EXPORT cudaError_t fn##_ptsz(cudaStream_t s, type *out)                                 \
	{                                                                                          \
		return fn##_impl(1, RT_FN(fn##_ptsz_##ptsz_ver), s, out);                          \
	}

/* The _ptsz params structs have the plain ones' layout. */
STREAM_GETTER(cudaStreamGetPriority, v5050, v7000, int, cuStreamGetPriority, int)
STREAM_GETTER(cudaStreamGetFlags, v5050, v7000, unsigned int, cuStreamGetFlags, unsigned int)
STREAM_GETTER(cudaStreamGetId, v12000, v12000, unsigned long long, cuStreamGetId,
              unsigned long long)
STREAM_GETTER(cudaStreamGetDevice, v12080, v12080, int, cuStreamGetDevice, CUdevice)

RT_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	cudaDeviceGetStreamPriorityRange_v5050_params p = {leastPriority, greatestPriority};
	struct rt_call c;
	cudaError_t e =
	    rt_enter(&c, RT_FN(cudaDeviceGetStreamPriorityRange_v5050), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuCtxGetStreamPriorityRange, leastPriority, greatestPriority));
	return rt_exit(&c, e);
}

/* The driver calls back with a CUresult; the runtime's callback wants a
 * cudaError_t, so each registration carries a small trampoline record. */
struct callback {
	cudaStreamCallback_t fn;
	void *data;
};

static void CUDA_CB trampoline(CUstream stream, CUresult status, void *arg)
{
	struct callback cb = *(struct callback *)arg;
	free(arg);
	cb.fn((cudaStream_t)stream, rt_from_cu(status), cb.data);
}

static cudaError_t add_callback(int pt, CUpti_CallbackId cbid, const char *name,
                                cudaStream_t stream, cudaStreamCallback_t fn, void *data,
                                unsigned flags)
{
	cudaStreamAddCallback_v5000_params p = {stream, fn, data, flags};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	/* flags is reserved and must be 0. */
	if (e == cudaSuccess && (!fn || flags))
		e = cudaErrorInvalidValue;
	struct callback *cb = NULL;
	if (e == cudaSuccess && !(cb = malloc(sizeof(*cb))))
		e = cudaErrorMemoryAllocation;
	if (e == cudaSuccess) {
		*cb = (struct callback){fn, data};
		e = rt_check(RT_DRV(pt, cuStreamAddCallback, (CUstream)stream, trampoline, cb, 0));
		if (e != cudaSuccess)
			free(cb);
	}
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                            void *userData, unsigned int flags)
{
	return add_callback(0, RT_FN(cudaStreamAddCallback_v5000), stream, callback, userData,
	                    flags);
}

RT_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                                 void *userData, unsigned int flags)
{
	return add_callback(1, RT_FN(cudaStreamAddCallback_ptsz_v7000), stream, callback, userData,
	                    flags);
}
