/*
 * driver.h — the real CUDA driver behind libremat.  The driver is opened
 * with dlopen("libcuda.so.1") at first use, never linked: a process that
 * never touches CUDA never loads it because of us.  Every driver function
 * libremat calls itself goes through remat_drv (the unit tests fill it with
 * fakes).
 */
#ifndef REMAT_CORE_DRIVER_H
#define REMAT_CORE_DRIVER_H

#include <cuda.h>

struct remat_driver {
	CUresult (*cuInit)(unsigned);
	CUresult (*cuCtxGetCurrent)(CUcontext *);
	CUresult (*cuCtxGetDevice)(CUdevice *);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*cuMemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *,
	                                          CUmemAllocationGranularity_flags);
	CUresult (*cuMemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
	                                unsigned long long);
	CUresult (*cuMemAddressFree)(CUdeviceptr, size_t);
	CUresult (*cuMemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
	                        unsigned long long);
	CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
	CUresult (*cuMemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
	                     unsigned long long);
	CUresult (*cuMemUnmap)(CUdeviceptr, size_t);
	CUresult (*cuMemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
	CUresult (*cuEventCreate)(CUevent *, unsigned);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventQuery)(CUevent);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
	/* run mode: replayed copies and sets, SAVE/RESTORE */
	CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
	CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
	CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
	CUresult (*cuFuncGetName)(const char **, CUfunction);
	CUresult (*cuKernelGetName)(const char **, CUkernel);
	CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);
	CUresult (*cuKernelGetParamInfo)(CUkernel, size_t, size_t *, size_t *);
	CUresult (*cuPointerGetAttribute)(void *, CUpointer_attribute, CUdeviceptr);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                           unsigned, unsigned, CUstream, void **, void **);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuGetProcAddress)(const char *, void **, int, cuuint64_t,
	                             CUdriverProcAddressQueryResult *);
	/* the profile's host copies (profiler/host_copy.c) */
	CUresult (*cuStreamCreate)(CUstream *, unsigned);
	CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	/* planned offload (replay/offload.c): pinned host memory, copy streams */
	CUresult (*cuMemAllocHost)(void **, size_t);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuEventDestroy)(CUevent);
	/* stream capture and graphs (core/capture.c, profiler/graphs.c) */
	CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*cuGraphGetNodes)(CUgraph, CUgraphNode *, size_t *);
	CUresult (*cuGraphNodeGetType)(CUgraphNode, CUgraphNodeType *);
	CUresult (*cuGraphKernelNodeGetParams)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS *);
	CUresult (*cuGraphMemcpyNodeGetParams)(CUgraphNode, CUDA_MEMCPY3D *);
	CUresult (*cuGraphMemsetNodeGetParams)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS *);
};

extern struct remat_driver remat_drv;

/* Lazy init, once per process: opens REMAT_LOG_FILE and resolves remat_drv.
 * 0 when the driver is usable; -1 (with one message) when it is not. */
int remat_driver_init(void);

/* The interposed dlsym runs inside a sanitizer's start-up (it looks up
 * libc with dlsym before anything else works): what it calls must not be
 * instrumented (make check-asan, check-tsan). */
#define REMAT_UNINSTRUMENTED                                                                       \
	__attribute__((no_sanitize("address", "undefined", "thread"), noinline))

/* The real dlsym (glibc's), for every lookup libremat makes itself; the
 * interposed dlsym (interpose/dlsym.c) jumps to it for everything else. */
extern void *(*remat_dlsym_next)(void *, const char *);
/* Sets remat_dlsym_next (once; any thread). */
REMAT_UNINSTRUMENTED void remat_dlsym_next_resolve(void);
REMAT_UNINSTRUMENTED void *remat_real_dlsym(void *handle, const char *name);
/* A real driver entry point by exported name, NULL when absent. */
void *remat_real_driver_symbol(const char *name);
/* A real runtime entry point (the next definition after libremat). */
void *remat_real_next(const char *name);

#endif
