// A module without any cost function: its kernels leave cost_ns NULL, so
// the driver's default model applies.
extern "C" __global__ void plain_fill(int *out, int value)
{
	out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}
