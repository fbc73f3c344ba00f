/*
 * rt.h — internals of the simulated CUDA runtime (build/simcuda/libcudart.so.13).
 *
 * The runtime reaches the driver only the way the real one does: it
 * dlopens libcuda.so.1, looks up cuGetProcAddress_v2 and asks it for every
 * driver function (cudaVersion 13000), once with the default flags and once
 * with per-thread default-stream flags for the _ptsz/_ptds entry points.
 * Every exported entry point brackets its work with rt_enter/rt_exit, which
 * fire the CUPTI runtime-domain callbacks through the driver's export table
 * and keep the per-thread last error.
 */
#ifndef SIMCUDA_RT_H
#define SIMCUDA_RT_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h> /* also the runtime *_params structs */
#include <stdint.h>
#include "simcuda_internal.h"

#define RT_EXPORT   __attribute__((visibility("default")))
#define RT_VERSION  13000 /* CUDART_VERSION of the toolkit we imitate */
#define RT_MAX_DEVS 16

/* Every driver function the runtime uses.  The names are the cuda.h
 * spellings (cuMemAlloc expands to cuMemAlloc_v2), so each slot gets the
 * prototype of the version cuGetProcAddress returns for 13000; the string
 * passed to cuGetProcAddress is the unexpanded base name, as it must be.
 * XV names a function whose 13000 version cuda.h does not #define to:
 * cuCtxSynchronize is cuCtxSynchronize_v2(CUcontext) for CUDA 13 callers. */
#define RT_DRIVER_FUNCS(X, XV)                                                                     \
	X(cuInit)                                                                                  \
	X(cuDriverGetVersion)                                                                      \
	X(cuGetExportTable)                                                                        \
	X(cuDeviceGetCount)                                                                        \
	X(cuDeviceGet)                                                                             \
	X(cuDeviceGetName)                                                                         \
	X(cuDeviceGetUuid)                                                                         \
	X(cuDeviceTotalMem)                                                                        \
	X(cuDeviceGetAttribute)                                                                    \
	X(cuDevicePrimaryCtxRetain)                                                                \
	X(cuDevicePrimaryCtxRelease)                                                               \
	X(cuDevicePrimaryCtxReset)                                                                 \
	X(cuDevicePrimaryCtxSetFlags)                                                              \
	X(cuDevicePrimaryCtxGetState)                                                              \
	X(cuCtxSetCurrent)                                                                         \
	X(cuCtxGetCurrent)                                                                         \
	XV(cuCtxSynchronize, cuCtxSynchronize_v2)                                                  \
	X(cuMemGetInfo)                                                                            \
	X(cuMemAlloc)                                                                              \
	X(cuMemFree)                                                                               \
	X(cuMemAllocAsync)                                                                         \
	X(cuMemFreeAsync)                                                                          \
	X(cuMemAllocHost)                                                                          \
	X(cuMemHostAlloc)                                                                          \
	X(cuMemFreeHost)                                                                           \
	X(cuPointerGetAttributes)                                                                  \
	X(cuMemcpy)                                                                                \
	X(cuMemcpyHtoD)                                                                            \
	X(cuMemcpyDtoH)                                                                            \
	X(cuMemcpyDtoD)                                                                            \
	X(cuMemcpyAsync)                                                                           \
	X(cuMemcpyHtoDAsync)                                                                       \
	X(cuMemcpyDtoHAsync)                                                                       \
	X(cuMemcpyDtoDAsync)                                                                       \
	X(cuMemsetD8)                                                                              \
	X(cuMemsetD8Async)                                                                         \
	X(cuStreamCreate)                                                                          \
	X(cuStreamCreateWithPriority)                                                              \
	X(cuStreamDestroy)                                                                         \
	X(cuStreamSynchronize)                                                                     \
	X(cuStreamQuery)                                                                           \
	X(cuStreamWaitEvent)                                                                       \
	X(cuStreamGetPriority)                                                                     \
	X(cuStreamGetFlags)                                                                        \
	X(cuStreamGetId)                                                                           \
	X(cuStreamGetDevice)                                                                       \
	X(cuStreamAddCallback)                                                                     \
	X(cuCtxGetStreamPriorityRange)                                                             \
	X(cuStreamBeginCapture)                                                                    \
	X(cuStreamEndCapture)                                                                      \
	X(cuStreamIsCapturing)                                                                     \
	X(cuThreadExchangeStreamCaptureMode)                                                       \
	X(cuStreamGetCaptureInfo)                                                                  \
	X(cuGraphInstantiateWithFlags)                                                             \
	X(cuGraphLaunch)                                                                           \
	X(cuGraphExecDestroy)                                                                      \
	X(cuGraphDestroy)                                                                          \
	X(cuEventCreate)                                                                           \
	X(cuEventRecord)                                                                           \
	X(cuEventRecordWithFlags)                                                                  \
	X(cuEventSynchronize)                                                                      \
	X(cuEventQuery)                                                                            \
	X(cuEventDestroy)                                                                          \
	X(cuEventElapsedTime)                                                                      \
	X(cuLibraryLoadFromFile)                                                                   \
	X(cuLibraryLoadData)                                                                       \
	X(cuLibraryUnload)                                                                         \
	X(cuLibraryGetKernel)                                                                      \
	X(cuKernelGetFunction)                                                                     \
	X(cuKernelGetName)                                                                         \
	X(cuLaunchKernel)                                                                          \
	X(cuLaunchKernelEx)                                                                        \
	X(cuLaunchHostFunc)

