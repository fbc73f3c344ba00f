// Kernels exercising the CUDA C subset that sim/bin/simcc supports; built both
// by simcc (sim/tests/simcc/test_simcc.c runs them) and, when present, by nvcc.
#include <stdint.h>

struct mixed {
	char tag;
	double value;
	int count;
};

// Parameter layout: char at 0, int at 4, double at 8, pointer at 16,
// struct (align 8, size 24) at 24, char at 48, long long at 56 -> 64 bytes.
extern "C" __global__ void params_mixed(char c, int i, double d, double *out, struct mixed m,
                                        char c2, long long ll)
{
	out[0] = c;
	out[1] = i;
	out[2] = d;
	out[3] = m.tag;
	out[4] = m.value;
	out[5] = m.count;
	out[6] = c2;
	out[7] = (double)ll;
}

extern "C" __global__ void no_params(void) {}

__device__ float tree_sum(float *s)
{
	for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
		if (threadIdx.x < stride)
			s[threadIdx.x] += s[threadIdx.x + stride];
		__syncthreads();
	}
	return s[0];
}

// One block per row: __shared__ array, barrier reached through a helper.
extern "C" __global__ void row_sum(const float *in, float *out, int cols)
{
	__shared__ float partial[256];
	float acc = 0.0f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		acc += in[blockIdx.x * cols + c];
	partial[threadIdx.x] = acc;
	__syncthreads();
	float total = tree_sum(partial);
	if (threadIdx.x == 0)
		out[blockIdx.x] = total;
}

// Dynamic shared memory: each block reverses its slice.
extern "C" __global__ void reverse_block(const int *in, int *out)
{
	extern __shared__ int slice[];
	int base = blockIdx.x * blockDim.x;
	slice[threadIdx.x] = in[base + threadIdx.x];
	__syncthreads();
	out[base + threadIdx.x] = slice[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void atomics(int *count, float *fsum, int *imax, unsigned *flag,
                                   const float *vals, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	atomicAdd(count, 1);
	atomicAdd(fsum, vals[i]);
	atomicMax(imax, (i * 37) % 101);
	atomicCAS(flag, 0u, (unsigned)i + 1u);
}

// Plain elementwise kernel with math functions and 2-D indexing.
extern "C" __global__ void math2d(float *out, int width)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	float v = (float)(y * width + x) / 100.0f;
	out[y * width + x] = expf(v) + tanhf(v) + sqrtf(v);
}

#ifdef __SIMCUDA__
SIMCUDA_COST(math2d)
{
	return 100.0 + 2.0 * SIMCUDA_ARG(1) * grid.y * block.y;
}
// The device profiles' price: its flops and bytes, from the same arguments.
SIMCUDA_WORK(math2d)
{
	double n = (double)SIMCUDA_ARG(1) * grid.y * block.y;
	return {30.0 * n, 4.0 * n, SIMCUDA_MATH_FP32, 0.0};
}
#endif

#ifdef __SIMCUDA__
// Every kernel above without its own SIMCUDA_COST gets this one.
SIMCUDA_DEFAULT_COST
{
	return 7.0 * grid.x * block.x;
}
#endif

// CUDA's fast-math intrinsics, one per thread.
extern "C" __global__ void fast_math(const float *in, float *out)
{
	float x = in[threadIdx.x], s, c;
	__sincosf(x, &s, &c);
	float *o = out + 10 * threadIdx.x;
	o[0] = __expf(x);
	o[1] = __exp10f(x);
	o[2] = __logf(x);
	o[3] = __log2f(x);
	o[4] = __log10f(x);
	o[5] = __sinf(x);
	o[6] = __cosf(x);
	o[7] = __tanf(x);
	o[8] = __powf(x, 1.5f);
	o[9] = s + c;
}
