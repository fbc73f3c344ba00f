/*
 * simblas.c — see simblas.h.  The driver is reached only through
 * dlopen("libcuda.so.1") + cuGetProcAddress_v2, as cuBLAS does, so anything
 * that interposes cuGetProcAddress (libremat) sees these launches.
 */
#include "simblas.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT             __attribute__((visibility("default")))
#define CUDA_VERSION_ASKED 13000
#define BLOCK              16

/* Driver entry points, resolved once per process. */
static struct {
	PFN_cuCtxGetCurrent_v4000 ctx_get_current;
	PFN_cuModuleLoad_v2000 module_load;
	PFN_cuModuleGetFunction_v2000 module_get_function;
	PFN_cuLaunchKernel_v4000 launch_kernel;
	CUfunction gemm;
	simblas_status_t status; /* outcome of the one-time setup */
	CUresult error;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

struct simblas_context {
	CUstream stream;
	CUresult last_error;
};

static int resolve(PFN_cuGetProcAddress_v12000 gpa, const char *name, void **fn)
{
	CUdriverProcAddressQueryResult found;
	CUresult r = gpa(name, fn, CUDA_VERSION_ASKED, CU_GET_PROC_ADDRESS_DEFAULT, &found);
	if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || *fn == NULL) {
		fprintf(stderr, "simblas: the driver has no %s\n", name);
		return -1;
	}
	return 0;
}

/* The directory the kernel module lives in: $SIMBLAS_KERNELS, else
 * ../kernels relative to this library. */
static int kernel_dir(char *buf, size_t len)
{
	const char *env = getenv("SIMBLAS_KERNELS");
	if (env && *env)
		return snprintf(buf, len, "%s", env) < (int)len ? 0 : -1;
	Dl_info info;
	if (!dladdr((void *)&simblas_create, &info) || info.dli_fname == NULL)
		return -1;
	const char *slash = strrchr(info.dli_fname, '/');
	int dir_len = slash ? (int)(slash - info.dli_fname) : 1;
	const char *dir = slash ? info.dli_fname : ".";
	return snprintf(buf, len, "%.*s/../kernels", dir_len, dir) < (int)len ? 0 : -1;
}

/* gemm.so on the simulated device; a real driver refuses it as an image it
 * cannot use, and then the sm_90 cubin is the one to load. */
static CUresult load_module(CUmodule *mod)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	if (kernel_dir(dir, sizeof dir) != 0)
		return CUDA_ERROR_FILE_NOT_FOUND;
	snprintf(path, sizeof path, "%s/gemm.so", dir);
	CUresult r = drv.module_load(mod, path);
	if (r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_INVALID_PTX ||
	    r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_FILE_NOT_FOUND) {
		snprintf(path, sizeof path, "%s/sm_90/gemm.cubin", dir);
		CUresult r2 = drv.module_load(mod, path);
		if (r2 != CUDA_ERROR_FILE_NOT_FOUND)
			r = r2;
	}
	if (r != CUDA_SUCCESS)
		fprintf(stderr, "simblas: cannot load the gemm kernels from %s (CUresult %d)\n",
		        dir, (int)r);
	return r;
}

static void setup(void)
{
	drv.status = SIMBLAS_STATUS_NOT_INITIALIZED;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) {
		fprintf(stderr, "simblas: cannot load libcuda.so.1: %s\n", dlerror());
		return;
	}
	PFN_cuGetProcAddress_v12000 gpa =
	    (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
	if (gpa == NULL) {
		fprintf(stderr, "simblas: libcuda.so.1 has no cuGetProcAddress_v2\n");
		return;
	}
	if (resolve(gpa, "cuCtxGetCurrent", (void **)&drv.ctx_get_current) ||
	    resolve(gpa, "cuModuleLoad", (void **)&drv.module_load) ||
	    resolve(gpa, "cuModuleGetFunction", (void **)&drv.module_get_function) ||
	    resolve(gpa, "cuLaunchKernel", (void **)&drv.launch_kernel))
		return;
	CUcontext ctx = NULL;
	if (drv.ctx_get_current(&ctx) != CUDA_SUCCESS || ctx == NULL) {
		fprintf(stderr, "simblas: no current CUDA context (initialize CUDA first)\n");
		return;
	}
	CUmodule mod;
	CUresult r = load_module(&mod);
	if (r == CUDA_SUCCESS)
		r = drv.module_get_function(&drv.gemm, mod, "simblas_sgemm_kernel");
	if (r != CUDA_SUCCESS) {
		drv.error = r;
		drv.status = r == CUDA_ERROR_OUT_OF_MEMORY ? SIMBLAS_STATUS_ALLOC_FAILED
		                                           : SIMBLAS_STATUS_NOT_INITIALIZED;
		return;
	}
	drv.status = SIMBLAS_STATUS_SUCCESS;
}

