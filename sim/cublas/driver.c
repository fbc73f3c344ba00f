/*
 * driver.c — how the simulated cuBLAS reaches the driver: dlopen of
 * libcuda.so.1, cuGetProcAddress_v2 for every function, the GEMM module
 * (both kernels) loaded from the image linked into the library
 * (gemm_image.s).
 */
#include "cublas_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define CUDA_VERSION_ASKED 13000

struct cublas_driver cublas_drv;

/* The simcc module built from gemm.cu, as bytes (gemm_image.s). */
extern const unsigned char cublas_gemm_image[] __attribute__((visibility("hidden")));

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cublasStatus_t setup_status;
static CUcontext primary; /* device 0's, retained for the process */

cublasStatus_t cublas_bind(void)
{
	CUcontext ctx = NULL;
	if (cublas_drv.ctx_get_current(&ctx) != CUDA_SUCCESS)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (ctx == NULL && cublas_drv.ctx_set_current(primary) != CUDA_SUCCESS)
		return CUBLAS_STATUS_NOT_INITIALIZED;
	return CUBLAS_STATUS_SUCCESS;
}

static int resolve(__typeof__(cuGetProcAddress) *gpa, const char *name, void **fn)
{
	CUdriverProcAddressQueryResult found;
	if (gpa(name, fn, CUDA_VERSION_ASKED, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
	        CUDA_SUCCESS ||
	    found != CU_GET_PROC_ADDRESS_SUCCESS || *fn == NULL) {
		fprintf(stderr, "cuBLAS (simcuda): the driver has no %s\n", name);
		return -1;
	}
	return 0;
}

static cublasStatus_t setup(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) {
		fprintf(stderr, "cuBLAS (simcuda): cannot load libcuda.so.1: %s\n", dlerror());
		return CUBLAS_STATUS_NOT_INITIALIZED;
	}
	__typeof__(cuGetProcAddress) *gpa =
	    (__typeof__(cuGetProcAddress) *)dlsym(lib, "cuGetProcAddress_v2");
	if (gpa == NULL) {
		fprintf(stderr, "cuBLAS (simcuda): libcuda.so.1 has no cuGetProcAddress_v2\n");
		return CUBLAS_STATUS_NOT_INITIALIZED;
	}
	struct cublas_driver *d = &cublas_drv;
	if (resolve(gpa, "cuInit", (void **)&d->init) ||
	    resolve(gpa, "cuCtxGetCurrent", (void **)&d->ctx_get_current) ||
	    resolve(gpa, "cuCtxSetCurrent", (void **)&d->ctx_set_current) ||
	    resolve(gpa, "cuDeviceGet", (void **)&d->device_get) ||
	    resolve(gpa, "cuDevicePrimaryCtxRetain", (void **)&d->primary_ctx_retain) ||
	    resolve(gpa, "cuModuleLoadData", (void **)&d->module_load_data) ||
	    resolve(gpa, "cuModuleGetFunction", (void **)&d->module_get_function) ||
	    resolve(gpa, "cuLaunchKernel", (void **)&d->launch_kernel) ||
	    resolve(gpa, "cuMemsetD32Async", (void **)&d->memset_d32_async))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	CUdevice dev;
	CUresult r = d->init(0);
	if (r == CUDA_SUCCESS)
		r = d->device_get(&dev, 0);
	if (r == CUDA_SUCCESS)
		r = d->primary_ctx_retain(&primary, dev);
	if (r == CUDA_SUCCESS)
		r = cublas_bind() == CUBLAS_STATUS_SUCCESS ? CUDA_SUCCESS
		                                           : CUDA_ERROR_INVALID_CONTEXT;
	CUmodule mod;
	if (r == CUDA_SUCCESS)
		r = d->module_load_data(&mod, cublas_gemm_image);
	if (r == CUDA_SUCCESS)
		r = d->module_get_function(&d->sgemm, mod, "cublas_sgemm_kernel");
	if (r == CUDA_SUCCESS)
		r = d->module_get_function(&d->sgemm_splitk, mod, "cublas_sgemm_splitk_kernel");
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "cuBLAS (simcuda): cannot set up the GEMM kernel (CUresult %d)\n",
		        (int)r);
		return r == CUDA_ERROR_OUT_OF_MEMORY ? CUBLAS_STATUS_ALLOC_FAILED
		                                     : CUBLAS_STATUS_NOT_INITIALIZED;
	}
	return CUBLAS_STATUS_SUCCESS;
}

static void setup_once(void)
{
	setup_status = setup();
}

cublasStatus_t cublas_setup(void)
{
	pthread_once(&once, setup_once);
	return setup_status;
}