struct rt_driver {
#define RT_SLOT(f)         __typeof__(f) *f;
#define RT_SLOT_V(base, f) __typeof__(f) *f;
	RT_DRIVER_FUNCS(RT_SLOT, RT_SLOT_V)
#undef RT_SLOT
#undef RT_SLOT_V
};

/* Process-wide state, filled once by rt_init. */
struct rt_global {
	cudaError_t init_error; /* cudaSuccess once the driver is reachable */
	void *libcuda;
	__typeof__(cuGetProcAddress) *get_proc_address; /* cuGetProcAddress_v2 */
	struct rt_driver drv;                           /* CU_GET_PROC_ADDRESS_DEFAULT */
	struct rt_driver drv_ptds;        /* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
	const struct simcuda_export *exp; /* NULL when the driver has none */
	int ndevs;
};
extern struct rt_global rt;

/* Calls driver function f from the default (per_thread = 0) or per-thread
 * table; a function the driver did not provide answers "not supported". */
#define RT_DRV(per_thread, f, ...)                                                                 \
	((per_thread) ? (rt.drv_ptds.f ? rt.drv_ptds.f(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED)    \
	              : (rt.drv.f ? rt.drv.f(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED))
#define DRV(f, ...) RT_DRV(0, f, __VA_ARGS__)

/* One runtime API call in progress. */
struct rt_call {
	CUpti_CallbackId cbid;
	const char *name;
	const void *params;
	const char *symbol;
	uint32_t correlation_id;
	int outermost;       /* this call owns the thread's outer correlation id */
	int keep_last_error; /* set by calls that report errors, not make them */
};

enum rt_need { RT_NO_CONTEXT = 0, RT_CONTEXT = 1 };

#define RT_CBID(fn) CUPTI_RUNTIME_TRACE_CBID_##fn
/* A callback id and the function name CUPTI reports with it: the id's
 * spelling, version suffix included ("cudaLaunchKernel_v7000"), as the real
 * CUPTI names runtime functions. */
#define RT_FN(fn) CUPTI_RUNTIME_TRACE_CBID_##fn, #fn

/* Starts a runtime call: initializes the runtime on first use, fires the
 * enter callback, makes the primary context of the thread's device current
 * when need says so.  Returns the error the call must fail with, if any. */
cudaError_t rt_enter(struct rt_call *c, CUpti_CallbackId cbid, const char *name, const void *params,
                     const char *symbol, enum rt_need need);
/* Ends it: records err as the thread's last error, fires the exit
 * callback, returns err. */
cudaError_t rt_exit(struct rt_call *c, cudaError_t err);

/* init.c */
void rt_init_once(void);
int rt_current_device(void);
void rt_set_current_device(int dev);
cudaError_t rt_bind_context(int dev);
void rt_forget_context(int dev);

/* error.c */
cudaError_t rt_from_cu(CUresult r);
/* Records a driver result, marking the device's context as broken when
 * the error is sticky; returns the runtime error. */
cudaError_t rt_check(CUresult r);
cudaError_t rt_sticky_error(int dev);
void rt_clear_sticky(int dev);
void rt_record_error(cudaError_t err);

struct rt_error_text {
	cudaError_t code;
	const char *name, *text;
};
extern const struct rt_error_text rt_error_texts[];
extern const unsigned rt_error_text_count;

/* register.c: when func is the host stub of an nvcc-built kernel, sets
 * *err to how finding its kernel went, *kernel to the kernel, *name to the
 * name nvcc registered, and returns 1; returns 0 for anything else. */
int rt_stub_kernel(const void *func, cudaKernel_t *kernel, const char **name, cudaError_t *err);

/* launch.c: name of a kernel handle, remembered at cudaLibraryGetKernel. */
void rt_remember_kernel(cudaKernel_t k, const char *name);
void rt_forget_library_kernels(void);

#endif
