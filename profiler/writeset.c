/*
 * writeset.c — which buffers an op wrote: every referenced buffer is hashed
 * before and after it (profile.c).  The hashing kernel (hash.cu) hashes up
 * to REMAT_HASH_BATCH buffers in one launch where the data is; libremat
 * carries it twice, as PTX for a GPU and as the simulated device's module
 * (built by simcc), and loads whichever the driver takes, so the profiled
 * iteration costs on the simulator what it will on a GPU.  Where neither
 * loads, each buffer is copied to the host and hashed there (the same
 * hash).  Everything runs on a non-blocking stream of libremat's own:
 * never the legacy stream, which would wait for every blocking stream (a
 * collective's too).  Only in the one profiled iteration: the kernel's
 * device scratch is given back when the profile ends (prof_ws_end), so
 * that the iterations under a plan have the whole device.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/capture.h"
#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

/* hash.ptx (NUL-terminated, as cuModuleLoadData wants PTX text) and the
 * simcc module of hash.cu, embedded at build time. */
__asm__(".section .rodata\n"
        ".p2align 3\n"
        "remat_hash_ptx:\n"
        ".incbin \"profiler/hash.ptx\"\n"
        ".byte 0\n"
        ".p2align 6\n"
        "remat_hash_sim:\n"
        ".incbin \"" REMAT_HASH_SIM "\"\n"
        ".text\n");
extern const char remat_hash_ptx[] __attribute__((visibility("hidden")));
extern const char remat_hash_sim[] __attribute__((visibility("hidden")));

#define BATCH      32 /* REMAT_HASH_BATCH of hash.cu */
#define THREADS    256
#define MAX_BLOCKS 64 /* per buffer */

struct batch_param { /* struct remat_hash_batch of hash.cu */
	uint64_t p[BATCH];
	uint64_t n[BATCH];
	uint64_t out;
};

static int mode; /* 0 untried, 1 device kernel, 2 host copy */
static CUfunction fn;
static CUstream stream;
static CUdeviceptr partial;
static uint64_t partial_host[BATCH * MAX_BLOCKS];
static unsigned char *stage;
static size_t stage_cap;

static CUresult load(const void *image, const char *what)
{
	CUmodule m;
	CUresult r = remat_drv.cuModuleLoadData(&m, image);
	if (r == CUDA_SUCCESS)
		r = remat_drv.cuModuleGetFunction(&fn, m, PROF_HASH_KERNEL);
	if (r == CUDA_SUCCESS)
		remat_log(REMAT_LOG_INFO, "write sets: hashing on the device (%s)", what);
	return r;
}

void prof_ws_init(void)
{
	if (mode == 1 && !partial &&
	    remat_drv.cuMemAlloc(&partial, sizeof(partial_host)) != CUDA_SUCCESS)
		partial = 0; /* this profile hashes host copies */
	if (mode)
		return;
	mode = 2;
	if (!remat_drv.cuStreamCreate || !remat_drv.cuMemcpyDtoHAsync ||
	    remat_drv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
		stream = NULL;
		remat_log(REMAT_LOG_INFO, "write sets: no stream of libremat's own; hashing host "
		                          "copies on the legacy stream");
		return;
	}
	CUresult r = CUDA_ERROR_NOT_SUPPORTED, r2 = r;
	if (remat_drv.cuModuleLoadData &&
	    remat_drv.cuMemAlloc(&partial, sizeof(partial_host)) == CUDA_SUCCESS) {
		r = load(remat_hash_ptx, "embedded PTX kernel");
		/* A driver that takes no PTX (the simulated device) may take the
		 * module built for it; a GPU refuses that one (not its ELF). */
		if (r != CUDA_SUCCESS)
			r2 = load(remat_hash_sim, "embedded module of the simulated device");
	}
	if (r == CUDA_SUCCESS || r2 == CUDA_SUCCESS) {
		mode = 1;
		return;
	}
	remat_log(REMAT_LOG_INFO,
	          "write sets: the hashing kernel does not load here (PTX: error %d, the simulated "
	          "device's module: error %d); hashing host copies instead",
	          (int)r, (int)r2);
}