static __thread CUresult create_error;

EXPORT simblas_status_t simblas_create(simblas_handle_t *handle)
{
	if (handle == NULL)
		return SIMBLAS_STATUS_INVALID_VALUE;
	pthread_once(&drv_once, setup);
	create_error = drv.error;
	if (drv.status != SIMBLAS_STATUS_SUCCESS)
		return drv.status;
	struct simblas_context *h = calloc(1, sizeof *h);
	if (h == NULL)
		return SIMBLAS_STATUS_ALLOC_FAILED;
	*handle = h;
	return SIMBLAS_STATUS_SUCCESS;
}

EXPORT simblas_status_t simblas_destroy(simblas_handle_t handle)
{
	free(handle);
	return SIMBLAS_STATUS_SUCCESS;
}

EXPORT simblas_status_t simblas_set_stream(simblas_handle_t handle, CUstream stream)
{
	if (handle == NULL)
		return SIMBLAS_STATUS_NOT_INITIALIZED;
	handle->stream = stream;
	return SIMBLAS_STATUS_SUCCESS;
}

EXPORT simblas_status_t simblas_sgemm_strided_batched(
    simblas_handle_t handle, simblas_operation_t transa, simblas_operation_t transb, int m, int n,
    int k, const float *alpha, const float *A, int lda, long long stride_a, const float *B, int ldb,
    long long stride_b, const float *beta, float *C, int ldc, long long stride_c, int batch_count)
{
	if (handle == NULL)
		return SIMBLAS_STATUS_NOT_INITIALIZED;
	int rows_a = transa == SIMBLAS_OP_N ? m : k, rows_b = transb == SIMBLAS_OP_N ? k : n;
	if (m < 0 || n < 0 || k < 0 || batch_count < 0 || alpha == NULL || beta == NULL ||
	    (transa != SIMBLAS_OP_N && transa != SIMBLAS_OP_T) ||
	    (transb != SIMBLAS_OP_N && transb != SIMBLAS_OP_T) || lda < (rows_a ? rows_a : 1) ||
	    ldb < (rows_b ? rows_b : 1) || ldc < (m ? m : 1) || batch_count > 65535)
		return SIMBLAS_STATUS_INVALID_VALUE;
	if (m == 0 || n == 0 || batch_count == 0)
		return SIMBLAS_STATUS_SUCCESS;
	int ta = transa, tb = transb;
	float al = *alpha, be = *beta;
	void *args[] = {&ta,       &tb, &m,   &n,        &k,  &al, &A,   &lda,
	                &stride_a, &B,  &ldb, &stride_b, &be, &C,  &ldc, &stride_c};
	unsigned gx = (unsigned)(m + BLOCK - 1) / BLOCK, gy = (unsigned)(n + BLOCK - 1) / BLOCK;
	if (gy > 65535)
		return SIMBLAS_STATUS_INVALID_VALUE;
	CUresult r = drv.launch_kernel(drv.gemm, gx, gy, (unsigned)batch_count, BLOCK, BLOCK, 1, 0,
	                               handle->stream, args, NULL);
	if (r != CUDA_SUCCESS) {
		handle->last_error = r;
		return SIMBLAS_STATUS_EXECUTION_FAILED;
	}
	return SIMBLAS_STATUS_SUCCESS;
}

EXPORT simblas_status_t simblas_sgemm(simblas_handle_t handle, simblas_operation_t transa,
                                      simblas_operation_t transb, int m, int n, int k,
                                      const float *alpha, const float *A, int lda, const float *B,
                                      int ldb, const float *beta, float *C, int ldc)
{
	return simblas_sgemm_strided_batched(handle, transa, transb, m, n, k, alpha, A, lda, 0, B,
	                                     ldb, 0, beta, C, ldc, 0, 1);
}

EXPORT const char *simblas_status_string(simblas_status_t status)
{
	switch (status) {
	case SIMBLAS_STATUS_SUCCESS:
		return "SIMBLAS_STATUS_SUCCESS";
	case SIMBLAS_STATUS_NOT_INITIALIZED:
		return "SIMBLAS_STATUS_NOT_INITIALIZED";
	case SIMBLAS_STATUS_ALLOC_FAILED:
		return "SIMBLAS_STATUS_ALLOC_FAILED";
	case SIMBLAS_STATUS_INVALID_VALUE:
		return "SIMBLAS_STATUS_INVALID_VALUE";
	case SIMBLAS_STATUS_EXECUTION_FAILED:
		return "SIMBLAS_STATUS_EXECUTION_FAILED";
	}
	return "unknown simblas status";
}

EXPORT CUresult simblas_last_error(simblas_handle_t handle)
{
	return handle ? handle->last_error : create_error;
}
