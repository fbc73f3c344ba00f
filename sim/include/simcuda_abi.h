/*
 * simcuda_abi.h — the contract between kernels built by sim/bin/simcc, the
 * kernel support library (build/simcuda/libsimcuda_kernel.so) and the
 * simulated driver (build/simcuda/libcuda.so.1).
 *
 * A kernel module for the simulated device is a shared object produced by
 * `sim/bin/simcc foo.cu -o foo.so`.  It exports one symbol, `simcuda_module`,
 * describing every __global__ function in the file.  cuModuleLoad,
 * cuModuleLoadData, cuLibraryLoadFromFile and cuLibraryLoadData accept such
 * a file (by path or as an in-memory image of its bytes); anything else
 * (cubin, fatbin, PTX) is answered CUDA_ERROR_INVALID_IMAGE /
 * CUDA_ERROR_INVALID_PTX, as a real driver answers an image it cannot use.
 *
 * Kernel code runs on the stream's worker thread.  The CUDA built-ins are
 * thread-local variables owned by libsimcuda_kernel.so; `__shared__` maps to
 * a function-static thread_local, which is block-shared because a block's
 * threads all run (as fibers, when the kernel synchronizes) on one worker
 * thread, and blocks of one launch run one after another.
 */
#ifndef SIMCUDA_ABI_H
#define SIMCUDA_ABI_H

