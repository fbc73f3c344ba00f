/*
 * driver.c — the link to the simulated driver: its export table, the hooks
 * CUPTI installs there, and the per-thread record of API calls in flight.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include "cupti_int.h"

const struct simcuda_export *cupti_exp;

/* Attached: the hooks are installed.  cuptiFinalize detaches; the next
 * CUPTI call attaches again, as with the real library. */
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int attached;
static __typeof__(cuCtxGetCurrent) *ctx_get_current;
static __typeof__(cuFuncGetName) *func_get_name;
static __typeof__(cuKernelGetName) *kernel_get_name;

/* Set while CUPTI itself calls the driver, so that call is not reported. */
static __thread int tl_internal;

#define MAX_NESTED_CALLS 64
static __thread struct cupti_call tl_calls[MAX_NESTED_CALLS];
static __thread unsigned tl_ncalls;

CUcontext cupti_current_context(void)
{
	CUcontext ctx = NULL;
	tl_internal++;
	if (ctx_get_current && ctx_get_current(&ctx) != CUDA_SUCCESS)
		ctx = NULL;
	tl_internal--;
	return ctx;
}

/* The kernel a driver launch names, for symbolName when the driver did
 * not supply it: f may be a CUfunction or (since CUDA 12) a CUkernel. */
static const char *launch_symbol(CUpti_CallbackId cbid, const void *params)
{
	CUfunction f = NULL;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		/* These params structs all start with the function. */
		f = ((const cuLaunchKernel_params *)params)->f;
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		f = ((const cuLaunchKernelEx_params *)params)->f;
		break;
	default:
		return NULL;
	}
	const char *name = NULL;
	tl_internal++;
	if (!f || !func_get_name || func_get_name(&name, f) != CUDA_SUCCESS) {
		name = NULL;
		if (f && kernel_get_name && kernel_get_name(&name, (CUkernel)f) != CUDA_SUCCESS)
			name = NULL;
	}
	tl_internal--;
	return name;
}

struct cupti_call *cupti_call_enter(uint32_t correlation_id)
{
	if (tl_ncalls == MAX_NESTED_CALLS)
		return NULL;
	struct cupti_call *c = &tl_calls[tl_ncalls++];
	c->correlation_id = correlation_id;
	c->data = 0;
	c->start_ns = cupti_exp->timestamp_ns();
	return c;
}

/* Calls end in the reverse order they began, so the match is on top; a
 * search covers an enter that was not recorded (the stack was full, or
 * the callback was enabled in between). */
struct cupti_call *cupti_call_find(uint32_t correlation_id)
{
	for (unsigned i = tl_ncalls; i > 0; i--)
		if (tl_calls[i - 1].correlation_id == correlation_id)
			return &tl_calls[i - 1];
	return NULL;
}

void cupti_call_exit(struct cupti_call *c)
{
	if (c)
		tl_ncalls = (unsigned)(c - tl_calls);
}

static void api_hook(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                     const char *function_name, const void *params, const void *retval,
                     uint32_t correlation_id, const char *symbol_name)
{
	if (tl_internal)
		return;
	CUpti_ActivityKind api_kind = domain == CUPTI_CB_DOMAIN_RUNTIME_API
	                                  ? CUPTI_ACTIVITY_KIND_RUNTIME
	                                  : CUPTI_ACTIVITY_KIND_DRIVER;
	int want_cb = cupti_callback_enabled(domain, cbid);
	int want_record = cupti_activity_enabled(api_kind);
	struct cupti_call *c;
	if (site == CUPTI_API_ENTER) {
		if (!want_cb && !want_record)
			return;
		c = cupti_call_enter(correlation_id);
	} else {
		/* An exit always ends its call's record, even when the callback
		 * was switched off in between. */
		c = cupti_call_find(correlation_id);
		if (!want_cb && !want_record) {
			cupti_call_exit(c);
			return;
		}
	}
	uint64_t scratch = 0;
	if (want_cb) {
		if (!symbol_name && domain == CUPTI_CB_DOMAIN_DRIVER_API && params)
			symbol_name = launch_symbol(cbid, params);
		CUcontext ctx = cupti_current_context();
		CUpti_CallbackData data = {
		    .callbackSite = site,
		    .functionName = function_name,
		    .functionParams = params,
		    .functionReturnValue = (void *)retval,
		    .symbolName = symbol_name,
		    .context = ctx,
		    .contextUid = ctx ? cupti_exp->context_id(ctx) : 0,
		    .correlationData = c ? &c->data : &scratch,
		    .correlationId = correlation_id,
		};
		cupti_deliver_callback(domain, cbid, &data);
	}
	if (site == CUPTI_API_EXIT) {
		if (want_record && c) {
			/* Both return types are int-sized enums. */
			uint32_t rv = retval ? *(const uint32_t *)retval : 0;
			cupti_activity_api(domain, cbid, c->start_ns, cupti_exp->timestamp_ns(),
			                   correlation_id, rv);
		}
		cupti_call_exit(c);
	}
}

static const struct simcuda_hooks hooks = {
    .api = api_hook,
    .kernel = cupti_activity_kernel,
    .memop = cupti_activity_memop,
};

/* Finds the simulated driver's export table; 0 on success. */
static int load(void)
{
	/* dlopen returns the driver the process already uses, if any. */
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "libcupti (simcuda): cannot load libcuda.so.1: %s\n", dlerror());
		return -1;
	}
	__typeof__(cuGetExportTable) *get_table =
	    (__typeof__(cuGetExportTable) *)dlsym(h, "cuGetExportTable");
	ctx_get_current = (__typeof__(cuCtxGetCurrent) *)dlsym(h, "cuCtxGetCurrent");
	func_get_name = (__typeof__(cuFuncGetName) *)dlsym(h, "cuFuncGetName");
	kernel_get_name = (__typeof__(cuKernelGetName) *)dlsym(h, "cuKernelGetName");
	static const CUuuid uuid = SIMCUDA_EXPORT_UUID;
	const void *table = NULL;
	if (!get_table || get_table(&table, &uuid) != CUDA_SUCCESS || !table ||
	    ((const struct simcuda_export *)table)->size < sizeof(struct simcuda_export)) {
		fprintf(stderr, "libcupti (simcuda): libcuda.so.1 is not the simulated driver "
		                "(no simcuda export table)\n");
		return -1;
	}
	cupti_exp = table;
	return 0;
}

CUptiResult cupti_init(void)
{
	if (atomic_load_explicit(&attached, memory_order_acquire))
		return CUPTI_SUCCESS;
	pthread_mutex_lock(&attach_lock);
	static int failed; /* and said so, once */
	if (!attached && !failed) {
		if (cupti_exp || load() == 0) {
			cupti_exp->set_hooks(&hooks);
			atomic_store(&attached, 1);
		} else {
			failed = 1;
		}
	}
	int ok = attached;
	pthread_mutex_unlock(&attach_lock);
	return ok ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_INITIALIZED;
}

void cupti_detach(void)
{
	pthread_mutex_lock(&attach_lock);
	if (attached) {
		cupti_exp->set_hooks(NULL);
		atomic_store(&attached, 0);
	}
	pthread_mutex_unlock(&attach_lock);
}
