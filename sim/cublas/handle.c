/*
 * handle.c — the cuBLAS handle and library queries: create/destroy,
 * stream, math mode, workspace, versions, status names and strings.
 */
#include "cublas_int.h"

#include <library_types.h>
#include <stdint.h>
#include <stdlib.h>

CUBLAS_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
	if (handle == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	cublasStatus_t s = cublas_setup();
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublas_bind();
	if (s != CUBLAS_STATUS_SUCCESS)
		return s;
	struct cublasContext *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return CUBLAS_STATUS_ALLOC_FAILED;
	h->math_mode = CUBLAS_DEFAULT_MATH;
	*handle = h;
	return CUBLAS_STATUS_SUCCESS;
}

CUBLAS_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	free(handle);
	return CUBLAS_STATUS_SUCCESS;
}

CUBLAS_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	handle->stream = (CUstream)stream;
	return CUBLAS_STATUS_SUCCESS;
}

CUBLAS_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (stream == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*stream = (cudaStream_t)handle->stream;
	return CUBLAS_STATUS_SUCCESS;
}

/* The mode is kept and reported; fp32 GEMMs compute in fp32 whatever it
 * allows (TF32 is a permission, not a promise). */
CUBLAS_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	unsigned base =
	    (unsigned)mode & ~(unsigned)CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
	if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_TENSOR_OP_MATH &&
	    base != CUBLAS_PEDANTIC_MATH && base != CUBLAS_TF32_TENSOR_OP_MATH &&
	    base != CUBLAS_FP32_EMULATED_BF16X9_MATH &&
	    base != CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->math_mode = mode;
	return CUBLAS_STATUS_SUCCESS;
}

CUBLAS_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (mode == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*mode = handle->math_mode;
	return CUBLAS_STATUS_SUCCESS;
}

/* Kept for the split-K GEMMs (splitk.c): a counter and partial sums.  As
 * with the real library, the caller must not use it for anything else or
 * share it between streams while GEMMs run. */
CUBLAS_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                                   size_t bytes)
{
	if (handle == NULL)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	/* The real library wants the workspace 256-byte aligned. */
	if ((workspace == NULL && bytes != 0) || ((uintptr_t)workspace & 255u))
		return CUBLAS_STATUS_INVALID_VALUE;
	handle->workspace = workspace;
	handle->workspace_bytes = bytes;
	return CUBLAS_STATUS_SUCCESS;
}

CUBLAS_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
	(void)handle;
	if (version == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	*version = CUBLAS_VERSION;
	return CUBLAS_STATUS_SUCCESS;
}

CUBLAS_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
	if (value == NULL)
		return CUBLAS_STATUS_INVALID_VALUE;
	switch (type) {
	case MAJOR_VERSION:
		*value = CUBLAS_VER_MAJOR;
		return CUBLAS_STATUS_SUCCESS;
	case MINOR_VERSION:
		*value = CUBLAS_VER_MINOR;
		return CUBLAS_STATUS_SUCCESS;
	case PATCH_LEVEL:
		*value = CUBLAS_VER_PATCH;
		return CUBLAS_STATUS_SUCCESS;
	}
	return CUBLAS_STATUS_INVALID_VALUE;
}

CUBLAS_EXPORT size_t cublasGetCudartVersion(void)
{
	return CUDART_VERSION;
}

static const struct {
	cublasStatus_t status;
	const char *name, *text;
} statuses[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "the operation completed successfully"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED",
     "the library was not initialized"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an invalid numeric value was used as an argument"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "an absent device architectural feature is required"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR",
     "an access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED",
     "the GPU program failed to execute"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED",
     "the functionality requested is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR",
     "error detected trying to check the license"},
};

CUBLAS_EXPORT const char *cublasGetStatusName(cublasStatus_t status)
{
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
		if (statuses[i].status == status)
			return statuses[i].name;
	return "CUBLAS_STATUS_UNKNOWN";
}

CUBLAS_EXPORT const char *cublasGetStatusString(cublasStatus_t status)
{
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
		if (statuses[i].status == status)
			return statuses[i].text;
	return "unknown status";
}
