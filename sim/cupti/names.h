/* names.h — the generated name tables (see gen-names.sh). */
#ifndef SIMCUDA_CUPTI_NAMES_H
#define SIMCUDA_CUPTI_NAMES_H
#include <cupti.h>

extern const char *const cupti_runtime_cb_names[CUPTI_RUNTIME_TRACE_CBID_SIZE];
extern const char *const cupti_driver_cb_names[CUPTI_DRIVER_TRACE_CBID_SIZE];
struct cupti_result_name {
	CUptiResult code;
	const char *name;
};
extern const struct cupti_result_name cupti_result_names[];
extern const unsigned cupti_result_name_count;
#endif
