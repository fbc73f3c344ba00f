/*
 * procaddr.c — cuGetProcAddress: the variant of a driver function that a
 * caller built against a given CUDA version expects.  The newest variant
 * introduced at or before cudaVersion wins; with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the _ptsz/_ptds variant is
 * preferred where one exists.  The returned pointers are this library's
 * own definitions (linked -Bsymbolic-functions), never an interposer's,
 * exactly as the real driver hands out its internal entry points.
 */
#include "driver.h"
#include "procaddr.h"

#include <string.h>

static const struct procaddr_entry *pick(const char *symbol, int version, bool per_thread,
                                         bool *known)
{
	const struct procaddr_entry *best = NULL, *best_pt = NULL;
	*known = false;
	for (unsigned i = 0; i < procaddr_count; i++) {
		const struct procaddr_entry *e = &procaddr_table[i];
		if (strcmp(e->name, symbol) != 0)
			continue;
		*known = true;
		if (e->version > version)
			continue;
		const struct procaddr_entry **slot = e->per_thread ? &best_pt : &best;
		if (*slot == NULL || e->version > (*slot)->version)
			*slot = e;
	}
	return per_thread && best_pt ? best_pt : best;
}

static CUresult get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status)
{
	if (symbol == NULL || pfn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
	                          CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
		return CUDA_ERROR_INVALID_VALUE;
	bool known;
	const struct procaddr_entry *e =
	    pick(symbol, version, flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &known);
	*pfn = NULL;
	if (e == NULL) {
		if (status)
			*status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
			                : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return CUDA_ERROR_NOT_FOUND;
	}
	*pfn = e->fn;
	if (status)
		*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *symbolStatus)
{
	cuGetProcAddress_v2_params p = {symbol, pfn, cudaVersion, flags, symbolStatus};
	API_CALL(cuGetProcAddress_v2, &p, get_proc(symbol, pfn, cudaVersion, flags, symbolStatus));
}

/* The CUDA 11.3 entry point: no status out-parameter. */
#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags);
EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                         cuuint64_t flags)
{
	cuGetProcAddress_params p = {symbol, pfn, cudaVersion, flags};
	API_CALL(cuGetProcAddress, &p, get_proc(symbol, pfn, cudaVersion, flags, NULL));
}
