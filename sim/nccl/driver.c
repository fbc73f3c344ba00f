/*
 * driver.c — how the simulated NCCL reaches the driver: dlopen of
 * libcuda.so.1, cuGetProcAddress_v2 for every function, its kernels loaded
 * from the image linked into the library (kernels_image.s).
 */
#include "nccl_int.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CUDA_VERSION_ASKED 13000

struct nccl_driver nccl_drv;

/* The simcc module built from kernels.cu, as bytes. */
extern const unsigned char nccl_kernels_image[] __attribute__((visibility("hidden")));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ready;
static CUmodule mod;

/* The real names, mangled as nvcc mangles them. */
#define MANGLED(n, s) "_Z" #n s "24ncclDevKernelArgsStorageILm4096EE"
static const struct {
	int coll;     /* -1: the generic kernel */
	int sum_type; /* the type suffix's dtype, -1 none */
	const char *name;
} kernels[] = {
    {-1, -1, MANGLED(21, "ncclDevKernel_Generic")},
    {SIMNCCL_ALL_GATHER, -1, MANGLED(31, "ncclDevKernel_AllGather_RING_LL")},
    {SIMNCCL_BROADCAST, -1, MANGLED(31, "ncclDevKernel_Broadcast_RING_LL")},
    {SIMNCCL_ALL_REDUCE, ncclUint8, MANGLED(38, "ncclDevKernel_AllReduce_Sum_u8_RING_LL")},
    {SIMNCCL_ALL_REDUCE, ncclUint32, MANGLED(39, "ncclDevKernel_AllReduce_Sum_u32_RING_LL")},
    {SIMNCCL_ALL_REDUCE, ncclUint64, MANGLED(39, "ncclDevKernel_AllReduce_Sum_u64_RING_LL")},
    {SIMNCCL_ALL_REDUCE, ncclFloat32, MANGLED(39, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")},
    {SIMNCCL_ALL_REDUCE, ncclFloat64, MANGLED(39, "ncclDevKernel_AllReduce_Sum_f64_RING_LL")},
    {SIMNCCL_REDUCE_SCATTER, ncclUint8, MANGLED(42, "ncclDevKernel_ReduceScatter_Sum_u8_RING_LL")},
    {SIMNCCL_REDUCE_SCATTER, ncclUint32,
     MANGLED(43, "ncclDevKernel_ReduceScatter_Sum_u32_RING_LL")},
    {SIMNCCL_REDUCE_SCATTER, ncclUint64,
     MANGLED(43, "ncclDevKernel_ReduceScatter_Sum_u64_RING_LL")},
    {SIMNCCL_REDUCE_SCATTER, ncclFloat32,
     MANGLED(43, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL")},
    {SIMNCCL_REDUCE_SCATTER, ncclFloat64,
     MANGLED(43, "ncclDevKernel_ReduceScatter_Sum_f64_RING_LL")},
    {SIMNCCL_REDUCE, ncclUint8, MANGLED(35, "ncclDevKernel_Reduce_Sum_u8_RING_LL")},
    {SIMNCCL_REDUCE, ncclUint32, MANGLED(36, "ncclDevKernel_Reduce_Sum_u32_RING_LL")},
    {SIMNCCL_REDUCE, ncclUint64, MANGLED(36, "ncclDevKernel_Reduce_Sum_u64_RING_LL")},
    {SIMNCCL_REDUCE, ncclFloat32, MANGLED(36, "ncclDevKernel_Reduce_Sum_f32_RING_LL")},
    {SIMNCCL_REDUCE, ncclFloat64, MANGLED(36, "ncclDevKernel_Reduce_Sum_f64_RING_LL")},
};
static CUfunction fns[sizeof(kernels) / sizeof(kernels[0])];

static int resolve(__typeof__(cuGetProcAddress) *gpa, const char *name, void **fn)
{
	CUdriverProcAddressQueryResult found;
	if (gpa(name, fn, CUDA_VERSION_ASKED, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
	        CUDA_SUCCESS ||
	    found != CU_GET_PROC_ADDRESS_SUCCESS || *fn == NULL) {
		nccl_set_error("the driver has no %s", name);
		return -1;
	}
	return 0;
}

static ncclResult_t setup(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (lib == NULL) {
		nccl_set_error("cannot load libcuda.so.1: %s", dlerror());
		return ncclSystemError;
	}
	__typeof__(cuGetProcAddress) *gpa =
	    (__typeof__(cuGetProcAddress) *)dlsym(lib, "cuGetProcAddress_v2");
	if (gpa == NULL) {
		nccl_set_error("libcuda.so.1 has no cuGetProcAddress_v2");
		return ncclSystemError;
	}
	struct nccl_driver *d = &nccl_drv;
	if (resolve(gpa, "cuInit", (void **)&d->init) ||
	    resolve(gpa, "cuCtxGetCurrent", (void **)&d->ctx_get_current) ||
	    resolve(gpa, "cuCtxGetDevice", (void **)&d->ctx_get_device) ||
	    resolve(gpa, "cuModuleLoadData", (void **)&d->module_load_data) ||
	    resolve(gpa, "cuModuleGetFunction", (void **)&d->module_get_function) ||
	    resolve(gpa, "cuLaunchKernelEx", (void **)&d->launch_kernel_ex) ||
	    resolve(gpa, "cuEventCreate", (void **)&d->event_create) ||
	    resolve(gpa, "cuEventRecord", (void **)&d->event_record) ||
	    resolve(gpa, "cuEventDestroy", (void **)&d->event_destroy) ||
	    resolve(gpa, "cuStreamWaitEvent", (void **)&d->stream_wait_event))
		return ncclSystemError;
	CUcontext ctx = NULL;
	if (d->init(0) != CUDA_SUCCESS || d->ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx) {
		nccl_set_error("no current CUDA context (cudaSetDevice first)");
		return ncclUnhandledCudaError;
	}
	CUresult r = d->module_load_data(&mod, nccl_kernels_image);
	for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof(kernels) / sizeof(kernels[0]); i++)
		r = d->module_get_function(&fns[i], mod, kernels[i].name);
	if (r != CUDA_SUCCESS) {
		nccl_set_error("cannot load the kernels (CUDA error %d)", (int)r);
		return ncclUnhandledCudaError;
	}
	return ncclSuccess;
}

ncclResult_t nccl_setup(void)
{
	pthread_mutex_lock(&lock);
	ncclResult_t r = ready ? ncclSuccess : setup();
	if (r == ncclSuccess)
		ready = 1;
	pthread_mutex_unlock(&lock);
	return r;
}

CUfunction nccl_kernel(const struct simnccl_op *ops, unsigned n)
{
	/* One kind of collective (summing one type, for the reductions): its
	 * own kernel; anything else the generic one, as NCCL picks. */
	int coll = ops[0].coll, type = -1;
	int reduces =
	    coll == SIMNCCL_ALL_REDUCE || coll == SIMNCCL_REDUCE_SCATTER || coll == SIMNCCL_REDUCE;
	if (reduces) {
		/* Sums are the same bits for signed and unsigned integers. */
		static const int as[] = {ncclUint8,   ncclUint8,   ncclUint32,
		                         ncclUint32,  ncclUint64,  ncclUint64,
		                         ncclFloat16, ncclFloat32, ncclFloat64};
		type = ops[0].dtype < 9 ? as[ops[0].dtype] : -1;
	}
	for (unsigned i = 1; i < n; i++)
		if (ops[i].coll != coll || ops[i].dtype != ops[0].dtype ||
		    ops[i].redop != ops[0].redop)
			return fns[0];
	if (reduces && ops[0].redop != ncclSum)
		return fns[0];
	for (size_t i = 1; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (kernels[i].coll == coll && kernels[i].sum_type == type)
			return fns[i];
	return fns[0];
}
