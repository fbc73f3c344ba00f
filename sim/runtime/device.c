/*
 * device.c — devices and versions: counting, selecting, properties,
 * attributes, synchronize and reset.
 */
#include <stddef.h>
#include <string.h>
#include "rt.h"

RT_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	cudaGetDeviceCount_v3020_params p = {count};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaGetDeviceCount_v3020), &p, NULL, RT_NO_CONTEXT);
	if (!count)
		return rt_exit(&c, cudaErrorInvalidValue);
	*count = e == cudaSuccess ? rt.ndevs : 0;
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGetDevice(int *device)
{
	cudaGetDevice_v3020_params p = {device};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaGetDevice_v3020), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && !device)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		*device = rt_current_device();
	return rt_exit(&c, e);
}

/* Since CUDA 12 cudaSetDevice also initializes the device's primary
 * context, so errors surface here rather than at the next call. */
RT_EXPORT cudaError_t cudaSetDevice(int device)
{
	cudaSetDevice_v3020_params p = {device};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaSetDevice_v3020), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && (device < 0 || device >= rt.ndevs))
		e = cudaErrorInvalidDevice;
	if (e == cudaSuccess) {
		rt_set_current_device(device);
		e = rt_bind_context(device);
	}
	return rt_exit(&c, e);
}

/* The flags of the current device's primary context, as the driver keeps
 * them (they also apply to a context already in use, since CUDA 11).
 * cudaDeviceMapHost is implicit in the runtime and always reported. */
RT_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
	cudaSetDeviceFlags_v3020_params p = {flags};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaSetDeviceFlags_v3020), &p, NULL, RT_NO_CONTEXT);
	unsigned known = cudaDeviceScheduleMask | cudaDeviceMapHost | cudaDeviceLmemResizeToMax |
	                 cudaDeviceSyncMemops;
	unsigned sched = flags & cudaDeviceScheduleMask;
	if (e == cudaSuccess &&
	    ((flags & ~known) || sched == 3 || sched > cudaDeviceScheduleBlockingSync))
		e = cudaErrorInvalidValue;
	CUdevice d;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuDeviceGet, &d, rt_current_device()));
	if (e == cudaSuccess)
		e = rt_check(DRV(cuDevicePrimaryCtxSetFlags, d, flags | cudaDeviceMapHost));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int *flags)
{
	cudaGetDeviceFlags_v7000_params p = {flags};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaGetDeviceFlags_v7000), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && !flags)
		e = cudaErrorInvalidValue;
	CUdevice d;
	unsigned f = 0;
	int active = 0;
	if (e == cudaSuccess)
		e = rt_check(DRV(cuDeviceGet, &d, rt_current_device()));
	if (e == cudaSuccess)
		e = rt_check(DRV(cuDevicePrimaryCtxGetState, d, &f, &active));
	if (e == cudaSuccess)
		*flags = f | cudaDeviceMapHost;
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	cudaDeviceGetAttribute_v5000_params p = {value, attr, device};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaDeviceGetAttribute_v5000), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && !value)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess && (device < 0 || device >= rt.ndevs))
		e = cudaErrorInvalidDevice;
	/* cudaDeviceAttr numbers are the driver's CUdevice_attribute numbers. */
	if (e == cudaSuccess)
		e = rt_check(DRV(cuDeviceGetAttribute, value, (CUdevice_attribute)attr, device));
	return rt_exit(&c, e);
}

