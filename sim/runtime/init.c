/*
 * init.c — lazy initialization: finding the driver, the per-thread current
 * device and the primary contexts the runtime makes current.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "rt.h"

struct rt_global rt;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[RT_MAX_DEVS]; /* retained on first use, under ctx_lock */

/* The runtime keeps the current device per thread (cudaSetDevice affects
 * only the calling thread) and remembers which context it made current, so
 * that a call does not ask the driver again every time. */
static __thread int tl_device;
static __thread CUcontext tl_bound;

static void resolve(struct rt_driver *d, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult status;
#define RT_RESOLVE_V(base, f)                                                                      \
	if (rt.get_proc_address(#base, (void **)&d->f, RT_VERSION, flags, &status) !=              \
	        CUDA_SUCCESS ||                                                                    \
	    status != CU_GET_PROC_ADDRESS_SUCCESS)                                                 \
		d->f = NULL;
/* #f must stringify here: passed on, cuMemAlloc would expand first. */
#define RT_RESOLVE(f)                                                                              \
	if (rt.get_proc_address(#f, (void **)&d->f, RT_VERSION, flags, &status) != CUDA_SUCCESS || \
	    status != CU_GET_PROC_ADDRESS_SUCCESS)                                                 \
		d->f = NULL;
	RT_DRIVER_FUNCS(RT_RESOLVE, RT_RESOLVE_V)
#undef RT_RESOLVE
#undef RT_RESOLVE_V
}

static void init(void)
{
	rt.init_error = cudaErrorInsufficientDriver;
	rt.libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!rt.libcuda) {
		fprintf(stderr, "libcudart (simcuda): cannot load libcuda.so.1: %s\n", dlerror());
		return;
	}
	rt.get_proc_address =
	    (__typeof__(cuGetProcAddress) *)dlsym(rt.libcuda, "cuGetProcAddress_v2");
	if (!rt.get_proc_address) {
		fprintf(stderr, "libcudart (simcuda): libcuda.so.1 has no cuGetProcAddress_v2\n");
		return;
	}
	resolve(&rt.drv, CU_GET_PROC_ADDRESS_DEFAULT);
	resolve(&rt.drv_ptds, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);

	static const CUuuid uuid = SIMCUDA_EXPORT_UUID;
	const void *table = NULL;
	if (DRV(cuGetExportTable, &table, &uuid) == CUDA_SUCCESS && table &&
	    ((const struct simcuda_export *)table)->size >= sizeof(struct simcuda_export))
		rt.exp = table;

	CUresult r = DRV(cuInit, 0);
	if (r == CUDA_SUCCESS)
		r = DRV(cuDeviceGetCount, &rt.ndevs);
	if (r != CUDA_SUCCESS) {
		rt.init_error = rt_from_cu(r);
		return;
	}
	if (rt.ndevs > RT_MAX_DEVS)
		rt.ndevs = RT_MAX_DEVS;
	rt.init_error = rt.ndevs > 0 ? cudaSuccess : cudaErrorNoDevice;
}

void rt_init_once(void)
{
	pthread_once(&init_once, init);
}

int rt_current_device(void)
{
	return tl_device;
}

void rt_set_current_device(int dev)
{
	tl_device = dev;
}

/* Makes the primary context of dev current on this thread, retaining it
 * on first use as the real runtime does. */
cudaError_t rt_bind_context(int dev)
{
	if (dev < 0 || dev >= rt.ndevs)
		return cudaErrorInvalidDevice;
	pthread_mutex_lock(&ctx_lock);
	CUcontext ctx = primary[dev];
	CUresult r = CUDA_SUCCESS;
	if (!ctx) {
		CUdevice d;
		r = DRV(cuDeviceGet, &d, dev);
		if (r == CUDA_SUCCESS)
			r = DRV(cuDevicePrimaryCtxRetain, &ctx, d);
		if (r == CUDA_SUCCESS)
			primary[dev] = ctx;
	}
	pthread_mutex_unlock(&ctx_lock);
	if (r != CUDA_SUCCESS)
		return rt_check(r);
	if (tl_bound == ctx)
		return cudaSuccess;
	r = DRV(cuCtxSetCurrent, ctx);
	if (r != CUDA_SUCCESS)
		return rt_check(r);
	tl_bound = ctx;
	return cudaSuccess;
}

/* After cudaDeviceReset: the primary context is gone; the next call
 * retains a fresh one.  Other threads notice because their remembered
 * context no longer matches. */
void rt_forget_context(int dev)
{
	pthread_mutex_lock(&ctx_lock);
	CUcontext ctx = primary[dev];
	primary[dev] = NULL;
	pthread_mutex_unlock(&ctx_lock);
	/* Reset destroys the context whatever its retain count; the next
	 * retain creates a new one. */
	CUdevice d;
	if (ctx && DRV(cuDeviceGet, &d, dev) == CUDA_SUCCESS)
		DRV(cuDevicePrimaryCtxReset, d);
	tl_bound = NULL;
}
