/*
 * api.c — the CUPTI side of every entry point: enter/exit callbacks with
 * correlation ids, and which id an op's activity record carries (the
 * outermost API call on this thread: cudart's when it marked one, else the
 * outermost driver call).  A driver call made while a runtime call is in
 * progress on the thread reports that runtime call's id, not a fresh one:
 * so CUPTI did on an H100 (driver 580, CUPTI 13), where a tool that took
 * the ids of its own driver calls inside the application's cudaLaunchKernel
 * for its own lost the application's kernel records with them.
 */
#include "driver.h"

const struct simcuda_hooks *_Atomic sim_hooks;

static _Atomic uint32_t next_correlation = 1;
static __thread uint32_t outer_runtime; /* set by cudart */
static __thread uint32_t outer_driver;  /* outermost driver call */
static __thread unsigned driver_depth;

uint32_t api_new_correlation(void)
{
	return atomic_fetch_add(&next_correlation, 1);
}

void api_set_outer(uint32_t id)
{
	outer_runtime = id;
}

uint32_t api_op_correlation(void)
{
	return outer_runtime ? outer_runtime : outer_driver;
}

void api_enter(struct api_frame *f, CUpti_CallbackId cbid, const char *name, const void *params)
{
	f->cbid = cbid;
	f->name = name;
	f->params = params;
	f->correlation = outer_runtime ? outer_runtime : api_new_correlation();
	if (driver_depth++ == 0)
		outer_driver = f->correlation;
	const struct simcuda_hooks *h = atomic_load(&sim_hooks);
	if (h && h->api)
		h->api(CUPTI_CB_DOMAIN_DRIVER_API, cbid, CUPTI_API_ENTER, name, params, NULL,
		       f->correlation, NULL);
}

CUresult api_exit(struct api_frame *f, CUresult result)
{
	const struct simcuda_hooks *h = atomic_load(&sim_hooks);
	if (h && h->api)
		h->api(CUPTI_CB_DOMAIN_DRIVER_API, f->cbid, CUPTI_API_EXIT, f->name, f->params,
		       &result, f->correlation, NULL);
	if (--driver_depth == 0)
		outer_driver = 0;
	return result;
}
