// simcc_warp.cu — warp-level CUDA for sim/bin/simcc: shuffles, votes,
// __syncwarp, __activemask, cooperative groups, integer intrinsics, and C++
// (mangled) kernel names.  sim/tests/simcc/test_warp.c runs the module simcc
// builds and checks every result against values worked out by hand from
// the CUDA documentation; the build also compiles this file with nvcc.
#include <stddef.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

#define FULL 0xffffffffu

// Every shuffle at segment width `width`; 8 results per thread.  Thread t
// holds 100 * warp + lane.
__global__ void shuffles(int *out, int width)
{
	int t = threadIdx.x, lane = t % warpSize;
	int v = 100 * (t / warpSize) + lane;
	int *o = out + 8 * t;
	o[0] = __shfl_sync(FULL, v, lane + 3, width);
	o[1] = __shfl_up_sync(FULL, v, 2, width);
	o[2] = __shfl_down_sync(FULL, v, 5, width);
	o[3] = __shfl_xor_sync(FULL, v, 6, width);
	o[4] = __shfl_sync(FULL, v, -1, width);
	double d = __shfl_down_sync(FULL, 0.5 + v, 1, width);
	o[5] = (int)(2.0 * d);
	long long ll = __shfl_xor_sync(FULL, (3ll << 40) + v, 1, width);
	o[6] = (int)(ll >> 40) * 100000 + (int)(ll & 0xffff);
	unsigned u = __shfl_sync(FULL, (unsigned)v * 3u, 0, width);
	o[7] = (int)u;
}

// Votes in a block of 48 threads: warp 1 has only lanes 0-15.  Four
// results per thread; the last comes from two half-warp groups.
__global__ void votes(unsigned *out, const int *pred)
{
	int t = threadIdx.x, lane = t % 32;
	int p = pred[t];
	out[4 * t + 0] = __ballot_sync(FULL, p);
	out[4 * t + 1] = __any_sync(FULL, p);
	out[4 * t + 2] = __all_sync(FULL, p);
	out[4 * t + 3] = __ballot_sync(lane < 16 ? 0x0000ffffu : 0xffff0000u, p);
}

// Warps of one block take different numbers of shuffles between the same
// barriers: warp w rotates its values left by one lane w + 1 times, then,
// after a barrier, does 5 - w % 5 rounds of a butterfly sum.
__global__ void uneven_rounds(const int *in, int *out)
{
	__shared__ int first[32];
	int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
	int base = blockIdx.x * blockDim.x;
	int v = in[base + threadIdx.x];
	for (int r = 0; r <= warp; r++)
		v = __shfl_sync(FULL, v, lane + 1);
	if (lane == 0)
		first[warp] = v;
	__syncthreads();
	int s = v;
	for (int r = 0, m = 16; r < 5 - warp % 5; r++, m >>= 1)
		s += __shfl_xor_sync(FULL, s, m);
	__syncwarp();
	__syncthreads();
	out[2 * (base + threadIdx.x)] = v + first[(warp + 1) % nwarps];
	out[2 * (base + threadIdx.x) + 1] = s;
}

// Lanes 16-31 of warp 1 return first; they count as arrived at the later
// shuffle and barrier, but a shuffle that reads them gets junk (undefined
// on a GPU).  Block of 64 threads.
__global__ void exit_early(int *out)
{
	int t = threadIdx.x;
	if (t >= 48)
		return;
	out[2 * t] = __shfl_down_sync(FULL, t, 16);
	__syncthreads();
	out[2 * t + 1] = __shfl_sync(0x0000ffffu << (t & 16), t, (t & 16) + 3);
}

// __activemask on three sides of a branch, and once with the warp together.
__global__ void active_lanes(unsigned *out)
{
	int t = threadIdx.x, lane = t % 32;
	out[2 * t] = __activemask();
	if (lane < 10)
		out[2 * t + 1] = __activemask();
	else if (lane < 20)
		out[2 * t + 1] = __activemask();
	else
		out[2 * t + 1] = __activemask();
}

// Cooperative groups: warp tiles and tiles of 8.  Eight results per thread.
__global__ void tiles(const float *in, float *out)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
	cg::thread_block_tile<8> oct = cg::tiled_partition<8>(block);
	float x = in[block.thread_rank()];
	float *o = out + 8 * block.thread_rank();
	o[0] = cg::reduce(warp, x, cg::plus<float>{});
	o[1] = cg::reduce(warp, x, cg::greater<float>{});
	o[2] = cg::reduce(oct, x, cg::less<float>{});
	o[3] = oct.shfl_down(x, 1);
	o[4] = (float)warp.meta_group_rank();
	o[5] = (float)warp.meta_group_size();
	o[6] = (float)oct.thread_rank();
	o[7] = (float)oct.ballot(x > 0.0f);
	block.sync();
	warp.sync();
	cg::sync(oct);
}

// Integer intrinsics, cache-hinted loads and stores, min/max on size_t,
// warpSize.  One thread per input; nine results each.
extern "C" __global__ void bits(const unsigned *in, unsigned long long *out, size_t n)
{
	size_t i = threadIdx.x;
	unsigned x = __ldg(in + i);
	unsigned long long wide = (unsigned long long)x << 32 | __ldcs(in + (i + 1) % n);
	unsigned long long *o = out + 9 * i;
	__stcs(o + 0, (unsigned long long)__popc(x));
	o[1] = (unsigned long long)__popcll(wide);
	o[2] = __brev(x);
	o[3] = __brevll(wide);
	o[4] = (unsigned long long)__clz((int)x);
	o[5] = (unsigned long long)__ffs((int)x);
	o[6] = min(n, i + 2);
	o[7] = max(i, (size_t)2);
	o[8] = (unsigned long long)warpSize;
}

// C++ names: nvcc registers these mangled, and so must simcc.
namespace simcc_test
{
__global__ void scale(float *p, float f)
{
	p[threadIdx.x] *= f;
}
} // namespace simcc_test

__attribute__((unused)) static __global__ void add_one(int *p)
{
	p[threadIdx.x] += 1;
}

// Misuse the simulator refuses with a message (a GPU hangs or leaves the
// result undefined).  Blocks of 32 threads.
__global__ void deadlock_barrier(int *out)
{
	if (threadIdx.x == 5) {
		__syncthreads();
		return;
	}
	out[threadIdx.x] = __shfl_sync(FULL, (int)threadIdx.x, 0);
	__syncthreads();
}

__global__ void mask_mismatch(int *out)
{
	unsigned mask = threadIdx.x < 16 ? FULL : 0xffff0000u;
	out[threadIdx.x] = __shfl_sync(mask, (int)threadIdx.x, 0);
}

__global__ void not_in_mask(int *out)
{
	out[threadIdx.x] = __shfl_sync(0x1u, (int)threadIdx.x, 0);
}

__global__ void bad_width(int *out)
{
	out[threadIdx.x] = __shfl_sync(FULL, (int)threadIdx.x, 0, 12);
}