/* int fields of cudaDeviceProp and the attribute that fills each. */
static const struct {
	size_t offset;
	enum cudaDeviceAttr attr;
} int_props[] = {
#define P(field, attr)                                                                             \
	{                                                                                          \
		offsetof(struct cudaDeviceProp, field), attr                                       \
	}
    P(regsPerBlock, cudaDevAttrMaxRegistersPerBlock),
    P(warpSize, cudaDevAttrWarpSize),
    P(maxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock),
    P(maxThreadsDim[0], cudaDevAttrMaxBlockDimX),
    P(maxThreadsDim[1], cudaDevAttrMaxBlockDimY),
    P(maxThreadsDim[2], cudaDevAttrMaxBlockDimZ),
    P(maxGridSize[0], cudaDevAttrMaxGridDimX),
    P(maxGridSize[1], cudaDevAttrMaxGridDimY),
    P(maxGridSize[2], cudaDevAttrMaxGridDimZ),
    P(major, cudaDevAttrComputeCapabilityMajor),
    P(minor, cudaDevAttrComputeCapabilityMinor),
    P(multiProcessorCount, cudaDevAttrMultiProcessorCount),
    P(integrated, cudaDevAttrIntegrated),
    P(canMapHostMemory, cudaDevAttrCanMapHostMemory),
    P(concurrentKernels, cudaDevAttrConcurrentKernels),
    P(ECCEnabled, cudaDevAttrEccEnabled),
    P(pciBusID, cudaDevAttrPciBusId),
    P(pciDeviceID, cudaDevAttrPciDeviceId),
    P(pciDomainID, cudaDevAttrPciDomainId),
    P(tccDriver, cudaDevAttrTccDriver),
    P(asyncEngineCount, cudaDevAttrAsyncEngineCount),
    P(unifiedAddressing, cudaDevAttrUnifiedAddressing),
    P(memoryBusWidth, cudaDevAttrGlobalMemoryBusWidth),
    P(l2CacheSize, cudaDevAttrL2CacheSize),
    P(persistingL2CacheMaxSize, cudaDevAttrMaxPersistingL2CacheSize),
    P(maxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerMultiProcessor),
    P(streamPrioritiesSupported, cudaDevAttrStreamPrioritiesSupported),
    P(globalL1CacheSupported, cudaDevAttrGlobalL1CacheSupported),
    P(localL1CacheSupported, cudaDevAttrLocalL1CacheSupported),
    P(regsPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor),
    P(managedMemory, cudaDevAttrManagedMemory),
    P(isMultiGpuBoard, cudaDevAttrIsMultiGpuBoard),
    P(multiGpuBoardGroupID, cudaDevAttrMultiGpuBoardGroupID),
    P(pageableMemoryAccess, cudaDevAttrPageableMemoryAccess),
    P(concurrentManagedAccess, cudaDevAttrConcurrentManagedAccess),
    P(computePreemptionSupported, cudaDevAttrComputePreemptionSupported),
    P(canUseHostPointerForRegisteredMem, cudaDevAttrCanUseHostPointerForRegisteredMem),
    P(cooperativeLaunch, cudaDevAttrCooperativeLaunch),
    P(maxBlocksPerMultiProcessor, cudaDevAttrMaxBlocksPerMultiprocessor),
    P(memoryPoolsSupported, cudaDevAttrMemoryPoolsSupported),
    P(clusterLaunch, cudaDevAttrClusterLaunch),
    P(hostNumaId, cudaDevAttrHostNumaId),
#undef P
};

static const struct {
	size_t offset;
	enum cudaDeviceAttr attr;
} size_props[] = {
    {offsetof(struct cudaDeviceProp, sharedMemPerBlock), cudaDevAttrMaxSharedMemoryPerBlock},
    {offsetof(struct cudaDeviceProp, totalConstMem), cudaDevAttrTotalConstantMemory},
    {offsetof(struct cudaDeviceProp, memPitch), cudaDevAttrMaxPitch},
    {offsetof(struct cudaDeviceProp, textureAlignment), cudaDevAttrTextureAlignment},
    {offsetof(struct cudaDeviceProp, sharedMemPerMultiprocessor),
     cudaDevAttrMaxSharedMemoryPerMultiprocessor},
    {offsetof(struct cudaDeviceProp, sharedMemPerBlockOptin),
     cudaDevAttrMaxSharedMemoryPerBlockOptin},
    {offsetof(struct cudaDeviceProp, reservedSharedMemPerBlock),
     cudaDevAttrReservedSharedMemoryPerBlock},
};

