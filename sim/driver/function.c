/*
 * function.c — what can be asked of a CUfunction or CUkernel: its name,
 * its parameter layout (what libremat records launches with), and its
 * attributes.
 */
#include "module.h"

struct sim_func *func_lookup(const void *h)
{
	if (handle_is(h, H_FUNC))
		return (struct sim_func *)h;
	if (handle_is(h, H_KERNEL))
		return ((struct sim_func *)h)->as_function;
	return NULL;
}

static CUresult kernel_of(CUkernel h, struct sim_func **out)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!handle_is(h, H_KERNEL))
		return CUDA_ERROR_INVALID_HANDLE;
	*out = ((struct sim_func *)h)->as_function;
	return CUDA_SUCCESS;
}

static CUresult function_of(CUfunction h, struct sim_func **out)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	struct sim_func *f = func_lookup(h);
	if (f == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = f;
	return CUDA_SUCCESS;
}

static CUresult kernel_function(CUfunction *out, CUkernel h)
{
	struct sim_func *f;
	struct sim_ctx *ctx;
	CUresult r = kernel_of(h, &f);
	if (r == CUDA_SUCCESS)
		r = ctx_current(&ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUfunction)f;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	cuKernelGetFunction_params p = {pFunc, kernel};
	API_CALL(cuKernelGetFunction, &p, kernel_function(pFunc, kernel));
}

static CUresult name_of(const char **name, struct sim_func *f, CUresult r)
{
	if (r != CUDA_SUCCESS)
		return r;
	if (name == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*name = f->k->name;
	return CUDA_SUCCESS;
}

static CUresult func_name(const char **name, CUfunction h)
{
	struct sim_func *f = NULL;
	CUresult r = function_of(h, &f);
	return name_of(name, f, r);
}

static CUresult kernel_name(const char **name, CUkernel h)
{
	struct sim_func *f = NULL;
	CUresult r = kernel_of(h, &f);
	return name_of(name, f, r);
}

EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
	cuFuncGetName_params p = {name, hfunc};
	API_CALL(cuFuncGetName, &p, func_name(name, hfunc));
}

EXPORT CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
	cuKernelGetName_params p = {name, hfunc};
	API_CALL(cuKernelGetName, &p, kernel_name(name, hfunc));
}

static CUresult param_info(struct sim_func *f, CUresult r, size_t i, size_t *off, size_t *size)
{
	if (r != CUDA_SUCCESS)
		return r;
	if (i >= f->k->nparams || (off == NULL && size == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	if (off)
		*off = f->k->param_offset[i];
	if (size)
		*size = f->k->param_size[i];
	return CUDA_SUCCESS;
}

static CUresult func_param(CUfunction h, size_t i, size_t *off, size_t *size)
{
	struct sim_func *f = NULL;
	CUresult r = function_of(h, &f);
	return param_info(f, r, i, off, size);
}

static CUresult kernel_param(CUkernel h, size_t i, size_t *off, size_t *size)
{
	struct sim_func *f = NULL;
	CUresult r = kernel_of(h, &f);
	return param_info(f, r, i, off, size);
}

EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
                                           size_t *paramSize)
{
	cuFuncGetParamInfo_params p = {func, paramIndex, paramOffset, paramSize};
	API_CALL(cuFuncGetParamInfo, &p, func_param(func, paramIndex, paramOffset, paramSize));
}

EXPORT CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
                                             size_t *paramOffset, size_t *paramSize)
{
	cuKernelGetParamInfo_params p = {kernel, paramIndex, paramOffset, paramSize};
	API_CALL(cuKernelGetParamInfo, &p,
	         kernel_param(kernel, paramIndex, paramOffset, paramSize));
}

/* Attributes of a host-compiled kernel: fixed, plausible numbers, except
 * the dynamic shared memory cap, which launches enforce. */
