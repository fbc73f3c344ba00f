/*
 * simcuda_abi.h — the contract between kernels built by tools/simcc, the
 * kernel support library (build/simcuda/libsimcuda_kernel.so) and the
 * simulated driver (build/simcuda/libcuda.so.1).
 *
 * A kernel module for the simulated device is a shared object produced by
 * `tools/simcc foo.cu -o foo.so`.  It exports one symbol, `simcuda_module`,
 * describing every __global__ function in the file.  cuModuleLoad,
 * cuModuleLoadData, cuLibraryLoadFromFile and cuLibraryLoadData accept such
 * a file (by path or as an in-memory image of its bytes); anything else
 * (cubin, fatbin, PTX) is answered CUDA_ERROR_INVALID_IMAGE /
 * CUDA_ERROR_INVALID_PTX, as a real driver answers an image it cannot use.
 *
 * Kernel code runs on the stream's worker thread.  The CUDA built-ins are
 * thread-local variables owned by libsimcuda_kernel.so; `__shared__` maps to
 * a function-static thread_local, which is block-shared because a block's
 * threads all run (as fibers, when the kernel calls __syncthreads) on one
 * worker thread, and blocks of one launch run one after another.
 */
#ifndef SIMCUDA_ABI_H
#define SIMCUDA_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

#define SIMCUDA_ABI_VERSION   1
#define SIMCUDA_MODULE_SYMBOL "simcuda_module"

typedef struct {
	unsigned x, y, z;
} simcuda_dim3;

struct simcuda_kernel {
	/* What cuFuncGetName / cuKernelGetName report and cuModuleGetFunction
	 * looks up: the extern "C" name, as nvcc would emit it. */
	const char *name;
	/* Runs one CUDA thread; the indices are in the thread-locals below.
	 * args[i] points at parameter i, as in cuLaunchKernel's kernelParams. */
	void (*thread_fn)(void *const *args);
	unsigned nparams;
	const unsigned *param_offset; /* offsets in the packed buffer (CUDA ABI) */
	const unsigned *param_size;
	unsigned param_bytes;      /* size of the packed buffer */
	unsigned uses_syncthreads; /* 0: threads may run as a plain loop */
	/* Optional deterministic duration of the whole launch, in simulated
	 * nanoseconds; NULL selects the driver's default model. */
	double (*cost_ns)(void *const *args, simcuda_dim3 grid, simcuda_dim3 block);
};

struct simcuda_module {
	unsigned abi_version; /* SIMCUDA_ABI_VERSION */
	unsigned nkernels;
	const struct simcuda_kernel *kernels;
};

/* ---- provided by libsimcuda_kernel.so ---------------------------------- */

extern __thread simcuda_dim3 simcuda_threadIdx, simcuda_blockIdx, simcuda_blockDim, simcuda_gridDim;

/* Block-wide barrier: switches to the block's next fiber. */
void simcuda_syncthreads(void);

/* Dynamic shared memory of the current block (extern __shared__ arrays). */
void *simcuda_dynamic_smem(void);

/* Runs a whole grid on the calling thread; returns 0, or -1 with errno set
 * when the launch configuration is invalid. */
int simcuda_run_grid(const struct simcuda_kernel *k, void *const *args, simcuda_dim3 grid,
                     simcuda_dim3 block, unsigned dynamic_smem_bytes);

#ifdef __cplusplus
}
#endif
#endif