static uint64_t mix(uint64_t x, uint64_t i)
{
	x ^= i * 0x9e3779b97f4a7c15ULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
}

CUresult prof_ws_copy(void *host, uint64_t dev, size_t size, int to_host)
{
	if (!stream || (!to_host && !remat_drv.cuMemcpyHtoDAsync))
		return to_host ? remat_drv.cuMemcpyDtoH(host, dev, size)
		               : remat_drv.cuMemcpyHtoD(dev, host, size);
	CUresult r = to_host ? remat_drv.cuMemcpyDtoHAsync(host, dev, size, stream)
	                     : remat_drv.cuMemcpyHtoDAsync(dev, host, size, stream);
	return r == CUDA_SUCCESS ? remat_drv.cuStreamSynchronize(stream) : r;
}

static uint64_t host_hash(uint64_t addr, uint64_t size)
{
	if (size > stage_cap) {
		unsigned char *p = realloc(stage, size);
		if (!p)
			return 0;
		stage = p;
		stage_cap = size;
	}
	CUresult r = stream ? remat_drv.cuMemcpyDtoHAsync(stage, addr, size, stream)
	                    : remat_drv.cuMemcpyDtoH(stage, addr, size);
	if (r != CUDA_SUCCESS || (stream && remat_drv.cuStreamSynchronize(stream) != CUDA_SUCCESS))
		return 0;
	uint64_t nw = size / 8, h = 0, tail = 0;
	for (uint64_t i = 0; i < nw; i++) {
		uint64_t w;
		__builtin_memcpy(&w, stage + i * 8, 8);
		h += mix(w, i);
	}
	for (uint64_t i = nw * 8; i < size; i++)
		tail = (tail << 8) | stage[i];
	return h + mix(tail, nw);
}

void prof_ws_end(void)
{
	/* cuMemFree is an unsafe call during a capture: then keep it. */
	if (partial && !remat_capture_strict() && remat_drv.cuMemFree(partial) == CUDA_SUCCESS)
		partial = 0;
	free(stage);
	stage = NULL;
	stage_cap = 0;
}

/* Up to BATCH ranges in one launch; -1 when the device path failed. */
static int device_batch(const uint64_t (*r)[2], size_t n, uint64_t *out)
{
	if (!partial)
		return -1;
	struct batch_param b;
	memset(&b, 0, sizeof(b));
	uint64_t most = 0;
	for (size_t i = 0; i < n; i++) {
		b.p[i] = r[i][0];
		b.n[i] = r[i][1];
		most = r[i][1] > most ? r[i][1] : most;
	}
	b.out = partial;
	unsigned blocks = (unsigned)(most / 8 / THREADS + 1);
	blocks = blocks > MAX_BLOCKS ? MAX_BLOCKS : blocks;
	void *args[] = {&b};
	prof_cupti_tls.internal = 1;
	CUresult e = remat_drv.cuLaunchKernel(fn, blocks, (unsigned)n, 1, THREADS, 1, 1, 0, stream,
	                                      args, NULL);
	if (e == CUDA_SUCCESS)
		e = remat_drv.cuMemcpyDtoHAsync(partial_host, partial,
		                                (size_t)n * blocks * sizeof(uint64_t), stream);
	if (e == CUDA_SUCCESS)
		e = remat_drv.cuStreamSynchronize(stream);
	prof_cupti_tls.internal = 0;
	if (e != CUDA_SUCCESS)
		return -1;
	for (size_t i = 0; i < n; i++) {
		out[i] = 0;
		for (unsigned k = 0; k < blocks; k++)
			out[i] += partial_host[i * blocks + k];
	}
	return 0;
}

void prof_ws_hash(const uint64_t (*ranges)[2], size_t n, uint64_t *out)
{
	if (!mode)
		prof_ws_init();
	for (size_t at = 0; at < n; at += BATCH) {
		size_t k = n - at < BATCH ? n - at : BATCH;
		if (mode == 1 && device_batch(ranges + at, k, out + at) == 0)
			continue;
		for (size_t i = at; i < at + k; i++)
			out[i] = host_hash(ranges[i][0], ranges[i][1]);
	}
}
