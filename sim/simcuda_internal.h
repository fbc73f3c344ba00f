/*
 * simcuda_internal.h — how the simulated cudart and CUPTI reach the
 * simulated driver, through cuGetExportTable with a private UUID, the way
 * the real libraries talk to the real libcuda.  Nothing outside
 * sim includes this.
 *
 * The driver owns the callback registry: it calls hooks->api around every
 * driver entry point it implements (domain CUPTI_CB_DOMAIN_DRIVER_API, the
 * real cbid and the real *_params struct from generated_cuda_meta.h), and
 * the simulated cudart does the same for the runtime domain.  CUPTI filters
 * by what the subscriber enabled.  Activity (kernel, memcpy, memset) is
 * reported by the stream worker when the op has executed, with simulated
 * start/end times.
 *
 * Correlation ids: every API call (either domain) takes a fresh id.  A
 * kernel/copy/set record carries the id of the outermost API call that
 * launched it: the runtime call when it came through cudart, else the
 * driver call.  cudart marks the outer call with set_outer_correlation.
 */
#ifndef SIMCUDA_INTERNAL_H
#define SIMCUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>
#include <cupti.h>
#include "simcuda_abi.h"

#define SIMCUDA_EXPORT_UUID                                                                        \
	{                                                                                          \
		{                                                                                  \
			's', 'i', 'm', 'c', 'u', 'd', 'a', '-', 'e', 'x', 'p', 'o', 'r', 't', '-', \
			    '1'                                                                    \
		}                                                                                  \
	}

struct simcuda_activity_kernel {
	uint32_t correlation_id;
	const char *name;
	uint64_t start_ns, end_ns; /* simulated clock */
	uint32_t device_id, context_id, stream_id;
	simcuda_dim3 grid, block;
	uint32_t dynamic_smem;
};

enum simcuda_memop_kind { SIMCUDA_MEMCPY = 0, SIMCUDA_MEMSET = 1 };

struct simcuda_activity_memop {
	enum simcuda_memop_kind kind;
	uint32_t correlation_id;
	uint64_t start_ns, end_ns, bytes;
	uint32_t device_id, context_id, stream_id;
	int copy_kind;  /* CUpti_ActivityMemcpyKind, memcpy only */
	uint32_t value; /* memset only */
};

struct simcuda_hooks {
	/* API enter/exit.  params: the real *_params struct; retval: the
	 * CUresult/cudaError_t (exit only, else NULL). */
	void (*api)(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
	            const char *function_name, const void *params, const void *retval,
	            uint32_t correlation_id, const char *symbol_name);
	void (*kernel)(const struct simcuda_activity_kernel *rec);
	void (*memop)(const struct simcuda_activity_memop *rec);
};

struct simcuda_export {
	size_t size;                                          /* sizeof(struct simcuda_export) */
	void (*set_hooks)(const struct simcuda_hooks *hooks); /* NULL: unsubscribe */
	const struct simcuda_hooks *(*hooks)(void);           /* NULL when none */
	uint32_t (*new_correlation_id)(void);
	/* The runtime call in progress on this thread (0 = none). */
	void (*set_outer_correlation)(uint32_t id);
	uint64_t (*timestamp_ns)(void); /* simulated clock, for cuptiGetTimestamp */
	uint32_t (*stream_id)(CUstream stream);
	uint32_t (*context_id)(CUcontext ctx);
};

#endif
