/*
 * host.c — page-locked host memory: cudaMallocHost, cudaHostAlloc,
 * cudaFreeHost, on the driver's cuMemAllocHost/cuMemHostAlloc/cuMemFreeHost.
 * cudaHostAlloc's flags equal the driver's CU_MEMHOSTALLOC_* flags.
 */
#include "rt.h"

RT_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	cudaMallocHost_v3020_params p = {ptr, size};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaMallocHost_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !ptr)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuMemAllocHost, ptr, size));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	cudaHostAlloc_v3020_params p = {pHost, size, flags};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaHostAlloc_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !pHost)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuMemHostAlloc, pHost, size, flags));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	cudaFreeHost_v3020_params p = {ptr};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaFreeHost_v3020), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && ptr)
		e = rt_check(DRV(cuMemFreeHost, ptr));
	return rt_exit(&c, e);
}
