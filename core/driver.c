/*
 * driver.c — resolving the real driver (driver.h) and the real dlsym.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "driver.h"
#include "log.h"

struct remat_driver remat_drv;
/* The real driver: its dlopen handle, resolved once. */
static struct driver_state {
	void *libcuda;
	pthread_once_t once;
	int status;
} driver = {.once = PTHREAD_ONCE_INIT, .status = -1};

/* glibc's dlsym; hidden (as everything here), so the reference from the
 * dlsym trampoline stays PC-relative. */
void *(*remat_dlsym_next)(void *, const char *);

void remat_dlsym_next_resolve(void)
{
	if (__atomic_load_n(&remat_dlsym_next, __ATOMIC_ACQUIRE))
		return;
	/* dlvsym is not hooked, and RTLD_NEXT from here is glibc's own. */
	void *(*f)(void *, const char *) =
	    (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!f)
		f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	__atomic_store_n(&remat_dlsym_next, f, __ATOMIC_RELEASE);
}

void *remat_real_dlsym(void *handle, const char *name)
{
	remat_dlsym_next_resolve();
	return remat_dlsym_next(handle, name);
}

static void *driver_handle(void)
{
	void *h = __atomic_load_n(&driver.libcuda, __ATOMIC_ACQUIRE);
	if (h)
		return h;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (h)
		__atomic_store_n(&driver.libcuda, h, __ATOMIC_RELEASE);
	return h;
}

/* The first lookups happen at the program's first CUDA call: the moment
 * the constructor's messages are due. */
void *remat_real_driver_symbol(const char *name)
{
	remat_warn_flush();
	void *h = driver_handle();
	return h ? remat_real_dlsym(h, name) : NULL;
}

void *remat_real_next(const char *name)
{
	remat_warn_flush();
	return remat_real_dlsym(RTLD_NEXT, name);
}

static int resolve(void)
{
	if (!driver_handle()) {
		remat_warn("cannot load libcuda.so.1 (%s); libremat passes through", dlerror());
		return -1;
	}
	int missing = 0;
#define GET(field, name)                                                                           \
	do {                                                                                       \
		*(void **)&remat_drv.field = remat_real_dlsym(driver.libcuda, name);               \
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
	GET(cuStreamCreate, "cuStreamCreate");
	GET(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
	GET(cuMemAllocHost, "cuMemAllocHost_v2");
	GET(cuMemFreeHost, "cuMemFreeHost");
	GET(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
	GET(cuEventElapsedTime, "cuEventElapsedTime_v2");
	GET(cuEventDestroy, "cuEventDestroy_v2");
	GET(cuStreamIsCapturing, "cuStreamIsCapturing");
	GET(cuGraphGetNodes, "cuGraphGetNodes");
	GET(cuGraphNodeGetType, "cuGraphNodeGetType");
	GET(cuGraphKernelNodeGetParams, "cuGraphKernelNodeGetParams_v2");
	GET(cuGraphMemcpyNodeGetParams, "cuGraphMemcpyNodeGetParams");
	GET(cuGraphMemsetNodeGetParams, "cuGraphMemsetNodeGetParams");
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

static void init_once(void)
{
	remat_log_open();
	driver.status = resolve();
}

int remat_driver_init(void)
{
	pthread_once(&driver.once, init_once);
	return driver.status;
}
