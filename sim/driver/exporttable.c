/*
 * exporttable.c — cuGetExportTable: the private interface through which
 * the simulated cudart and CUPTI reach this driver (simcuda_internal.h).
 * Real cudart also probes NVIDIA's own table ids; those are answered
 * CUDA_ERROR_NOT_SUPPORTED, which cudart tolerates.
 */
#include "driver.h"

#include <string.h>

static void set_hooks(const struct simcuda_hooks *hooks)
{
	atomic_store(&sim_hooks, hooks);
}

static const struct simcuda_hooks *get_hooks(void)
{
	return atomic_load(&sim_hooks);
}

static uint32_t stream_id_of(CUstream h)
{
	struct sim_ctx *ctx;
	struct sim_stream *s;
	if (ctx_current_query(&ctx) != CUDA_SUCCESS)
		return 0;
	if (stream_resolve(h, false, ctx, &s) != CUDA_SUCCESS)
		return 0;
	return s->id;
}

static uint32_t context_id_of(CUcontext c)
{
	struct sim_ctx *ctx;
	if (c == NULL)
		return ctx_current_query(&ctx) == CUDA_SUCCESS ? ctx->id : 0;
	return ctx_check(c, &ctx) == CUDA_SUCCESS ? ctx->id : 0;
}

static const struct simcuda_export table = {
    .size = sizeof(struct simcuda_export),
    .set_hooks = set_hooks,
    .hooks = get_hooks,
    .new_correlation_id = api_new_correlation,
    .set_outer_correlation = api_set_outer,
    .timestamp_ns = clock_now,
    .stream_id = stream_id_of,
    .context_id = context_id_of,
};

static CUresult export_table(const void **out, const CUuuid *id)
{
	static const CUuuid ours = SIMCUDA_EXPORT_UUID;
	if (out == NULL || id == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (memcmp(id->bytes, ours.bytes, sizeof(ours.bytes)) != 0) {
		*out = NULL;
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	*out = &table;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	cuGetExportTable_params p = {ppExportTable, pExportTableId};
	API_CALL(cuGetExportTable, &p, export_table(ppExportTable, pExportTableId));
}
