// Kernels of tests/e2e/progs/chain.c: a chain of activations, and one
// kernel that reads a scale through a pointer stored in device memory, which
// no parameter word reveals (a rebuild by replay then sees another value).
extern "C" __global__ void fwd(const float *x, float *y, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * a + 0.5f;
}
// fwd, which also adds one to *runs (mapped host memory, which the profile
// neither copies nor puts back) each time the device runs it: how many
// times a launch really ran, whatever libremat does around it.
extern "C" __global__ void fwd_counted(const float *x, float *y, int n, float a,
                                       unsigned long long *runs)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * a + 0.5f;
	if (i == 0)
		atomicAdd(runs, 1ull);
}
extern "C" __global__ void fwd_indirect(float *const *tbl, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * tbl[0][0];
}
extern "C" __global__ void fwd_side(const float *x, float *y, float *m, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		y[i] = x[i] * 1.5f + 0.25f;
		if (i < 64)
			m[i] = x[i] * 2.0f;
	}
}
// Reads, through x, also the 1024 floats right after x[0..n): what the
// profile cannot tell from its parameters.
extern "C" __global__ void fwd_peek(const float *x, float *y, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i] * a + x[n + (i & 1023)];
}
extern "C" __global__ void use_m(const float *m, float *acc, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		acc[i] = acc[i] * 0.5f + m[i & 63];
}
extern "C" __global__ void use(const float *y, float *acc, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		acc[i] = acc[i] * 0.5f + y[i];
}
// y += x * 1e-6: an update in place of values about 1e-6, whose complement
// (the blind-write proof's canary) is a float so large that adding that
// much leaves it unchanged.
extern "C" __global__ void add_tiny(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += x[i] * 1e-6f;
}
