/*
 * entrypoint.c — cudaGetDriverEntryPoint[ByVersion]: the driver's own
 * cuGetProcAddress answers, so a pointer obtained here is the one a
 * caller of cuGetProcAddress_v2 gets (and an interposer's wrapper, if one
 * hooks cuGetProcAddress).
 */
#include "rt.h"

/* cudaEnable* flags equal CU_GET_PROC_ADDRESS_*; the _ptsz entry points
 * (code built with per-thread default streams) turn "default" into
 * per-thread. */
static cuuint64_t driver_flags(int pt, unsigned long long flags)
{
	if (pt && flags == cudaEnableDefault)
		return CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	return (cuuint64_t)flags;
}

static cudaError_t lookup(int pt, const char *symbol, void **funcPtr, unsigned cudaVersion,
                          unsigned long long flags, enum cudaDriverEntryPointQueryResult *status)
{
	if (!symbol || !funcPtr)
		return cudaErrorInvalidValue;
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	*funcPtr = NULL;
	CUresult r =
	    rt.get_proc_address(symbol, funcPtr, (int)cudaVersion, driver_flags(pt, flags), &st);
	if (status)
		*status = (enum cudaDriverEntryPointQueryResult)st;
	/* A symbol the driver lacks is an answer (NULL and a status), not an
	 * error of the call. */
	if (r == CUDA_ERROR_NOT_FOUND)
		return cudaSuccess;
	return rt_check(r);
}

static cudaError_t by_version(int pt, CUpti_CallbackId cbid, const char *name, const char *symbol,
                              void **funcPtr, unsigned cudaVersion, unsigned long long flags,
                              enum cudaDriverEntryPointQueryResult *status)
{
	cudaGetDriverEntryPointByVersion_v12050_params p = {symbol, funcPtr, cudaVersion, flags,
	                                                    status};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess)
		e = lookup(pt, symbol, funcPtr, cudaVersion, flags, status);
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return by_version(0, RT_FN(cudaGetDriverEntryPointByVersion_v12050), symbol, funcPtr,
	                  cudaVersion, flags, driverStatus);
}

RT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return by_version(1, RT_FN(cudaGetDriverEntryPointByVersion_ptsz_v12050), symbol, funcPtr,
	                  cudaVersion, flags, driverStatus);
}

/* Without a version the runtime asks for the one it was built for. */
static cudaError_t unversioned(int pt, CUpti_CallbackId cbid, const char *name, const char *symbol,
                               void **funcPtr, unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *status)
{
	cudaGetDriverEntryPoint_v11030_params p = {symbol, funcPtr, flags, status};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess)
		e = lookup(pt, symbol, funcPtr, RT_VERSION, flags, status);
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                                              unsigned long long flags,
                                              enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return unversioned(0, RT_FN(cudaGetDriverEntryPoint_v11030), symbol, funcPtr, flags,
	                   driverStatus);
}

RT_EXPORT cudaError_t
cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return unversioned(1, RT_FN(cudaGetDriverEntryPoint_ptsz_v11030), symbol, funcPtr, flags,
	                   driverStatus);
}
