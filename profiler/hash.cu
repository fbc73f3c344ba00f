/*
 * hash.cu — content hashes of device buffers, for write-set discovery:
 * hashing where the data is avoids copying every referenced buffer to the
 * host twice per op.  Each 8-byte word is mixed with its index and the
 * mixes are summed (mod 2^64), so the result does not depend on the order
 * in which threads finish (and equals the host path's, writeset.c).
 *
 * One launch hashes up to REMAT_HASH_BATCH buffers: blockIdx.y picks the
 * buffer, the blocks along x share it, and block x of buffer y writes its
 * partial sum to out[y * gridDim.x + x] (the host adds them up: no atomics,
 * no zeroing before).  Built to PTX (hash.ptx, committed) for GPUs, and by
 * simcc for the simulated device; libremat embeds both and loads the one
 * the driver takes.
 */
#define REMAT_HASH_BATCH   32
#define REMAT_HASH_THREADS 256

struct remat_hash_batch {
	const unsigned char *p[REMAT_HASH_BATCH];
	unsigned long long n[REMAT_HASH_BATCH];
	unsigned long long *out;
};

__device__ static unsigned long long remat_mix(unsigned long long x, unsigned long long i)
{
	x ^= i * 0x9e3779b97f4a7c15ULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
}

extern "C" __global__ void remat_hash_batch(struct remat_hash_batch b)
{
	__shared__ unsigned long long part[REMAT_HASH_THREADS];
	const unsigned char *p = b.p[blockIdx.y];
	unsigned long long n = b.n[blockIdx.y], nw = n / 8, h = 0;
	const unsigned long long *w = (const unsigned long long *)p;
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
	part[threadIdx.x] = h;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
		if (threadIdx.x < s)
			part[threadIdx.x] += part[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		b.out[(unsigned long long)blockIdx.y * gridDim.x + blockIdx.x] = part[0];
}

#ifdef __SIMCUDA__
// A memory-bound pass over the bytes at 1 TB/s, after a 2 us launch.
SIMCUDA_COST(remat_hash_batch)
{
	(void)grid;
	(void)block;
	struct remat_hash_batch b = SIMCUDA_ARG(0);
	double bytes = 0;
	for (unsigned y = 0; y < grid.y && y < REMAT_HASH_BATCH; y++)
		bytes += (double)b.n[y];
	return 2000.0 + bytes / 1000.0;
}
#endif
