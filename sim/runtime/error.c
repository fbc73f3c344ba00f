/*
 * error.c — error codes: translation from the driver, the per-thread last
 * error, sticky errors, cudaGetErrorName/String.
 */
#include <stdatomic.h>
#include "rt.h"

/* The runtime keeps the last error per thread; cudaGetLastError clears it.
 * A sticky error (the device faulted inside a kernel) belongs to the
 * context instead: every later call on that device fails with it and
 * cudaGetLastError cannot clear it; only cudaDeviceReset does. */
static __thread cudaError_t tl_last;
static _Atomic cudaError_t sticky[RT_MAX_DEVS];

/* The runtime and driver enums share their numbers (cudaErrorMemoryAllocation
 * = CUDA_ERROR_OUT_OF_MEMORY = 2, ...); codes the runtime has no name for
 * become cudaErrorUnknown.  The few whose meaning differs are mapped. */
cudaError_t rt_from_cu(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return cudaSuccess;
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED:
		return cudaErrorInitializationError;
	case CUDA_ERROR_INVALID_CONTEXT:
		return cudaErrorDeviceUninitialized;
	case CUDA_ERROR_INVALID_IMAGE:
		return cudaErrorInvalidKernelImage;
	case CUDA_ERROR_NOT_FOUND:
		return cudaErrorSymbolNotFound;
	default:
		break;
	}
	for (unsigned i = 0; i < rt_error_text_count; i++)
		if ((int)rt_error_texts[i].code == (int)r)
			return (cudaError_t)r;
	return cudaErrorUnknown;
}

static int is_sticky(cudaError_t e)
{
	switch (e) {
	case cudaErrorIllegalAddress:
	case cudaErrorLaunchTimeout:
	case cudaErrorAssert:
	case cudaErrorHardwareStackError:
	case cudaErrorIllegalInstruction:
	case cudaErrorMisalignedAddress:
	case cudaErrorInvalidAddressSpace:
	case cudaErrorInvalidPc:
	case cudaErrorLaunchFailure:
	case cudaErrorECCUncorrectable:
		return 1;
	default:
		return 0;
	}
}

cudaError_t rt_check(CUresult r)
{
	cudaError_t e = rt_from_cu(r);
	int dev = rt_current_device();
	if (is_sticky(e) && dev >= 0 && dev < RT_MAX_DEVS) {
		cudaError_t none = cudaSuccess;
		atomic_compare_exchange_strong(&sticky[dev], &none, e);
	}
	return e;
}

cudaError_t rt_sticky_error(int dev)
{
	return dev >= 0 && dev < RT_MAX_DEVS ? atomic_load(&sticky[dev]) : cudaSuccess;
}

/* The calling thread's recorded error goes too: it is the device's fault
 * being forgotten. */
void rt_clear_sticky(int dev)
{
	if (dev >= 0 && dev < RT_MAX_DEVS)
		atomic_store(&sticky[dev], cudaSuccess);
	tl_last = cudaSuccess;
}

/* cudaErrorNotReady only answers a query; it is not an error to remember. */
void rt_record_error(cudaError_t err)
{
	if (err != cudaSuccess && err != cudaErrorNotReady)
		tl_last = err;
}

/* Reporting the last error is not a new error: these calls leave it
 * alone instead of recording their own return value. */
static cudaError_t report(CUpti_CallbackId cbid, const char *name, int clear)
{
	struct rt_call c;
	rt_enter(&c, cbid, name, NULL, NULL, RT_NO_CONTEXT);
	cudaError_t e = rt_sticky_error(rt_current_device());
	if (e == cudaSuccess) {
		e = tl_last;
		if (clear)
			tl_last = cudaSuccess;
	}
	c.keep_last_error = 1;
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGetLastError(void)
{
	return report(RT_FN(cudaGetLastError_v3020), 1);
}

RT_EXPORT cudaError_t cudaPeekAtLastError(void)
{
	return report(RT_FN(cudaPeekAtLastError_v3020), 0);
}

static const struct rt_error_text *lookup(cudaError_t e)
{
	for (unsigned i = 0; i < rt_error_text_count; i++)
		if (rt_error_texts[i].code == e)
			return &rt_error_texts[i];
	return NULL;
}

RT_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
	cudaGetErrorName_v6050_params p = {error};
	struct rt_call c;
	rt_enter(&c, RT_FN(cudaGetErrorName_v6050), &p, NULL, RT_NO_CONTEXT);
	const struct rt_error_text *t = lookup(error);
	c.keep_last_error = 1;
	rt_exit(&c, cudaSuccess);
	return t ? t->name : "unrecognized error code";
}

RT_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
	cudaGetErrorString_v3020_params p = {error};
	struct rt_call c;
	rt_enter(&c, RT_FN(cudaGetErrorString_v3020), &p, NULL, RT_NO_CONTEXT);
	const struct rt_error_text *t = lookup(error);
	c.keep_last_error = 1;
	rt_exit(&c, cudaSuccess);
	return t ? t->text : "unrecognized error code";
}