/* Fills the CUDA 13 cudaDeviceProp from the driver.  An attribute the
 * driver does not know leaves its field 0, as for a device lacking it. */
static cudaError_t fill_props(struct cudaDeviceProp *prop, int device)
{
	memset(prop, 0, sizeof(*prop));
	CUdevice d;
	cudaError_t e = rt_check(DRV(cuDeviceGet, &d, device));
	if (e == cudaSuccess)
		e = rt_check(DRV(cuDeviceGetName, prop->name, (int)sizeof(prop->name), d));
	if (e == cudaSuccess)
		e = rt_check(DRV(cuDeviceTotalMem, &prop->totalGlobalMem, d));
	if (e != cudaSuccess)
		return e;
	CUuuid uuid;
	if (DRV(cuDeviceGetUuid, &uuid, d) == CUDA_SUCCESS)
		memcpy(&prop->uuid, &uuid, sizeof(prop->uuid));
	for (size_t i = 0; i < sizeof(int_props) / sizeof(int_props[0]); i++) {
		int v = 0;
		if (DRV(cuDeviceGetAttribute, &v, (CUdevice_attribute)int_props[i].attr, d) ==
		    CUDA_SUCCESS)
			memcpy((char *)prop + int_props[i].offset, &v, sizeof(v));
	}
	for (size_t i = 0; i < sizeof(size_props) / sizeof(size_props[0]); i++) {
		int v = 0;
		if (DRV(cuDeviceGetAttribute, &v, (CUdevice_attribute)size_props[i].attr, d) ==
		    CUDA_SUCCESS) {
			size_t s = (size_t)v;
			memcpy((char *)prop + size_props[i].offset, &s, sizeof(s));
		}
	}
	return cudaSuccess;
}

RT_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	cudaGetDeviceProperties_v12000_params p = {prop, device};
	struct rt_call c;
	cudaError_t e =
	    rt_enter(&c, RT_FN(cudaGetDeviceProperties_v12000), &p, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess && !prop)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess && (device < 0 || device >= rt.ndevs))
		e = cudaErrorInvalidDevice;
	if (e == cudaSuccess)
		e = fill_props(prop, device);
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	cudaDriverGetVersion_v3020_params p = {driverVersion};
	struct rt_call c;
	rt_enter(&c, RT_FN(cudaDriverGetVersion_v3020), &p, NULL, RT_NO_CONTEXT);
	if (!driverVersion)
		return rt_exit(&c, cudaErrorInvalidValue);
	/* Without a driver the answer is 0, not an error. */
	*driverVersion = 0;
	if (rt.drv.cuDriverGetVersion && DRV(cuDriverGetVersion, driverVersion) != CUDA_SUCCESS)
		*driverVersion = 0;
	return rt_exit(&c, cudaSuccess);
}

RT_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	cudaRuntimeGetVersion_v3020_params p = {runtimeVersion};
	struct rt_call c;
	rt_enter(&c, RT_FN(cudaRuntimeGetVersion_v3020), &p, NULL, RT_NO_CONTEXT);
	if (!runtimeVersion)
		return rt_exit(&c, cudaErrorInvalidValue);
	*runtimeVersion = RT_VERSION;
	return rt_exit(&c, cudaSuccess);
}

RT_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaDeviceSynchronize_v3020), NULL, NULL, RT_CONTEXT);
	if (e == cudaSuccess)
		e = rt_check(DRV(cuCtxSynchronize_v2, NULL));
	return rt_exit(&c, e);
}

/* Destroys the current device's primary context and everything in it, and
 * clears its sticky error: the only way to recover from a device fault. */
RT_EXPORT cudaError_t cudaDeviceReset(void)
{
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaDeviceReset_v3020), NULL, NULL, RT_NO_CONTEXT);
	if (e == cudaSuccess) {
		int dev = rt_current_device();
		rt_forget_context(dev);
		rt_clear_sticky(dev);
	}
	return rt_exit(&c, e);
}
