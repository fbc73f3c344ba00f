/*
 * launch.c — kernel launches.  The configuration and parameters are
 * checked at the call, as the driver does (an invalid launch never reaches
 * the stream), the parameter bytes are copied then, and the grid runs on
 * the stream's worker through simcuda_run_grid.
 */
#include "module.h"

#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t launch_count;

static bool dims_ok(simcuda_dim3 g, simcuda_dim3 b)
{
	if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
		return false;
	if (b.x > 1024 || b.y > 1024 || b.z > 64 || (uint64_t)b.x * b.y * b.z > 1024)
		return false;
	return g.x <= 0x7fffffffu && g.y <= 65535 && g.z <= 65535;
}

/* The packed parameter buffer, from kernelParams or from `extra`. */
static CUresult pack(const struct simcuda_kernel *k, void **params, void **extra, void **out)
{
	unsigned bytes = k->param_bytes;
	char *buf = calloc(1, bytes ? bytes : 1);
	if (buf == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (params && extra) {
		free(buf);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (extra) {
		void *ptr = NULL;
		size_t *size = NULL;
		for (unsigned i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				ptr = extra[i + 1];
			else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				size = extra[i + 1];
			else {
				free(buf);
				return CUDA_ERROR_INVALID_VALUE;
			}
		}
		if (ptr == NULL || size == NULL || *size != bytes) {
			free(buf);
			return CUDA_ERROR_INVALID_VALUE;
		}
		memcpy(buf, ptr, bytes);
	} else if (k->nparams) {
		if (params == NULL) {
			free(buf);
			return CUDA_ERROR_INVALID_VALUE;
		}
		for (unsigned i = 0; i < k->nparams; i++) {
			if (params[i] == NULL) {
				free(buf);
				return CUDA_ERROR_INVALID_VALUE;
			}
			memcpy(buf + k->param_offset[i], params[i], k->param_size[i]);
		}
	}
	*out = buf;
	return CUDA_SUCCESS;
}

/* What the driver checks of a cluster and of a cooperative grid, given
 * the blocks of this shape that fit on one SM. */
static CUresult attrs_ok(const struct sim_func *f, const struct sim_launch_attrs *a,
                         simcuda_dim3 grid, uint64_t per_sm)
{
	if (a->cluster[0]) {
		unsigned x = a->cluster[0], y = a->cluster[1], z = a->cluster[2];
		uint64_t size = (uint64_t)x * y * z;
		/* The grid is made of whole clusters, of at most 8 blocks (16
		 * with NON_PORTABLE_CLUSTER_SIZE_ALLOWED), all resident on one
		 * GPC at once. */
		if (!y || !z || grid.x % x || grid.y % y || grid.z % z ||
		    size > (f->non_portable_cluster ? 16u : 8u) || size > per_sm * SIM_SMS_PER_GPC)
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	}
	/* Every block of a cooperative grid is resident at once. */
	if (a->cooperative && (uint64_t)grid.x * grid.y * grid.z > per_sm * SIM_SMS)
		return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	return CUDA_SUCCESS;
}

static CUresult launch(struct sim_func *f, simcuda_dim3 grid, simcuda_dim3 block, unsigned smem,
                       CUstream hs, bool per_thread, void **params, void **extra,
                       const struct sim_launch_attrs *attrs)
{
	struct sim_stream *s;
	CUresult r = stream_current(hs, per_thread, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (f == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!dims_ok(grid, block) || smem > (unsigned)f->max_dynamic_smem)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t per_sm =
	    (uint64_t)occupancy_blocks_per_sm(block.x * block.y * block.z, (size_t)smem);
	r = attrs_ok(f, attrs, grid, per_sm);
	if (r != CUDA_SUCCESS)
		return r;
	void *packed;
	r = pack(f->k, params, extra, &packed);
	if (r != CUDA_SUCCESS)
		return r;
	sweep_point(SWEEP_LAUNCH, atomic_load(&launch_count) + 1);
	uint64_t n = atomic_fetch_add(&launch_count, 1) + 1;
	if (sim_cfg.fail_launch && n == sim_cfg.fail_launch) {
		/* Fault injection.  A kernel that faults was launched fine: the
		 * error is sticky and reaches every later call instead.  A launch
		 * refused for memory is the launch's own, transient error. */
		free(packed);
		atomic_fetch_add(&sim_stats.faults_injected, 1);
		if (sim_cfg.fail_launch_error == CUDA_ERROR_OUT_OF_MEMORY)
			return CUDA_ERROR_OUT_OF_MEMORY;
		ctx_poison(sim_cfg.fail_launch_error);
		return CUDA_SUCCESS;
	}
	void **args = calloc(f->k->nparams ? f->k->nparams : 1, sizeof(*args));
	if (args == NULL) {
		free(packed);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (unsigned i = 0; i < f->k->nparams; i++)
		args[i] = (char *)packed + f->k->param_offset[i];
	struct sim_op *op = op_new(OP_KERNEL);
	op->u.kernel.fn = f;
	op->u.kernel.grid = grid;
	op->u.kernel.block = block;
	op->u.kernel.smem = smem;
	op->u.kernel.params = packed;
	op->u.kernel.args = args;
	op->u.kernel.attrs = *attrs;
	if (capture_take(s, op, &r))
		return r;
	stream_enqueue(s, op, false);
	return CUDA_SUCCESS;
}

#define DIM(x, y, z) ((simcuda_dim3){(x), (y), (z)})
static const struct sim_launch_attrs plain, coop = {.cooperative = true};

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                       unsigned int gridDimZ, unsigned int blockDimX,
                                       unsigned int blockDimY, unsigned int blockDimZ,
                                       unsigned int sharedMemBytes, CUstream hStream,
                                       void **kernelParams, void **extra)
{
	cuLaunchKernel_params p = {f,         gridDimX,     gridDimY,  gridDimZ,
	                           blockDimX, blockDimY,    blockDimZ, sharedMemBytes,
	                           hStream,   kernelParams, extra};
	API_CALL(cuLaunchKernel, &p,
	         launch(func_lookup(f), DIM(gridDimX, gridDimY, gridDimZ),
	                DIM(blockDimX, blockDimY, blockDimZ), sharedMemBytes, hStream, false,
	                kernelParams, extra, &plain));
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX,
                                     unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra);
EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                            unsigned int gridDimY, unsigned int gridDimZ,
                                            unsigned int blockDimX, unsigned int blockDimY,
                                            unsigned int blockDimZ, unsigned int sharedMemBytes,
                                            CUstream hStream, void **kernelParams, void **extra)
{
	cuLaunchKernel_ptsz_params p = {f,         gridDimX,     gridDimY,  gridDimZ,
	                                blockDimX, blockDimY,    blockDimZ, sharedMemBytes,
	                                hStream,   kernelParams, extra};
	API_CALL(cuLaunchKernel_ptsz, &p,
	         launch(func_lookup(f), DIM(gridDimX, gridDimY, gridDimZ),
	                DIM(blockDimX, blockDimY, blockDimZ), sharedMemBytes, hStream, true,
	                kernelParams, extra, &plain));
}

EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                                  unsigned int gridDimY, unsigned int gridDimZ,
                                                  unsigned int blockDimX, unsigned int blockDimY,
                                                  unsigned int blockDimZ,
                                                  unsigned int sharedMemBytes, CUstream hStream,
                                                  void **kernelParams)
{
	cuLaunchCooperativeKernel_params p = {f,         gridDimX,    gridDimY,  gridDimZ,
	                                      blockDimX, blockDimY,   blockDimZ, sharedMemBytes,
	                                      hStream,   kernelParams};
	API_CALL(cuLaunchCooperativeKernel, &p,
	         launch(func_lookup(f), DIM(gridDimX, gridDimY, gridDimZ),
	                DIM(blockDimX, blockDimY, blockDimZ), sharedMemBytes, hStream, false,
	                kernelParams, NULL, &coop));
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                                unsigned int gridDimY, unsigned int gridDimZ,
                                                unsigned int blockDimX, unsigned int blockDimY,
                                                unsigned int blockDimZ, unsigned int sharedMemBytes,
                                                CUstream hStream, void **kernelParams);
EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
    unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
	cuLaunchCooperativeKernel_ptsz_params p = {
	    f,         gridDimX,  gridDimY,       gridDimZ, blockDimX,
	    blockDimY, blockDimZ, sharedMemBytes, hStream,  kernelParams};
	API_CALL(cuLaunchCooperativeKernel_ptsz, &p,
	         launch(func_lookup(f), DIM(gridDimX, gridDimY, gridDimZ),
	                DIM(blockDimX, blockDimY, blockDimZ), sharedMemBytes, hStream, true,
	                kernelParams, NULL, &coop));
}