#ifdef __cplusplus
extern "C" {
#endif

#define SIMCUDA_ABI_VERSION   2
#define SIMCUDA_MODULE_SYMBOL "simcuda_module"

typedef struct {
	unsigned x, y, z;
} simcuda_dim3;

/* What a launch does, for the device profile's roofline: its time is the
 * largest of the profile's floor, flops at the rate of its math and bytes
 * at the memory bandwidth, plus wire_ns, time spent off the device (a
 * collective's transfer between ranks). */
enum simcuda_math { SIMCUDA_MATH_FP32, SIMCUDA_MATH_TF32, SIMCUDA_MATH_BF16, SIMCUDA_MATHS };
struct simcuda_work {
	double flops;
	double bytes;
	unsigned math; /* enum simcuda_math */
	double wire_ns;
};

struct simcuda_kernel {
	/* What cuFuncGetName / cuKernelGetName report and cuModuleGetFunction
	 * looks up: the symbol name nvcc gives the kernel (the plain name of an
	 * extern "C" kernel, else the C++ mangled name). */
	const char *name;
	/* Runs one CUDA thread; the indices are in the thread-locals below.
	 * args[i] points at parameter i, as in cuLaunchKernel's kernelParams. */
	void (*thread_fn)(void *const *args);
	unsigned nparams;
	const unsigned *param_offset; /* offsets in the packed buffer (CUDA ABI) */
	const unsigned *param_size;
	unsigned param_bytes; /* size of the packed buffer */
	/* 1: the kernel reaches __syncthreads or a warp-synchronous primitive,
	 * so its threads run as fibers; 0: they may run as a plain loop. */
	unsigned synchronizes;
	/* Optional deterministic duration of the whole launch, in simulated
	 * nanoseconds; NULL selects the driver's default model. */
	double (*cost_ns)(void *const *args, simcuda_dim3 grid, simcuda_dim3 block);
	/* Optional work of the whole launch, priced by the device profile
	 * (SIMCUDA_DEVICE other than legacy, which uses cost_ns); NULL: the
	 * driver's default (the bytes its pointer parameters touch). */
	struct simcuda_work (*work)(void *const *args, simcuda_dim3 grid, simcuda_dim3 block);
};

struct simcuda_module {
	unsigned abi_version; /* SIMCUDA_ABI_VERSION */
	unsigned nkernels;
	const struct simcuda_kernel *kernels;
};

/* ---- provided by libsimcuda_kernel.so ---------------------------------- */

extern __thread simcuda_dim3 simcuda_threadIdx, simcuda_blockIdx, simcuda_blockDim, simcuda_gridDim;
/* The launch's cluster shape ({1,1,1} without one) and whether it is
 * cooperative (cooperative groups' this_cluster() and this_grid()). */
extern __thread simcuda_dim3 simcuda_clusterDim;
extern __thread int simcuda_cooperative;

/* grid.sync(): a barrier of every thread of the grid.  Only in a
 * cooperative launch (a GPU hangs or traps otherwise: here, one message
 * and abort). */
void simcuda_grid_sync(void);
/* cluster.sync() across several blocks: not simulated (the blocks of a
 * cluster run one after another); one message and abort. */
void simcuda_cluster_sync_unsupported(void);

/* A kernel's spin-wait (a counter other blocks of the grid bump) found
 * `what` at `value`, not at `target`.  Blocks run one after another here,
 * so the blocks it waits for have all run, or will only run after it: on
 * a GPU it spins forever.  One message naming the kernel, and abort.
 * Kernels call it under #ifdef __SIMCUDA__ inside their wait loop. */
void simcuda_spin_forever(const char *what, unsigned long long value, unsigned long long target);

/* Block-wide barrier: switches to the block's next fiber. */
void simcuda_syncthreads(void);

/* Warp-synchronous operations (simcuda_kernel.h spells them __shfl_sync,
 * __ballot_sync, ...).  The calling thread waits until every lane of
 * `mask` in its warp has called the same operation with the same mask;
 * lanes that have exited, or that the block does not have, count as
 * arrived.  Other warps of the block go on meanwhile.  `value` carries
 * the shuffled bits or the predicate, `arg` the source lane, delta or lane
 * mask, `width` the shuffle segment (a power of two up to 32). */
enum simcuda_warp_op {
	SIMCUDA_WARP_SYNC,
	SIMCUDA_WARP_SHFL_IDX,
	SIMCUDA_WARP_SHFL_UP,
	SIMCUDA_WARP_SHFL_DOWN,
	SIMCUDA_WARP_SHFL_XOR,
	SIMCUDA_WARP_BALLOT,
	SIMCUDA_WARP_ANY,
	SIMCUDA_WARP_ALL,
};
unsigned long long simcuda_warp(enum simcuda_warp_op op, unsigned mask, unsigned long long value,
                                int arg, int width);

/* __activemask(): the lanes of the caller's warp that reach this call
 * site (`site`: its line) together.  Lanes that take another path are
 * waited for until they block (at a barrier or another warp operation)
 * or exit, as a diverged warp runs one path at a time. */
unsigned simcuda_activemask(int site);

/* What a shuffle returns when its source lane is not taking part (not in
 * the mask, exited, or past the end of the block): undefined on a GPU,
 * this pattern here. */
#define SIMCUDA_WARP_JUNK 0xcdcdcdcdcdcdcdcdull

/* CUDA's warpSize: a variable, as on a GPU (not a constant expression). */
extern const int simcuda_warpSize;

/* Dynamic shared memory of the current block (extern __shared__ arrays). */
void *simcuda_dynamic_smem(void);

/* Runs a whole grid on the calling thread; returns 0, or -1 with errno set
 * when the launch configuration is invalid. */
int simcuda_run_grid(const struct simcuda_kernel *k, void *const *args, simcuda_dim3 grid,
                     simcuda_dim3 block, unsigned dynamic_smem_bytes);
/* The same with a launch's attributes: a cluster shape (zeroes: none, or
 * one dividing the grid) and cooperative.  A cooperative launch of a
 * kernel that synchronizes runs each block on a thread of its own (the
 * blocks of a GPU's cooperative grid are all resident at once), so that
 * grid.sync() can meet them. */
struct simcuda_launch_attrs {
	simcuda_dim3 cluster;
	int cooperative;
};
int simcuda_run_grid_attrs(const struct simcuda_kernel *k, void *const *args, simcuda_dim3 grid,
                           simcuda_dim3 block, unsigned dynamic_smem_bytes,
                           const struct simcuda_launch_attrs *attrs);

#ifdef __cplusplus
}
#endif
#endif
