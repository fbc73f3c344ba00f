/*
 * hash.cu — content hash of a device buffer, for write-set discovery on a
 * real GPU: hashing where the data is avoids copying every referenced
 * buffer to the host twice per op.  Each 8-byte word is mixed with its
 * index and the mixes are summed, so the result does not depend on the
 * order in which threads finish.  Built to PTX (hash.ptx, committed) and
 * embedded in libremat; *out must be zero before the launch.
 */
__device__ static unsigned long long remat_mix(unsigned long long x, unsigned long long i)
{
	x ^= i * 0x9e3779b97f4a7c15ULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
}

extern "C" __global__ void remat_hash(const unsigned char *p, unsigned long long n,
                                      unsigned long long *out)
{
	const unsigned long long *w = (const unsigned long long *)p;
	unsigned long long nw = n / 8, h = 0;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
	     i < nw; i += stride)
		h += remat_mix(w[i], i);
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		unsigned long long tail = 0;
		for (unsigned long long i = nw * 8; i < n; i++)
			tail = (tail << 8) | p[i];
		h += remat_mix(tail, nw);
	}
	atomicAdd(out, h);
}