/* cuLaunchKernelEx: attributes are checked; the cooperative flag and the
 * cluster shape reach the kernel (cooperative groups' this_grid() and
 * this_cluster()), the priority is kept with a captured kernel; the rest
 * (policies, programmatic serialization, ...) have no effect here. */
static bool known_attribute(CUlaunchAttributeID id)
{
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
	case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
	case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
		return true;
	}
	return false;
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                          bool per_thread)
{
	if (c == NULL || (c->numAttrs && c->attrs == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_launch_attrs la = {0};
	for (unsigned i = 0; i < c->numAttrs; i++) {
		const CUlaunchAttribute *a = &c->attrs[i];
		if (!known_attribute(a->id))
			return CUDA_ERROR_INVALID_VALUE;
		if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
			la.cooperative = a->value.cooperative != 0;
		if (a->id == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
			la.priority = a->value.priority;
			la.has_priority = true;
		}
		if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			la.cluster[0] = a->value.clusterDim.x;
			la.cluster[1] = a->value.clusterDim.y;
			la.cluster[2] = a->value.clusterDim.z;
			/* A zero dimension is no cluster shape at all. */
			if (!la.cluster[0] || !la.cluster[1] || !la.cluster[2])
				return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		}
	}
	return launch(func_lookup(f), DIM(c->gridDimX, c->gridDimY, c->gridDimZ),
	              DIM(c->blockDimX, c->blockDimY, c->blockDimZ), c->sharedMemBytes, c->hStream,
	              per_thread, params, extra, &la);
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                         void **kernelParams, void **extra)
{
	cuLaunchKernelEx_params p = {config, f, kernelParams, extra};
	API_CALL(cuLaunchKernelEx, &p, launch_ex(config, f, kernelParams, extra, false));
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra);
EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                              void **kernelParams, void **extra)
{
	cuLaunchKernelEx_ptsz_params p = {config, f, kernelParams, extra};
	API_CALL(cuLaunchKernelEx_ptsz, &p, launch_ex(config, f, kernelParams, extra, true));
}
