/*
 * pointer.c — cuPointerGetAttribute(s): what a device address is.  Host
 * memory is never registered with the simulated device, so host pointers
 * are "not a CUDA pointer".
 */
#include "driver.h"

#include <string.h>

/* Writes one attribute of the device (or pinned host, when host) range
 * [base, base+size). */
static CUresult attr(void *data, CUpointer_attribute a, CUdeviceptr p, uintptr_t base, size_t size,
                     bool host)
{
	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = (CUcontext)&sim_primary;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)(uintptr_t)p;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = p;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned *)data = 1;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = (CUdeviceptr)base;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = size;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = (unsigned long long)base;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE; /* not simulated */
	}
}

/* What p is: device memory (1), pinned host memory (2), or unknown (0). */
static int range_of(CUdeviceptr p, uintptr_t *base, size_t *size)
{
	if (dev_addr((uintptr_t)p))
		return alloc_range_of((uintptr_t)p, base, size) ||
		       vmm_range_of((uintptr_t)p, base, size);
	return pinned_range_of((uintptr_t)p, base, size) ? 2 : 0;
}

static CUresult get_one(void *data, CUpointer_attribute a, CUdeviceptr p)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current_query(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (data == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	uintptr_t base;
	size_t size;
	int kind = range_of(p, &base, &size);
	if (kind == 0)
		return CUDA_ERROR_INVALID_VALUE;
	return attr(data, a, p, base, size, kind == 2);
}

EXPORT CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                                              CUdeviceptr ptr)
{
	cuPointerGetAttribute_params p = {data, attribute, ptr};
	API_CALL(cuPointerGetAttribute, &p, get_one(data, attribute, ptr));
}

/* The value an attribute reads as when it does not apply. */
static CUresult zero(void *data, CUpointer_attribute a)
{
	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = NULL;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = -2;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = NULL;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		*(CUdeviceptr *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		*(size_t *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
		*(unsigned long long *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(void **)data = NULL;
		break;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		return CUDA_ERROR_INVALID_VALUE;
	default:
		if ((int)a <= 0 || a > CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE)
			return CUDA_ERROR_INVALID_VALUE;
		*(unsigned *)data = 0;
	}
	return CUDA_SUCCESS;
}

/* Unlike the single query, an unknown pointer is not an error here, and
 * attributes that do not apply (a device pointer's host address) read as
 * zero. */
static CUresult get_many(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr p)
{
	struct sim_ctx *ctx;
	CUresult r = ctx_current_query(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (n == 0 || attrs == NULL || data == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	uintptr_t base = 0;
	size_t size = 0;
	int kind = range_of(p, &base, &size);
	for (unsigned i = 0; i < n; i++) {
		if (data[i] == NULL)
			return CUDA_ERROR_INVALID_VALUE;
		if (!kind || attr(data[i], attrs[i], p, base, size, kind == 2) != CUDA_SUCCESS) {
			r = zero(data[i], attrs[i]);
			if (r != CUDA_SUCCESS)
				return r;
		}
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
                                               CUpointer_attribute *attributes, void **data,
                                               CUdeviceptr ptr)
{
	cuPointerGetAttributes_params p = {numAttributes, attributes, data, ptr};
	API_CALL(cuPointerGetAttributes, &p, get_many(numAttributes, attributes, data, ptr));
}
