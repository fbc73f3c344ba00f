/*
 * testkernels.c — a kernel module for the simulated device written by hand
 * against simcuda_abi.h (what sim/bin/simcc generates from .cu), used by the
 * driver and kernel-library unit tests.
 */
#include "simcuda_abi.h"

#include <stddef.h>
#include <stdint.h>

#define TID (simcuda_blockIdx.x * simcuda_blockDim.x + simcuda_threadIdx.x)

/* __global__ void vec_add(const float *a, const float *b, float *c, int n) */
static void vec_add(void *const *args)
{
	const float *a = *(const float *const *)args[0];
	const float *b = *(const float *const *)args[1];
	float *c = *(float *const *)args[2];
	int n = *(const int *)args[3];
	unsigned i = TID;
	if ((int)i < n)
		c[i] = a[i] + b[i];
}

/* __global__ void fill_u32(unsigned *p, unsigned v, int n) */
static void fill_u32(void *const *args)
{
	unsigned *p = *(unsigned *const *)args[0];
	unsigned v = *(const unsigned *)args[1];
	int n = *(const int *)args[2];
	unsigned i = TID;
	if ((int)i < n)
		p[i] = v;
}

/* __global__ void append(unsigned *log, unsigned v): one thread appends v
 * at log[++log[0]], so the order of launches is visible. */
static void append(void *const *args)
{
	unsigned *log = *(unsigned *const *)args[0];
	unsigned v = *(const unsigned *)args[1];
	log[++log[0]] = v;
}

/* __global__ void copy_plus_one(const unsigned *src, unsigned *dst, int n) */
static void copy_plus_one(void *const *args)
{
	const unsigned *src = *(const unsigned *const *)args[0];
	unsigned *dst = *(unsigned *const *)args[1];
	int n = *(const int *)args[2];
	unsigned i = TID;
	if ((int)i < n)
		dst[i] = src[i] + 1;
}

/* __global__ void block_sum(const float *in, float *out): a tree
 * reduction through static __shared__ memory, one sum per block. */
static void block_sum(void *const *args)
{
	static __thread float smem[1024]; /* __shared__ float smem[1024] */
	const float *in = *(const float *const *)args[0];
	float *out = *(float *const *)args[1];
	unsigned t = simcuda_threadIdx.x, n = simcuda_blockDim.x;
	smem[t] = in[simcuda_blockIdx.x * n + t];
	simcuda_syncthreads();
	for (unsigned s = n / 2; s > 0; s /= 2) {
		if (t < s)
			smem[t] += smem[t + s];
		simcuda_syncthreads();
	}
	if (t == 0)
		out[simcuda_blockIdx.x] = smem[0];
}

/* __global__ void reverse_dyn(unsigned *p): reverses each block's slice
 * through extern __shared__ (dynamic) memory. */
static void reverse_dyn(void *const *args)
{
	unsigned *p = *(unsigned *const *)args[0];
	unsigned *smem = simcuda_dynamic_smem();
	unsigned t = simcuda_threadIdx.x, n = simcuda_blockDim.x;
	unsigned base = simcuda_blockIdx.x * n;
	smem[t] = p[base + t];
	simcuda_syncthreads();
	/* threadIdx read again after the barrier: each fiber must see its own */
	p[base + simcuda_threadIdx.x] = smem[n - 1 - simcuda_threadIdx.x];
}

/* __global__ void mixed(char c, double d, int *p, short s, long long q):
 * parameters with CUDA ABI alignment padding. */
static void mixed(void *const *args)
{
	char c = *(const char *)args[0];
	double d = *(const double *)args[1];
	int *p = *(int *const *)args[2];
	short s = *(const short *)args[3];
	long long q = *(const long long *)args[4];
	p[0] = c;
	p[1] = (int)d;
	p[2] = s;
	p[3] = (int)q;
}

/* __global__ void index3d(unsigned *out): every thread of a 3-D grid of
 * 3-D blocks writes its own coordinates at its global linear index. */
static void index3d(void *const *args)
{
	unsigned *out = *(unsigned *const *)args[0];
	simcuda_dim3 t = simcuda_threadIdx, b = simcuda_blockIdx, bd = simcuda_blockDim,
	             gd = simcuda_gridDim;
	unsigned block = (b.z * gd.y + b.y) * gd.x + b.x;
	unsigned thread = (t.z * bd.y + t.y) * bd.x + t.x;
	unsigned i = block * bd.x * bd.y * bd.z + thread;
	out[i] = t.x | t.y << 4 | t.z << 8 | b.x << 12 | b.y << 16 | b.z << 20;
}

