// kernels.cu — the simulated NCCL's kernels, named as the real library's
// (ncclDevKernel_<Coll>[_<Op>_<type>]_RING_LL, ncclDevKernel_Generic for a
// group of several kinds), each taking ncclDevKernelArgsStorage<4096> by
// value.  On the simulated device a kernel is host code on the stream's
// worker: thread 0 of block 0 hands the work to libnccl.so.2 (exec.c),
// which exchanges data with the other ranks' processes.  There is no GPU
// build of this file: on a GPU the real libnccl.so.2 runs.
#include <stddef.h>
#include <string.h>

#include "simnccl_args.h"

template <size_t N> struct alignas(16) ncclDevKernelArgsStorage {
	char storage[N];
};

#ifdef __SIMCUDA__
#define SIMNCCL_KERNEL(name)                                                                       \
	__global__ void name(ncclDevKernelArgsStorage<SIMNCCL_ARGS_BYTES> args)                    \
	{                                                                                          \
		if (threadIdx.x == 0 && blockIdx.x == 0) {                                         \
			struct simnccl_args a;                                                     \
			memcpy(&a, args.storage, sizeof(a));                                       \
			if (a.magic == SIMNCCL_MAGIC)                                              \
				a.run(&a);                                                         \
		}                                                                                  \
	}

SIMNCCL_KERNEL(ncclDevKernel_Generic)
SIMNCCL_KERNEL(ncclDevKernel_AllGather_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_Broadcast_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_AllReduce_Sum_u8_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_AllReduce_Sum_u32_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_AllReduce_Sum_u64_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_AllReduce_Sum_f32_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_AllReduce_Sum_f64_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_ReduceScatter_Sum_u8_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_ReduceScatter_Sum_u32_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_ReduceScatter_Sum_u64_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_ReduceScatter_Sum_f32_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_ReduceScatter_Sum_f64_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_Reduce_Sum_u8_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_Reduce_Sum_u32_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_Reduce_Sum_u64_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_Reduce_Sum_f32_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_Reduce_Sum_f64_RING_LL)

// 5 us plus the bytes moved at 10 GB/s: a collective between processes of
// one machine, with its synchronisation.
static double simnccl_cost(void *const *a)
{
	struct simnccl_args s;
	memcpy(&s, a[0], sizeof(s));
	double bytes = 0;
	static const double size[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
	for (unsigned i = 0; i < s.nops && i < SIMNCCL_MAX_OPS; i++)
		bytes += (double)s.ops[i].count * size[s.ops[i].dtype < 12 ? s.ops[i].dtype : 0];
	return 5000.0 + bytes / 10.0;
}
// The device profiles keep that wire time (the link between ranks is not
// in a profile) and add the payload read and written on the device.
static simcuda_work simnccl_work(void *const *a)
{
	double wire = simnccl_cost(a);
	return {0.0, 2.0 * (wire - 5000.0) * 10.0, SIMCUDA_MATH_FP32, wire};
}
#define SIMNCCL_COST(name)                                                                         \
	SIMCUDA_COST(name)                                                                         \
	{                                                                                          \
		(void)grid;                                                                        \
		(void)block;                                                                       \
		return simnccl_cost(simcuda_cost_a.args);                                          \
	}                                                                                          \
	SIMCUDA_WORK(name)                                                                         \
	{                                                                                          \
		(void)grid;                                                                        \
		(void)block;                                                                       \
		return simnccl_work(simcuda_cost_a.args);                                          \
	}
SIMNCCL_COST(ncclDevKernel_Generic)
SIMNCCL_COST(ncclDevKernel_AllGather_RING_LL)
SIMNCCL_COST(ncclDevKernel_Broadcast_RING_LL)
SIMNCCL_COST(ncclDevKernel_AllReduce_Sum_u8_RING_LL)
SIMNCCL_COST(ncclDevKernel_AllReduce_Sum_u32_RING_LL)
SIMNCCL_COST(ncclDevKernel_AllReduce_Sum_u64_RING_LL)
SIMNCCL_COST(ncclDevKernel_AllReduce_Sum_f32_RING_LL)
SIMNCCL_COST(ncclDevKernel_AllReduce_Sum_f64_RING_LL)
SIMNCCL_COST(ncclDevKernel_ReduceScatter_Sum_u8_RING_LL)
SIMNCCL_COST(ncclDevKernel_ReduceScatter_Sum_u32_RING_LL)
SIMNCCL_COST(ncclDevKernel_ReduceScatter_Sum_u64_RING_LL)
SIMNCCL_COST(ncclDevKernel_ReduceScatter_Sum_f32_RING_LL)
SIMNCCL_COST(ncclDevKernel_ReduceScatter_Sum_f64_RING_LL)
SIMNCCL_COST(ncclDevKernel_Reduce_Sum_u8_RING_LL)
SIMNCCL_COST(ncclDevKernel_Reduce_Sum_u32_RING_LL)
SIMNCCL_COST(ncclDevKernel_Reduce_Sum_u64_RING_LL)
SIMNCCL_COST(ncclDevKernel_Reduce_Sum_f32_RING_LL)
SIMNCCL_COST(ncclDevKernel_Reduce_Sum_f64_RING_LL)
#endif
