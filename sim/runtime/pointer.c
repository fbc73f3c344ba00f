/*
 * pointer.c — cudaPointerGetAttributes: what a pointer is, from the
 * driver's cuPointerGetAttributes.  Since CUDA 11 a pointer the driver
 * does not know is not an error: it is cudaMemoryTypeUnregistered.
 */
#include <string.h>
#include "rt.h"

RT_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                               const void *ptr)
{
	cudaPointerGetAttributes_v4000_params p = {attributes, ptr};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, RT_FN(cudaPointerGetAttributes_v4000), &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !attributes)
		e = cudaErrorInvalidValue;
	if (e != cudaSuccess)
		return rt_exit(&c, e);
	unsigned type = 0, managed = 0;
	int ordinal = -2;
	CUdeviceptr dev = 0;
	CUpointer_attribute which[] = {
	    CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
	    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_POINTER};
	void *data[] = {&type, &managed, &ordinal, &dev};
	e = rt_check(DRV(cuPointerGetAttributes, 4, which, data, (CUdeviceptr)(uintptr_t)ptr));
	if (e == cudaSuccess) {
		memset(attributes, 0, sizeof(*attributes));
		if (managed)
			attributes->type = cudaMemoryTypeManaged;
		else if (type == CU_MEMORYTYPE_DEVICE)
			attributes->type = cudaMemoryTypeDevice;
		else if (type == CU_MEMORYTYPE_HOST)
			attributes->type = cudaMemoryTypeHost;
		else
			attributes->type = cudaMemoryTypeUnregistered;
		attributes->device = attributes->type == cudaMemoryTypeUnregistered ? -2 : ordinal;
		attributes->devicePointer = (void *)(uintptr_t)dev;
		/* Device memory has no host address; host memory is its own. */
		attributes->hostPointer =
		    attributes->type == cudaMemoryTypeHost ? (void *)(uintptr_t)ptr : NULL;
	}
	return rt_exit(&c, e);
}