/* __global__ void bad_sync(): calls __syncthreads but is (wrongly)
 * described with synchronizes = 0; the library must refuse it. */
static void bad_sync(void *const *args)
{
	(void)args;
	simcuda_syncthreads();
}

/* __global__ void grid_rotate(unsigned *a, unsigned *b, int n): every
 * thread writes its index, grid.sync(), then reads its neighbour block's
 * value: right only when the whole grid passed the barrier. */
static void grid_rotate(void *const *args)
{
	unsigned *a = *(unsigned *const *)args[0];
	unsigned *b = *(unsigned *const *)args[1];
	int n = *(const int *)args[2];
	unsigned i = TID;
	/* per-block static shared memory: each block's own */
	static __thread unsigned mine;
	if (simcuda_threadIdx.x == 0)
		mine = simcuda_blockIdx.x;
	a[i] = i;
	simcuda_grid_sync();
	b[i] = a[(i + simcuda_blockDim.x) % (unsigned)n] * 1000u + mine;
}

/* __global__ void cluster_rank(unsigned *out): the block's rank in its
 * cluster and the cluster's size, as cooperative groups' this_cluster()
 * gives them. */
static void cluster_rank(void *const *args)
{
	unsigned *out = *(unsigned *const *)args[0];
	simcuda_dim3 c = simcuda_clusterDim, b = simcuda_blockIdx;
	unsigned rank = (b.z % c.z * c.y + b.y % c.y) * c.x + b.x % c.x;
	if (simcuda_threadIdx.x == 0)
		out[(b.z * simcuda_gridDim.y + b.y) * simcuda_gridDim.x + b.x] =
		    rank * 100u + c.x * c.y * c.z;
}

static double fixed_cost(void *const *args, simcuda_dim3 grid, simcuda_dim3 block)
{
	(void)args;
	(void)grid;
	(void)block;
	return 12345.0;
}

/* append's work under a device profile: 5e6 fp32 flops, 1000 bytes and
 * 500 ns off the device (driver_clock.c prices it). */
static struct simcuda_work fixed_work(void *const *args, simcuda_dim3 grid, simcuda_dim3 block)
{
	(void)args;
	(void)grid;
	(void)block;
	return (struct simcuda_work){5e6, 1000.0, SIMCUDA_MATH_FP32, 500.0};
}

static const unsigned off_ptr3i[] = {0, 8, 16, 24}, size_ptr3i[] = {8, 8, 8, 4};
static const unsigned off_fill[] = {0, 8, 12}, size_fill[] = {8, 4, 4};
static const unsigned off_pv[] = {0, 8}, size_pv[] = {8, 4};
static const unsigned off_ppi[] = {0, 8, 16}, size_ppi[] = {8, 8, 4};
static const unsigned off_pp[] = {0, 8}, size_pp[] = {8, 8};
static const unsigned off_p[] = {0}, size_p[] = {8};
static const unsigned off_mixed[] = {0, 8, 16, 24, 32}, size_mixed[] = {1, 8, 8, 2, 8};

static const struct simcuda_kernel kernels[] = {
    {"vec_add", vec_add, 4, off_ptr3i, size_ptr3i, 28, 0, NULL, NULL},
    {"fill_u32", fill_u32, 3, off_fill, size_fill, 16, 0, NULL, NULL},
    {"append", append, 2, off_pv, size_pv, 12, 0, fixed_cost, fixed_work},
    {"copy_plus_one", copy_plus_one, 3, off_ppi, size_ppi, 20, 0, NULL, NULL},
    {"block_sum", block_sum, 2, off_pp, size_pp, 16, 1, NULL, NULL},
    {"reverse_dyn", reverse_dyn, 1, off_p, size_p, 8, 1, NULL, NULL},
    {"mixed", mixed, 5, off_mixed, size_mixed, 40, 0, NULL, NULL},
    {"bad_sync", bad_sync, 0, NULL, NULL, 0, 0, NULL, NULL},
    {"index3d", index3d, 1, off_p, size_p, 8, 0, NULL, NULL},
    {"grid_rotate", grid_rotate, 3, off_ppi, size_ppi, 20, 1, NULL, NULL},
    {"cluster_rank", cluster_rank, 1, off_p, size_p, 8, 0, NULL, NULL},
};

__attribute__((visibility("default"))) const struct simcuda_module simcuda_module = {
    SIMCUDA_ABI_VERSION, sizeof(kernels) / sizeof(kernels[0]), kernels};
