/*
 * remat.h — the public face of interpose/: configuration, logging, the
 * table of real driver entry points, and the mode flags every interposed
 * entry point tests first.
 *
 * Reading order for one kernel launch: dlsym.c (a library asks for
 * cuGetProcAddress) -> procaddr.c (it gets our wrapper) -> launch.c (the
 * wrapper runs) -> profiler/record.c (what is kept of it).
 */
#ifndef REMAT_H
#define REMAT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#define REMAT_EXPORT __attribute__((visibility("default")))
#define likely(x)    __builtin_expect(!!(x), 1)
#define unlikely(x)  __builtin_expect(!!(x), 0)
/* The pass-through path of every entry point: inlined, so a call costs a
 * load and a branch or two before the tail call to the real function. */
#define REMAT_INLINE static inline __attribute__((always_inline))

/* ---- configuration (config.c) ------------------------------------------ */

enum remat_mode { REMAT_MODE_OFF = 0, REMAT_MODE_TRACE, REMAT_MODE_RUN };
enum remat_log_level { REMAT_LOG_ERROR = 0, REMAT_LOG_INFO = 1, REMAT_LOG_DEBUG = 2 };

struct remat_config {
	enum remat_mode mode;
	int any_set;           /* some REMAT_* variable is present */
	uint64_t budget_bytes; /* 0 when unset or given as a percentage */
	double budget_percent; /* 0 when unset or given in bytes */
	char trace_dir[PATH_MAX];
	int log_level;
	char log_file[PATH_MAX]; /* "" = stderr */
	int warmup;              /* iterations to skip before profiling */
	int verify;              /* REMAT_VERIFY=1: verify the plan's rebuilds once */
};

typedef const char *(*remat_getenv_fn)(const char *name);

/* Fills *cfg from the REMAT_* variables read through get.  Returns 0, or -1
 * with one message in err naming the variable, the bad value and what is
 * accepted; cfg then holds the defaults with mode OFF. */
int remat_config_parse(remat_getenv_fn get, struct remat_config *cfg, char *err, size_t errlen);

/* 1 with a message when env (an environ-like array) holds a REMAT_* name
 * that is not one of ours, else 0. */
int remat_config_unknown(char *const *env, char *msg, size_t msglen);

/* Parses a size with optional binary K/M/G/T suffix.  0 on success. */
int remat_parse_bytes(const char *s, uint64_t *out);

/* Merges backend:cudaMallocAsync into a PYTORCH_CUDA_ALLOC_CONF value:
 * other keys kept, backend replaced, expandable_segments dropped.
 * Returns 0, or -1 when out is too small. */
int remat_alloc_conf_merge(const char *old, char *out, size_t outlen);

extern struct remat_config remat_cfg;

/* ---- mode flags (init.c) ------------------------------------------------ */

/* Nonzero once REMAT_* asked for trace or run and the process is not a
 * forked child: the only test a pass-through call makes. */
extern int remat_active;
/* Nonzero while launches must be seen by the profiler (iteration detection
 * and the profiled iteration); cleared once the trace is written. */
extern int remat_tracking;

/* Lazy init on first CUDA use: resolves the driver.  Returns 0 when the
 * driver is usable; -1 turns libremat into a pass-through. */
int remat_lazy_init(void);
/* Switches to pass-through for good (errors, forked child). */
void remat_deactivate(const char *why);

/* ---- logging (log.c) ---------------------------------------------------- */

void remat_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Always printed, whatever REMAT_LOG says: bad input the user must see. */
void remat_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void remat_log_open(void);

/* ---- the real driver (real.c) ------------------------------------------- */

/* Every driver function libremat calls itself.  Filled by
 * remat_real_resolve(); the unit tests fill it with fakes. */
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
};

extern struct remat_driver remat_drv;
extern void *remat_libcuda; /* dlopen handle of the real driver */

int remat_real_resolve(void);
/* The real dlsym (dlsym.c), for every lookup libremat makes itself. */
void *remat_real_dlsym(void *handle, const char *name);
/* A real driver entry point by exported name, NULL when absent. */
void *remat_real_driver_symbol(const char *name);
/* A real runtime entry point (the next definition after libremat). */
void *remat_real_next(const char *name);

#endif
