/*
 * procaddr.c — cuGetProcAddress and cuGetProcAddress_v2.  The real one is
 * asked first, with the caller's version and flags, so the caller gets
 * exactly the variant it asked for (e.g. the _ptsz one); for the functions
 * libremat controls, that real pointer is kept and our twin handed out.
 */
#include <string.h>

#include "hooks.h"

/* The section REMAT_DOORS fills (hooks.h); the linker defines its
 * bounds.  Hidden: they are ours, not the process's. */
extern struct remat_hook __start_remat_hooks[] __attribute__((visibility("hidden")));
extern struct remat_hook __stop_remat_hooks[] __attribute__((visibility("hidden")));

#undef cuGetProcAddress
typedef CUresult (*getproc_v2_fn)(const char *, void **, int, cuuint64_t,
                                  CUdriverProcAddressQueryResult *);
typedef CUresult (*getproc_v1_fn)(const char *, void **, int, cuuint64_t);
REMAT_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags);
REMAT_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                          cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *symbolStatus);

/* The newer of two hooks for one symbol (either may be NULL). */
static struct remat_hook *newer(struct remat_hook *a, struct remat_hook *b)
{
	return !a || (b && b->min_version > a->min_version) ? b : a;
}

/* The hook cuGetProcAddress(symbol, version, flags) must be swapped for:
 * the variant the real driver returns (per-thread or legacy, the newest
 * _vN not above the caller's version), or NULL when we leave it alone.
 * The newest by min_version, never by place in the section: the compiler
 * orders it as it likes (a TSan build put cuStreamBeginCapture's one-
 * argument form after _v2's, and the mode was read from a stray register). */
static struct remat_hook *find(const char *symbol, int version, cuuint64_t flags)
{
	int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
	struct remat_hook *best = NULL, *legacy = NULL;
	for (struct remat_hook *h = __start_remat_hooks; h < __stop_remat_hooks; h++) {
		if (strcmp(h->base, symbol) || h->min_version > version)
			continue;
		if (h->per_thread == want_pt)
			best = newer(best, h);
		else if (!h->per_thread)
			legacy = newer(legacy, h); /* no per-thread variant: the legacy one */
	}
	if (best)
		return best;
	for (struct remat_hook *h = __start_remat_hooks;
	     want_pt && legacy && h < __stop_remat_hooks; h++)
		if (h->per_thread && !strcmp(h->base, symbol))
			return NULL; /* a per-thread variant exists, just not for this version */
	return legacy;
}

static CUresult swap(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	if (!remat_session_active || !symbol || !pfn || !*pfn)
		return CUDA_SUCCESS;
	if (!strcmp(symbol, "cuGetProcAddress")) {
		*pfn = version >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
		return CUDA_SUCCESS;
	}
	struct remat_hook *h = find(symbol, version, flags);
	if (h) {
		__atomic_store_n(&h->pa_real, *pfn, __ATOMIC_RELEASE);
		*pfn = h->pa_fn;
	}
	return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
	static getproc_v2_fn real;
	if (unlikely(!real))
		real = (getproc_v2_fn)remat_real_driver_symbol("cuGetProcAddress_v2");
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
	if (r == CUDA_SUCCESS)
		swap(symbol, pfn, cudaVersion, flags);
	return r;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	static getproc_v1_fn real;
	if (unlikely(!real))
		real = (getproc_v1_fn)remat_real_driver_symbol("cuGetProcAddress");
	if (unlikely(!real))
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult r = real(symbol, pfn, cudaVersion, flags);
	if (r == CUDA_SUCCESS)
		swap(symbol, pfn, cudaVersion, flags);
	return r;
}

void *remat_hooks_exported(const char *name)
{
	if (!strcmp(name, "cuGetProcAddress_v2"))
		return (void *)cuGetProcAddress_v2;
	if (!strcmp(name, "cuGetProcAddress"))
		return (void *)cuGetProcAddress;
	for (struct remat_hook *h = __start_remat_hooks; h < __stop_remat_hooks; h++)
		if (!strcmp(h->name, name))
			return h->exp_fn;
	return NULL;
}
