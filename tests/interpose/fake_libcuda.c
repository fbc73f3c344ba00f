/*
 * fake_libcuda.c — the "real" driver behind interpose/'s hooks in
 * test_hooks.c: built as libcuda.so.1 beside the test, which finds it
 * through its RUNPATH as libremat finds the real one (core/driver.c).
 * cuGetProcAddress answers as the driver's contract says (the newest
 * variant not above the caller's version, the per-thread one when asked
 * for and it exists, CUDA_ERROR_NOT_FOUND with the reason otherwise); each
 * function records its name and arguments and returns fake_cuda.rc.
 * Linked with -Bsymbolic: the pointers it hands out are its own, never the
 * test program's functions of the same names.
 */
#include <string.h>
#include <cuda.h>

#include "fake_libcuda.h"

#define EXPORT __attribute__((visibility("default")))

/* cuda.h maps these names to their newest variants; the driver exports
 * every variant under its own name. */
#undef cuMemcpyHtoD
#undef cuGetProcAddress
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

EXPORT struct fake_cuda fake_cuda;

static CUresult called(const char *name, uint64_t a0, uint64_t a1, uint64_t a2, void *p)
{
	fake_cuda.calls++;
	fake_cuda.last = name;
	fake_cuda.arg[0] = a0;
	fake_cuda.arg[1] = a1;
	fake_cuda.arg[2] = a2;
	fake_cuda.ptr = p;
	return fake_cuda.rc;
}

#define LAUNCH(name)                                                                               \
	EXPORT CUresult name(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,     \
	                     unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,  \
	                     void **extra)                                                         \
	{                                                                                          \
		(void)gy, (void)gz, (void)by, (void)bz, (void)extra;                               \
		fake_cuda.stream = s;                                                              \
		fake_cuda.shmem = shmem;                                                           \
		return called(#name, (uint64_t)(uintptr_t)f, gx, bx, params);                      \
	}
LAUNCH(cuLaunchKernel)
LAUNCH(cuLaunchKernel_ptsz)

#define HTOD(name)                                                                                 \
	EXPORT CUresult name(CUdeviceptr d, const void *s, size_t n)                               \
	{                                                                                          \
		return called(#name, d, n, 0, (void *)s);                                          \
	}
HTOD(cuMemcpyHtoD)
HTOD(cuMemcpyHtoD_v2)
HTOD(cuMemcpyHtoD_v2_ptds)

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	(void)m;
	*f = (CUfunction)(uintptr_t)0x1234;
	return called("cuModuleGetFunction", 0, 0, 0, (void *)name);
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
	*d = 0;
	return called("cuCtxGetDevice", 0, 0, 0, NULL);
}

/* What cuGetProcAddress knows: base name, version it appeared in, per-thread. */
static const struct {
	const char *base;
	int version, per_thread;
	void *fn;
} table[] = {
    {"cuLaunchKernel", 4000, 0, (void *)cuLaunchKernel},
    {"cuLaunchKernel", 7000, 1, (void *)cuLaunchKernel_ptsz},
    {"cuMemcpyHtoD", 2000, 0, (void *)cuMemcpyHtoD},
    {"cuMemcpyHtoD", 3020, 0, (void *)cuMemcpyHtoD_v2},
    {"cuMemcpyHtoD", 7000, 1, (void *)cuMemcpyHtoD_v2_ptds},
    {"cuModuleGetFunction", 2000, 0, (void *)cuModuleGetFunction},
    {"cuCtxGetDevice", 2000, 0, (void *)cuCtxGetDevice},
    {"cuGetProcAddress", 11030, 0, (void *)cuGetProcAddress},
    {"cuGetProcAddress", 12000, 0, (void *)cuGetProcAddress_v2},
};

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
	int pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0, known = 0, best = -1;
	int has_pt = 0;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].base, symbol)) {
			known = 1;
			has_pt |= table[i].per_thread && table[i].version <= version;
		}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].base, symbol) || table[i].version > version ||
		    table[i].per_thread != (pt && has_pt))
			continue;
		if (best < 0 || table[i].version > table[best].version)
			best = (int)i;
	}
	*pfn = best < 0 ? NULL : table[best].fn;
	if (status)
		*status = best >= 0 ? CU_GET_PROC_ADDRESS_SUCCESS
		          : known   ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
		                    : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return best < 0 ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status)
{
	return lookup(symbol, pfn, version, flags, status);
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return lookup(symbol, pfn, version, flags, NULL);
}
