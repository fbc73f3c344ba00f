/*
 * kernels.c — names and parameter layouts of the functions launched,
 * queried from the driver once per function (cuFuncGetName /
 * cuKernelGetName, cuFuncGetParamInfo / cuKernelGetParamInfo).  A launch
 * may pass a CUkernel where a CUfunction is expected (CUDA 12+), so the
 * handles seen in cuLibraryGetKernel are remembered as kernels.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/driver.h"
#include "../core/grow.h"
#include "../core/log.h"
#include "../core/map.h"
#include "internal.h"

/* What is known of each function, by pointer (records of struct kslot;
 * the kinfos themselves stay put: callers keep them). */
struct kslot {
	uint64_t func;
	struct prof_kinfo *k;
};
static struct prof_kinfos {
	struct remat_map by_func;
} kt = {REMAT_MAP_INIT(struct kslot)};

static struct prof_kinfo *find(void *f)
{
	struct kslot *s = remat_map_find(&kt.by_func, (uint64_t)(uintptr_t)f);
	return s ? s->k : NULL;
}

static struct prof_kinfo *insert(void *f)
{
	struct prof_kinfo *k = calloc(1, sizeof(*k));
	struct kslot *s = k ? remat_map_insert(&kt.by_func, (uint64_t)(uintptr_t)f) : NULL;
	if (!s) {
		free(k);
		return NULL;
	}
	k->func = f;
	k->is_kernel = -1;
	k->trace_id = -1;
	s->k = k;
	return k;
}

void prof_function_name(void *func, const char *name, int is_kernel)
{
	struct prof_kinfo *k = find(func);
	if (!k)
		k = insert(func);
	if (!k)
		return;
	k->is_kernel = is_kernel;
	if (!k->name && name)
		k->name = strdup(name);
}

static void query_layout(struct prof_kinfo *k)
{
	size_t cap_p = 0;
	for (size_t i = 0; i < 4096; i++) {
		size_t off = 0, size = 0;
		CUresult r = CUDA_ERROR_NOT_SUPPORTED;
		if (k->is_kernel == 1 && remat_drv.cuKernelGetParamInfo)
			r = remat_drv.cuKernelGetParamInfo((CUkernel)k->func, i, &off, &size);
		else if (remat_drv.cuFuncGetParamInfo)
			r = remat_drv.cuFuncGetParamInfo((CUfunction)k->func, i, &off, &size);
		if (r != CUDA_SUCCESS) {
			/* INVALID_VALUE past the last parameter ends the list; any
			 * other answer on the first one means "unknown". */
			k->layout_known = i > 0 || r == CUDA_ERROR_INVALID_VALUE;
			return;
		}
		if (REMAT_GROW(k->param, k->nparams, cap_p))
			return;
		k->param[k->nparams][0] = (uint32_t)off;
		k->param[k->nparams][1] = (uint32_t)size;
		k->nparams++;
		if (off + size > k->param_bytes)
			k->param_bytes = (uint32_t)(off + size);
	}
}

struct prof_kinfo *prof_kinfo_get(void *func)
{
	struct prof_kinfo *k = find(func);
	if (k && k->queried)
		return k;
	if (!k && !(k = insert(func)))
		return NULL;
	const char *name = NULL;
	if (k->is_kernel != 1 && remat_drv.cuFuncGetName &&
	    remat_drv.cuFuncGetName(&name, (CUfunction)func) == CUDA_SUCCESS)
		k->is_kernel = 0;
	else if (remat_drv.cuKernelGetName &&
	         remat_drv.cuKernelGetName(&name, (CUkernel)func) == CUDA_SUCCESS)
		k->is_kernel = 1;
	if (!k->name)
		k->name = strdup(name ? name : "?");
	query_layout(k);
	k->queried = 1;
	return k;
}

int prof_kernel_params(void *func, const uint32_t (**param)[2], size_t *nparams)
{
	const struct prof_kinfo *k = prof_kinfo_get(func);
	if (!k || !k->layout_known)
		return 0;
	*param = (const uint32_t(*)[2])k->param;
	*nparams = k->nparams;
	return 1;
}

void prof_kinfo_reset_trace_ids(void)
{
	size_t i = 0;
	for (struct kslot *s; (s = remat_map_next(&kt.by_func, &i));)
		s->k->trace_id = -1;
}
