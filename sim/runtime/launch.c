/*
 * launch.c — kernel launches: cudaLaunchKernel, cudaLaunchKernelExC,
 * cudaLaunchHostFunc and their _ptsz forms, plus the launch entry points
 * nvcc's host code calls (__cudaPushCallConfiguration, __cudaLaunchKernel).
 *
 * A launchable func is a cudaKernel_t (the driver's CUkernel, from
 * cudaLibraryGetKernel or cuLibraryGetKernel) or the host stub of an
 * nvcc-built kernel (register.c finds its kernel); the runtime turns it
 * into the current context's CUfunction and launches that through the
 * driver.
 */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "rt.h"

static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute), "attribute layout");
static_assert(offsetof(cudaLaunchAttribute, val) == offsetof(CUlaunchAttribute, value),
              "attribute layout");

/* ---- kernel names, for the callbacks' symbolName ----------------------- */

/* The enter callback of a launch reports the kernel's name before the
 * launch reaches the driver, so names are remembered per handle: at
 * cudaLibraryGetKernel, or on the first launch of a handle obtained
 * elsewhere.  Names are copied: the driver's strings die with the library. */
struct name_entry {
	const void *kernel;
	char *name;
	struct name_entry *next;
};

#define NAME_BUCKETS 1024
static struct name_entry *names[NAME_BUCKETS];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned bucket(const void *k)
{
	uintptr_t v = (uintptr_t)k;
	return (unsigned)((v >> 4) ^ (v >> 14)) % NAME_BUCKETS;
}

void rt_remember_kernel(cudaKernel_t k, const char *name)
{
	char *copy = strdup(name ? name : "");
	if (!copy)
		return;
	pthread_mutex_lock(&names_lock);
	struct name_entry **pe = &names[bucket(k)];
	for (struct name_entry *e = *pe; e; e = e->next)
		if (e->kernel == k) {
			free(e->name);
			e->name = copy;
			pthread_mutex_unlock(&names_lock);
			return;
		}
	struct name_entry *e = malloc(sizeof(*e));
	if (e) {
		e->kernel = k;
		e->name = copy;
		e->next = *pe;
		*pe = e;
	} else {
		free(copy);
	}
	pthread_mutex_unlock(&names_lock);
}

/* A handle unloaded and reused by the driver must not keep a stale name;
 * unloading any library forgets them all (they are re-learned cheaply). */
void rt_forget_library_kernels(void)
{
	pthread_mutex_lock(&names_lock);
	for (unsigned i = 0; i < NAME_BUCKETS; i++) {
		while (names[i]) {
			struct name_entry *e = names[i];
			names[i] = e->next;
			free(e->name);
			free(e);
		}
	}
	pthread_mutex_unlock(&names_lock);
}

/* Returned pointers stay valid until the next unload; a launch uses it
 * only while it runs. */
static const char *kernel_name(const void *k)
{
	const char *found = NULL;
	pthread_mutex_lock(&names_lock);
	for (struct name_entry *e = names[bucket(k)]; e; e = e->next)
		if (e->kernel == k) {
			found = e->name;
			break;
		}
	pthread_mutex_unlock(&names_lock);
	return found;
}

/* <<<grid, block, smem, stream>>> pushes a configuration that the
 * generated stub pops right before launching; a small per-thread stack
 * covers launches nested in argument evaluation. */
struct call_config {
	dim3 grid, block;
	size_t smem;
	void *stream;
};
#define CONFIG_DEPTH 16
static __thread struct call_config configs[CONFIG_DEPTH];
static __thread unsigned nconfigs;

RT_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                               void *stream)
{
	if (nconfigs == CONFIG_DEPTH)
		return 1;
	configs[nconfigs++] = (struct call_config){gridDim, blockDim, sharedMem, stream};
	return 0;
}

RT_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                                 void *stream)
{
	if (!nconfigs)
		return cudaErrorMissingConfiguration;
	struct call_config c = configs[--nconfigs];
	*gridDim = c.grid;
	*blockDim = c.block;
	*sharedMem = c.smem;
	*(void **)stream = c.stream;
	return cudaSuccess;
}

/* ---- launches ------------------------------------------------------------ */

struct launch {
	const void *func;
	dim3 grid, block;
	void **args;
	size_t smem;
	cudaStream_t stream;
	const cudaLaunchConfig_t *config; /* cudaLaunchKernelExC only */
};

/* Learns the name of a handle not seen at cudaLibraryGetKernel.  This asks
 * the driver before the enter callback (the name belongs in it), so it is
 * done once per handle. */
static const char *name_of(const void *func)
{
	const char *n = kernel_name(func), *stub_name = NULL;
	cudaKernel_t k;
	cudaError_t e;
	if (!n && func && rt_stub_kernel(func, &k, &stub_name, &e))
		return stub_name;
	if (n || !func || !rt.drv.cuKernelGetName)
		return n;
	const char *drv_name = NULL;
	if (DRV(cuKernelGetName, &drv_name, (CUkernel)func) != CUDA_SUCCESS || !drv_name)
		return NULL;
	rt_remember_kernel((cudaKernel_t)func, drv_name);
	return kernel_name(func);
}

