/*
 * cupti_int.h — internals of the simulated CUPTI (build/simcuda/libcupti.so.13).
 *
 * CUPTI reaches the simulated driver through cuGetExportTable with the
 * private UUID and installs its hooks there once: the driver and the
 * simulated runtime report every API enter/exit to api_hook, and the
 * driver's stream workers report finished kernels, copies and sets.
 * subscribe.c turns API events into callbacks for the one subscriber;
 * activity.c turns everything into activity records in the client's
 * buffers.
 */
#ifndef SIMCUDA_CUPTI_INT_H
#define SIMCUDA_CUPTI_INT_H

#include <cupti.h>
#include <stdint.h>
#include "simcuda_internal.h"

#define CUPTI_EXPORT __attribute__((visibility("default")))

/* driver.c: loads libcuda.so.1 and installs the hooks; CUPTI_SUCCESS or
 * CUPTI_ERROR_NOT_INITIALIZED (with a message) when the driver is not the
 * simulated one. */
CUptiResult cupti_init(void);
/* Uninstalls the hooks (cuptiFinalize); cupti_init installs them again. */
void cupti_detach(void);
extern const struct simcuda_export *cupti_exp;
/* The context current on this thread, asked of the driver without the
 * question showing up as an API callback. */
CUcontext cupti_current_context(void);

/* One API call between enter and exit on this thread: the subscriber's
 * correlationData and the start time of an API activity record. */
struct cupti_call {
	uint32_t correlation_id;
	uint64_t data;
	uint64_t start_ns;
};
struct cupti_call *cupti_call_enter(uint32_t correlation_id);
struct cupti_call *cupti_call_find(uint32_t correlation_id);
void cupti_call_exit(struct cupti_call *c);

/* subscribe.c */
void cupti_drop_subscriber(void);
int cupti_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
void cupti_deliver_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const CUpti_CallbackData *data);

/* activity.c: the record kinds a hook must produce, and the writers. */
void cupti_activity_disable_all(void);
int cupti_activity_enabled(CUpti_ActivityKind kind);
void cupti_activity_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint64_t start_ns,
                        uint64_t end_ns, uint32_t correlation_id, uint32_t return_value);
void cupti_activity_kernel(const struct simcuda_activity_kernel *rec);
void cupti_activity_memop(const struct simcuda_activity_memop *rec);

#endif
