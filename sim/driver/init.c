/*
 * init.c — cuInit, versions, error strings and the one simulated device.
 */
#include "driver.h"

#include <stdio.h>
#include <string.h>

static _Atomic int sim_init_done;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static CUresult init_result = CUDA_SUCCESS;

bool sim_initialized(void)
{
	return atomic_load_explicit(&sim_init_done, memory_order_acquire) != 0;
}

/* A child forked after cuInit has no stream workers and shares nothing
 * with the device: like a real driver, it cannot use CUDA. */
static void forked_child(void)
{
	if (sim_initialized()) {
		atomic_store(&sim_init_done, 0);
		init_result = CUDA_ERROR_NOT_INITIALIZED;
	}
}

static CUresult do_init(unsigned flags)
{
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&init_lock);
	if (!sim_initialized() && init_result == CUDA_SUCCESS) {
		if (devmem_init() != 0) {
			init_result = CUDA_ERROR_NO_DEVICE;
		} else {
			fault_install();
			pthread_atfork(NULL, NULL, forked_child);
			atomic_store_explicit(&sim_init_done, 1, memory_order_release);
		}
	} else if (init_result == CUDA_ERROR_NOT_INITIALIZED) {
		static bool told;
		if (!told)
			fprintf(stderr, "simcuda: CUDA used in a process forked after cuInit; "
			                "initialize CUDA in the child only\n");
		told = true;
	}
	pthread_mutex_unlock(&init_lock);
	return init_result;
}

EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
	cuInit_params p = {Flags};
	API_CALL(cuInit, &p, do_init(Flags));
}

static CUresult driver_version(int *v)
{
	if (v == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*v = CUDA_VERSION;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	cuDriverGetVersion_params p = {driverVersion};
	API_CALL(cuDriverGetVersion, &p, driver_version(driverVersion));
}

/* ---- error strings ----------------------------------------------------- */

static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
#include "errors.inc"
};

static CUresult error_lookup(CUresult e, const char **out, bool name)
{
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == e) {
			*out = name ? errors[i].name : errors[i].text;
			return CUDA_SUCCESS;
		}
	*out = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	cuGetErrorName_params p = {error, pStr};
	API_CALL(cuGetErrorName, &p, error_lookup(error, pStr, true));
}

EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	cuGetErrorString_params p = {error, pStr};
	API_CALL(cuGetErrorString, &p, error_lookup(error, pStr, false));
}

/* ---- the device -------------------------------------------------------- */

static CUresult dev_ok(CUdevice d)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult device_get(CUdevice *d, int ordinal)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (d == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	cuDeviceGet_params p = {device, ordinal};
	API_CALL(cuDeviceGet, &p, device_get(device, ordinal));
}

static CUresult device_count(int *n)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (n == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	cuDeviceGetCount_params p = {count};
	API_CALL(cuDeviceGetCount, &p, device_count(count));
}

static CUresult device_name(char *name, int len, CUdevice d)
{
	CUresult r = dev_ok(d);
	if (r != CUDA_SUCCESS)
		return r;
	if (name == NULL || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", "simcuda");
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	cuDeviceGetName_params p = {name, len, dev};
	API_CALL(cuDeviceGetName, &p, device_name(name, len, dev));
}

static CUresult total_mem(size_t *bytes, CUdevice d)
{
	CUresult r = dev_ok(d);
	if (r != CUDA_SUCCESS)
		return r;
	if (bytes == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = sim_cfg.capacity;
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	cuDeviceTotalMem_v2_params p = {bytes, dev};
	API_CALL(cuDeviceTotalMem_v2, &p, total_mem(bytes, dev));
}

static CUresult device_uuid(CUuuid *uuid, CUdevice d)
{
	CUresult r = dev_ok(d);
	if (r != CUDA_SUCCESS)
		return r;
	if (uuid == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, "simcuda-device-0", 16);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	cuDeviceGetUuid_v2_params p = {uuid, dev};
	API_CALL(cuDeviceGetUuid_v2, &p, device_uuid(uuid, dev));
}

#undef cuDeviceGetUuid
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	cuDeviceGetUuid_params p = {uuid, dev};
	API_CALL(cuDeviceGetUuid, &p, device_uuid(uuid, dev));
}

/* An H100-like device (compute capability 9.0, 132 SMs, clusters). */
static int attribute(CUdevice_attribute a)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		return 0x7fffffff;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		return 49152;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
		return 0x7fffffff;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
		return 1410000;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
		return 512;
	case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		return SIM_SMS;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
		return 0;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
		return 1;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
		return 1215000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
		return 5120;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
		return 50 << 20;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
		return 2048;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
		return 2;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
		return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		return 0;
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
		return SIM_SMEM_PER_SM;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		return 232448;
	case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
		return 32;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
		return 1;
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
		return 1024;
	default:
		return 0; /* features the simulator does not have */
	}
}

static CUresult device_attribute(int *v, CUdevice_attribute a, CUdevice d)
{
	CUresult r = dev_ok(d);
	if (r != CUDA_SUCCESS)
		return r;
	if (v == NULL || (int)a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*v = attribute(a);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	cuDeviceGetAttribute_params p = {pi, attrib, dev};
	API_CALL(cuDeviceGetAttribute, &p, device_attribute(pi, attrib, dev));
}