static cudaError_t do_launch(int pt, const struct launch *l)
{
	if (!l->func)
		return cudaErrorInvalidDeviceFunction;
	const void *kernel = l->func;
	cudaKernel_t k;
	cudaError_t e;
	if (rt_stub_kernel(l->func, &k, NULL, &e)) {
		if (e != cudaSuccess)
			return e;
		kernel = k;
	}
	CUfunction f = NULL;
	CUresult r = DRV(cuKernelGetFunction, &f, (CUkernel)kernel);
	if (r == CUDA_ERROR_INVALID_HANDLE || r == CUDA_ERROR_INVALID_VALUE ||
	    r == CUDA_ERROR_NOT_FOUND)
		return cudaErrorInvalidDeviceFunction;
	if (r != CUDA_SUCCESS)
		return rt_check(r);
	if (!l->config) {
		r = RT_DRV(pt, cuLaunchKernel, f, l->grid.x, l->grid.y, l->grid.z, l->block.x,
		           l->block.y, l->block.z, (unsigned)l->smem, (CUstream)l->stream, l->args,
		           NULL);
	} else {
		const cudaLaunchConfig_t *c = l->config;
		CUlaunchConfig dc = {
		    .gridDimX = c->gridDim.x,
		    .gridDimY = c->gridDim.y,
		    .gridDimZ = c->gridDim.z,
		    .blockDimX = c->blockDim.x,
		    .blockDimY = c->blockDim.y,
		    .blockDimZ = c->blockDim.z,
		    .sharedMemBytes = (unsigned)c->dynamicSmemBytes,
		    .hStream = (CUstream)c->stream,
		    .attrs = (CUlaunchAttribute *)c->attrs,
		    .numAttrs = c->numAttrs,
		};
		r = RT_DRV(pt, cuLaunchKernelEx, &dc, f, l->args, NULL);
	}
	/* The runtime's name for a grid, block or shared-memory size the
	 * device cannot launch ("invalid configuration argument"). */
	return r == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidConfiguration : rt_check(r);
}

static cudaError_t launch(int pt, CUpti_CallbackId cbid, const char *name, const void *params,
                          const struct launch *l)
{
	const char *sym = name_of(l->func);
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, params, sym, RT_CONTEXT);
	if (e == cudaSuccess)
		e = do_launch(pt, l);
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                       size_t sharedMem, cudaStream_t stream)
{
	cudaLaunchKernel_v7000_params p = {func, gridDim, blockDim, args, sharedMem, stream};
	struct launch l = {func, gridDim, blockDim, args, sharedMem, stream, NULL};
	return launch(0, RT_FN(cudaLaunchKernel_v7000), &p, &l);
}

RT_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                            void **args, size_t sharedMem, cudaStream_t stream)
{
	cudaLaunchKernel_ptsz_v7000_params p = {func, gridDim, blockDim, args, sharedMem, stream};
	struct launch l = {func, gridDim, blockDim, args, sharedMem, stream, NULL};
	return launch(1, RT_FN(cudaLaunchKernel_ptsz_v7000), &p, &l);
}

/* No params struct is published for the CUDA 13 __cudaLaunchKernel
 * callbacks; subscribers get cudaLaunchKernel's, whose fields match the
 * arguments one for one. */
RT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                         void **args, size_t sharedMem, cudaStream_t stream)
{
	cudaLaunchKernel_v7000_params p = {kernel, gridDim, blockDim, args, sharedMem, stream};
	struct launch l = {kernel, gridDim, blockDim, args, sharedMem, stream, NULL};
	return launch(0, RT_FN(__cudaLaunchKernel_v13000), &p, &l);
}

RT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                              void **args, size_t sharedMem, cudaStream_t stream)
{
	cudaLaunchKernel_ptsz_v7000_params p = {kernel, gridDim, blockDim, args, sharedMem, stream};
	struct launch l = {kernel, gridDim, blockDim, args, sharedMem, stream, NULL};
	return launch(1, RT_FN(__cudaLaunchKernel_ptsz_v13000), &p, &l);
}

static cudaError_t launch_ex(int pt, CUpti_CallbackId cbid, const char *name,
                             const cudaLaunchConfig_t *config, const void *func, void **args)
{
	cudaLaunchKernelExC_v11060_params p = {config, func, args};
	if (!config) {
		struct rt_call c;
		rt_enter(&c, cbid, name, &p, NULL, RT_NO_CONTEXT);
		return rt_exit(&c, cudaErrorInvalidValue);
	}
	struct launch l = {func,  config->gridDim,          config->blockDim,
	                   args,  config->dynamicSmemBytes, config->stream,
	                   config};
	return launch(pt, cbid, name, &p, &l);
}

RT_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                          void **args)
{
	return launch_ex(0, RT_FN(cudaLaunchKernelExC_v11060), config, func, args);
}

RT_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                               void **args)
{
	return launch_ex(1, RT_FN(cudaLaunchKernelExC_ptsz_v11060), config, func, args);
}

static cudaError_t host_func(int pt, CUpti_CallbackId cbid, const char *name, cudaStream_t stream,
                             cudaHostFn_t fn, void *userData)
{
	cudaLaunchHostFunc_v10000_params p = {stream, fn, userData};
	struct rt_call c;
	cudaError_t e = rt_enter(&c, cbid, name, &p, NULL, RT_CONTEXT);
	if (e == cudaSuccess && !fn)
		e = cudaErrorInvalidValue;
	if (e == cudaSuccess)
		e = rt_check(RT_DRV(pt, cuLaunchHostFunc, (CUstream)stream, fn, userData));
	return rt_exit(&c, e);
}

RT_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return host_func(0, RT_FN(cudaLaunchHostFunc_v10000), stream, fn, userData);
}

RT_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return host_func(1, RT_FN(cudaLaunchHostFunc_ptsz_v10000), stream, fn, userData);
}
