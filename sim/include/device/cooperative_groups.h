/*
 * cooperative_groups.h — the part of CUDA's cooperative groups that simcc
 * supports, for the simulated device: the thread block and its static
 * tiles (tiled_partition<N>, N a power of two up to 32) with their ranks,
 * sync and collectives, on top of simcuda_kernel.h's warp functions; the
 * grid (this_grid(): valid and synchronizable in a cooperative launch) and
 * the cluster (this_cluster(): ranks and shape; its sync() only for a
 * cluster of one block, as blocks of a cluster run one after another).
 * sim/bin/simcc searches include/device/ before the toolkit's headers, so
 * `#include <cooperative_groups.h>` finds this file; nvcc never sees it.
 * Semantics follow the toolkit's header (ranks, masks, operator order).
 */
#ifndef SIMCUDA_COOPERATIVE_GROUPS_H
#define SIMCUDA_COOPERATIVE_GROUPS_H

namespace cooperative_groups
{

class thread_block
{
      public:
	static void sync()
	{
		__syncthreads();
	}
	static unsigned thread_rank()
	{
		return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
	}
	static unsigned num_threads()
	{
		return blockDim.x * blockDim.y * blockDim.z;
	}
	static unsigned size()
	{
		return num_threads();
	}
	static dim3 group_index()
	{
		return dim3(blockIdx.x, blockIdx.y, blockIdx.z);
	}
	static dim3 thread_index()
	{
		return dim3(threadIdx.x, threadIdx.y, threadIdx.z);
	}
	static dim3 dim_threads()
	{
		return blockDim;
	}
	static dim3 group_dim()
	{
		return blockDim;
	}
};

static inline thread_block this_thread_block()
{
	return thread_block();
}

/* N consecutive threads of the block (by thread rank) inside one warp. */
template <unsigned N, typename Parent = void> class thread_block_tile
{
	static_assert(N == 1 || N == 2 || N == 4 || N == 8 || N == 16 || N == 32,
	              "Size must be one of 1/2/4/8/16/32");
	static unsigned lane()
	{
		return thread_block::thread_rank() % 32u;
	}

      public:
	thread_block_tile() = default;
	/* A tile of a known parent converts to the plain thread_block_tile<N>. */
	template <typename Q> thread_block_tile(const thread_block_tile<N, Q> &) {}

	/* The tile's lanes within the warp. */
	static unsigned build_mask()
	{
		return N == 32 ? 0xffffffffu : ((1u << N) - 1u) << (lane() & ~(N - 1u));
	}
	static void sync()
	{
		__syncwarp(build_mask());
	}
	static unsigned thread_rank()
	{
		return thread_block::thread_rank() & (N - 1u);
	}
	static constexpr unsigned num_threads()
	{
		return N;
	}
	static constexpr unsigned size()
	{
		return N;
	}
	static unsigned meta_group_rank()
	{
		return thread_block::thread_rank() / N;
	}
	static unsigned meta_group_size()
	{
		return (thread_block::size() + N - 1u) / N;
	}
	template <typename T> static T shfl(T var, int src_rank)
	{
		return __shfl_sync(build_mask(), var, src_rank, (int)N);
	}
	template <typename T> static T shfl_down(T var, unsigned delta)
	{
		return __shfl_down_sync(build_mask(), var, delta, (int)N);
	}
	template <typename T> static T shfl_up(T var, unsigned delta)
	{
		return __shfl_up_sync(build_mask(), var, delta, (int)N);
	}
	template <typename T> static T shfl_xor(T var, unsigned lane_mask)
	{
		return __shfl_xor_sync(build_mask(), var, (int)lane_mask, (int)N);
	}
	static int any(int predicate)
	{
		return __any_sync(build_mask(), predicate);
	}
	static int all(int predicate)
	{
		return __all_sync(build_mask(), predicate);
	}
	/* Bit i for the tile's thread of rank i. */
	static unsigned ballot(int predicate)
	{
		return __ballot_sync(build_mask(), predicate) >> (lane() & ~(N - 1u));
	}
};

/* The whole grid.  sync() waits for every thread of it: only in a
 * cooperative launch (is_valid() says whether it is one). */
class grid_group
{
      public:
	static bool is_valid()
	{
		return simcuda_cooperative != 0;
	}
	static void sync()
	{
		simcuda_grid_sync();
	}
	static unsigned long long num_blocks()
	{
		return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
	}
	static unsigned long long block_rank()
	{
		return ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x +
		       blockIdx.x;
	}
	static unsigned long long num_threads()
	{
		return num_blocks() * thread_block::num_threads();
	}
	static unsigned long long size()
	{
		return num_threads();
	}
	static unsigned long long thread_rank()
	{
		return block_rank() * thread_block::num_threads() + thread_block::thread_rank();
	}
	static dim3 dim_blocks()
	{
		return gridDim;
	}
	static dim3 block_index()
	{
		return dim3(blockIdx.x, blockIdx.y, blockIdx.z);
	}
};

static inline grid_group this_grid()
{
	return grid_group();
}

/* The block's cluster (the launch's cluster shape; one block without one). */
class cluster_group
{
      public:
	static dim3 dim_blocks()
	{
		return dim3(simcuda_clusterDim.x, simcuda_clusterDim.y, simcuda_clusterDim.z);
	}
	static unsigned num_blocks()
	{
		return simcuda_clusterDim.x * simcuda_clusterDim.y * simcuda_clusterDim.z;
	}
	static dim3 block_index()
	{
		return dim3(blockIdx.x % simcuda_clusterDim.x, blockIdx.y % simcuda_clusterDim.y,
		            blockIdx.z % simcuda_clusterDim.z);
	}
	static unsigned block_rank()
	{
		dim3 i = block_index();
		return (i.z * simcuda_clusterDim.y + i.y) * simcuda_clusterDim.x + i.x;
	}
	static unsigned num_threads()
	{
		return num_blocks() * thread_block::num_threads();
	}
	static unsigned thread_rank()
	{
		return block_rank() * thread_block::num_threads() + thread_block::thread_rank();
	}
	static void sync()
	{
		if (num_blocks() != 1)
			simcuda_cluster_sync_unsupported();
		__syncthreads();
	}
};

static inline cluster_group this_cluster()
{
	return cluster_group();
}

template <unsigned N>
static inline thread_block_tile<N, thread_block> tiled_partition(const thread_block &)
{
	return thread_block_tile<N, thread_block>();
}

static inline void sync(const thread_block &g)
{
	g.sync();
}
template <unsigned N, typename P> static inline void sync(const thread_block_tile<N, P> &g)
{
	g.sync();
}

/* The operators cg::reduce takes, as the toolkit defines them. */
template <typename T> struct plus {
	T operator()(T a, T b) const
	{
		return a + b;
	}
};
template <typename T> struct less {
	T operator()(T a, T b) const
	{
		return (b < a) ? b : a;
	}
};
template <typename T> struct greater {
	T operator()(T a, T b) const
	{
		return (a < b) ? b : a;
	}
};
template <typename T> struct bit_and {
	T operator()(T a, T b) const
	{
		return a & b;
	}
};
template <typename T> struct bit_or {
	T operator()(T a, T b) const
	{
		return a | b;
	}
};
template <typename T> struct bit_xor {
	T operator()(T a, T b) const
	{
		return a ^ b;
	}
};

} // namespace cooperative_groups

#endif
