/*
 * real.c — the real driver and runtime behind libremat.  The driver is
 * opened with dlopen("libcuda.so.1") at first use, never linked: a process
 * that never touches CUDA never loads it because of us.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "remat.h"

struct remat_driver remat_drv;
void *remat_libcuda;

/* Set by init.c when the constructor rejected a REMAT_* value: printed at
 * the first CUDA call (the constructor itself prints nothing). */
extern void remat_flush_pending_message(void);

static void *driver_handle(void)
{
	void *h = __atomic_load_n(&remat_libcuda, __ATOMIC_ACQUIRE);
	if (h)
		return h;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (h)
		__atomic_store_n(&remat_libcuda, h, __ATOMIC_RELEASE);
	return h;
}

void *remat_real_driver_symbol(const char *name)
{
	remat_flush_pending_message();
	void *h = driver_handle();
	return h ? remat_real_dlsym(h, name) : NULL;
}

void *remat_real_next(const char *name)
{
	remat_flush_pending_message();
	return remat_real_dlsym(RTLD_NEXT, name);
}

int remat_real_resolve(void)
{
	if (!driver_handle()) {
		remat_warn("cannot load libcuda.so.1 (%s); libremat passes through", dlerror());
		return -1;
	}
	int missing = 0;
#define GET(field, name)                                                                           \
	do {                                                                                       \
		*(void **)&remat_drv.field = remat_real_dlsym(remat_libcuda, name);                \
		if (!remat_drv.field) {                                                            \
			remat_log(REMAT_LOG_INFO, "driver lacks %s", name);                        \
			missing++;                                                                 \
		}                                                                                  \
	} while (0)
	GET(cuInit, "cuInit");
	GET(cuCtxGetCurrent, "cuCtxGetCurrent");
	GET(cuCtxGetDevice, "cuCtxGetDevice");
	GET(cuCtxSynchronize, "cuCtxSynchronize");
	GET(cuDeviceGetName, "cuDeviceGetName");
	GET(cuDeviceTotalMem, "cuDeviceTotalMem_v2");
	GET(cuDeviceGetAttribute, "cuDeviceGetAttribute");
	GET(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
	GET(cuMemAddressReserve, "cuMemAddressReserve");
	GET(cuMemAddressFree, "cuMemAddressFree");
	GET(cuMemCreate, "cuMemCreate");
	GET(cuMemRelease, "cuMemRelease");
	GET(cuMemMap, "cuMemMap");
	GET(cuMemUnmap, "cuMemUnmap");
	GET(cuMemSetAccess, "cuMemSetAccess");
	GET(cuEventCreate, "cuEventCreate");
	GET(cuEventRecord, "cuEventRecord");
	GET(cuEventQuery, "cuEventQuery");
	GET(cuEventSynchronize, "cuEventSynchronize");
	GET(cuStreamWaitEvent, "cuStreamWaitEvent");
	GET(cuStreamSynchronize, "cuStreamSynchronize");
	GET(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
	GET(cuMemsetD8, "cuMemsetD8_v2");
	GET(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
	GET(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
	GET(cuMemsetD8Async, "cuMemsetD8Async");
	GET(cuMemsetD16Async, "cuMemsetD16Async");
	GET(cuMemsetD32Async, "cuMemsetD32Async");
	GET(cuLaunchKernelEx, "cuLaunchKernelEx");
	GET(cuFuncGetName, "cuFuncGetName");
	GET(cuKernelGetName, "cuKernelGetName");
	GET(cuFuncGetParamInfo, "cuFuncGetParamInfo");
	GET(cuKernelGetParamInfo, "cuKernelGetParamInfo");
	GET(cuPointerGetAttribute, "cuPointerGetAttribute");
	GET(cuModuleLoadData, "cuModuleLoadData");
	GET(cuModuleGetFunction, "cuModuleGetFunction");
	GET(cuLaunchKernel, "cuLaunchKernel");
	GET(cuMemAlloc, "cuMemAlloc_v2");
	GET(cuMemFree, "cuMemFree_v2");
	GET(cuGetProcAddress, "cuGetProcAddress_v2");
#undef GET
	/* Without these the allocator and the profiler cannot work at all. */
	if (!remat_drv.cuCtxGetDevice || !remat_drv.cuCtxSynchronize || !remat_drv.cuMemCreate ||
	    !remat_drv.cuMemMap || !remat_drv.cuMemAddressReserve || !remat_drv.cuEventRecord ||
	    !remat_drv.cuMemcpyDtoH || !remat_drv.cuCtxGetCurrent) {
		remat_warn("the driver lacks %d entry points libremat needs; passing through",
		           missing);
		return -1;
	}
	return 0;
}
