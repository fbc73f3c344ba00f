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
#include "../core/log.h"
#include "internal.h"

/* What is known of each function, by pointer. */
static struct prof_kinfos {
	struct prof_kinfo **tab; /* open addressing by func pointer */
	size_t cap, n;
} kt;

static size_t slot(void *f)
{
	uint64_t x = (uint64_t)(uintptr_t)f;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x & (kt.cap - 1);
}

static struct prof_kinfo **find(void *f)
{
	if (!kt.cap)
		return NULL;
	size_t j = slot(f);
	while (kt.tab[j] && kt.tab[j]->func != f)
		j = (j + 1) & (kt.cap - 1);
	return &kt.tab[j];
}

static struct prof_kinfo *insert(void *f)
{
	if ((kt.n + 1) * 2 > kt.cap) {
		size_t oc = kt.cap;
		struct prof_kinfo **old = kt.tab;
		kt.cap = kt.cap ? kt.cap * 2 : 256;
		kt.tab = calloc(kt.cap, sizeof(*kt.tab));
		if (!kt.tab) {
			kt.tab = old;
			kt.cap = oc;
			return NULL;
		}
		for (size_t i = 0; i < oc; i++)
			if (old[i])
				*find(old[i]->func) = old[i];
		free(old);
	}
	struct prof_kinfo *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->func = f;
	k->is_kernel = -1;
	k->trace_id = -1;
	*find(f) = k;
	kt.n++;
	return k;
}

void prof_function_name(void *func, const char *name, int is_kernel)
{
	struct prof_kinfo **p = find(func);
	struct prof_kinfo *k = p && *p ? *p : insert(func);
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
		if (k->nparams == cap_p) {
			cap_p = cap_p ? cap_p * 2 : 8;
			void *p = realloc(k->param, cap_p * sizeof(*k->param));
			if (!p)
				return;
			k->param = p;
		}
		k->param[k->nparams][0] = (uint32_t)off;
		k->param[k->nparams][1] = (uint32_t)size;
		k->nparams++;
		if (off + size > k->param_bytes)
			k->param_bytes = (uint32_t)(off + size);
	}
}

struct prof_kinfo *prof_kinfo_get(void *func)
{
	struct prof_kinfo **p = find(func);
	struct prof_kinfo *k = p && *p ? *p : NULL;
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
	for (size_t i = 0; i < kt.cap; i++)
		if (kt.tab[i])
			kt.tab[i]->trace_id = -1;
}
