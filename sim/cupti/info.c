/*
 * info.c — the small queries: version, timestamp, result and callback
 * names; and cuptiFinalize.
 */
#include <stdatomic.h>
#include "cupti_int.h"
#include "names.h"

CUPTI_EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

/* The simulated device's clock, the one kernel and copy records use. */
CUPTI_EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	CUptiResult r = cupti_init();
	if (r != CUPTI_SUCCESS)
		return r;
	*timestamp = cupti_exp->timestamp_ns();
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (unsigned i = 0; i < cupti_result_name_count; i++)
		if (cupti_result_names[i].code == result) {
			*str = cupti_result_names[i].name;
			return CUPTI_SUCCESS;
		}
	*str = NULL;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

/* Names are the callback-id spellings without their prefix, e.g.
 * "cudaMalloc_v3020", "cuLaunchKernel". */
CUPTI_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                              const char **name)
{
	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	const char *n = NULL;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		n = cupti_runtime_cb_names[cbid];
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		n = cupti_driver_cb_names[cbid];
	*name = n;
	return n ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* Detaches CUPTI: what was recorded is delivered, activity kinds and the
 * subscriber are dropped, and the driver stops calling the hooks (so an
 * application that profiled for a while pays nothing afterwards).  Any
 * later CUPTI call attaches again. */
CUPTI_EXPORT CUptiResult cuptiFinalize(void)
{
	cuptiActivityFlushAll(0);
	cupti_activity_disable_all();
	cupti_drop_subscriber();
	cupti_detach();
	return CUPTI_SUCCESS;
}

/* NVTX injection entry points: answering 0 tells NVTX that CUPTI does not
 * take its calls, so it stays a no-op. */
CUPTI_EXPORT int InitializeInjectionNvtx(void)
{
	return 0;
}

CUPTI_EXPORT int InitializeInjectionNvtx2(const void *getExportTable)
{
	(void)getExportTable;
	return 0;
}

CUPTI_EXPORT int InitializeInjectionNvtxExtension(void *extInfo)
{
	(void)extInfo;
	return 0;
}