static CUresult attribute(int *v, CUfunction_attribute a, struct sim_func *f, CUresult r)
{
	if (r != CUDA_SUCCESS)
		return r;
	if (v == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		*v = 1024;
		break;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
		*v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
		*v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
		*v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		*v = 32;
		break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
		*v = 90;
		break;
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
		*v = 90;
		break;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		*v = f->non_portable_cluster;
		break;
	case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
		*v = 0;
		break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		*v = f->max_dynamic_smem;
		break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		*v = -1;
		break;
	default:
		if ((int)a < 0 || a >= CU_FUNC_ATTRIBUTE_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		*v = 0;
	}
	return CUDA_SUCCESS;
}

static CUresult func_attr(int *v, CUfunction_attribute a, CUfunction h)
{
	struct sim_func *f = NULL;
	CUresult r = function_of(h, &f);
	return attribute(v, a, f, r);
}

static CUresult kernel_attr(int *v, CUfunction_attribute a, CUkernel h, CUdevice d)
{
	struct sim_func *f = NULL;
	CUresult r = kernel_of(h, &f);
	if (r == CUDA_SUCCESS && d != 0)
		r = CUDA_ERROR_INVALID_DEVICE;
	return attribute(v, a, f, r);
}

EXPORT CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	cuFuncGetAttribute_params p = {pi, attrib, hfunc};
	API_CALL(cuFuncGetAttribute, &p, func_attr(pi, attrib, hfunc));
}

EXPORT CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
                                             CUdevice dev)
{
	cuKernelGetAttribute_params p = {pi, attrib, kernel, dev};
	API_CALL(cuKernelGetAttribute, &p, kernel_attr(pi, attrib, kernel, dev));
}

static CUresult set_attribute(struct sim_func *f, CUresult r, CUfunction_attribute a, int v)
{
	if (r != CUDA_SUCCESS)
		return r;
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		if (v < 0 || v > MAX_DYNAMIC_SMEM_OPTIN)
			return CUDA_ERROR_INVALID_VALUE;
		f->max_dynamic_smem = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		return v >= -1 && v <= 100 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		if (v != 0 && v != 1)
			return CUDA_ERROR_INVALID_VALUE;
		f->non_portable_cluster = v;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE; /* read-only attribute */
	}
}

static CUresult func_set(CUfunction h, CUfunction_attribute a, int v)
{
	struct sim_func *f = NULL;
	CUresult r = function_of(h, &f);
	return set_attribute(f, r, a, v);
}

static CUresult kernel_set(CUfunction_attribute a, int v, CUkernel h, CUdevice d)
{
	struct sim_func *f = NULL;
	CUresult r = kernel_of(h, &f);
	if (r == CUDA_SUCCESS && d != 0)
		r = CUDA_ERROR_INVALID_DEVICE;
	return set_attribute(f, r, a, v);
}

EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	cuFuncSetAttribute_params p = {hfunc, attrib, value};
	API_CALL(cuFuncSetAttribute, &p, func_set(hfunc, attrib, value));
}

EXPORT CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
                                             CUdevice dev)
{
	cuKernelSetAttribute_params p = {attrib, val, kernel, dev};
	API_CALL(cuKernelSetAttribute, &p, kernel_set(attrib, val, kernel, dev));
}

static CUresult func_module(CUmodule *out, CUfunction h)
{
	struct sim_func *f = NULL;
	CUresult r = function_of(h, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	/* A library's functions have no module of their own here. */
	if (f->mod->library)
		return CUDA_ERROR_NOT_SUPPORTED;
	*out = (CUmodule)f->mod;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
	cuFuncGetModule_params p = {hmod, hfunc};
	API_CALL(cuFuncGetModule, &p, func_module(hmod, hfunc));
}

static CUresult kernel_library(CUlibrary *out, CUkernel h)
{
	struct sim_func *f = NULL;
	CUresult r = kernel_of(h, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*out = (CUlibrary)f->mod;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
	cuKernelGetLibrary_params p = {pLib, kernel};
	API_CALL(cuKernelGetLibrary, &p, kernel_library(pLib, kernel));
}
