/*
 * writeset.c — which buffers an op wrote: hash every referenced buffer
 * before and after it.  On a real GPU a small kernel (hash.cu, embedded as
 * PTX) hashes in place; where that module cannot load (the simulated
 * device loads no PTX) the buffer is copied to the host and hashed there.
 * Either way this runs only in the one profiled iteration.
 */
#include <stdlib.h>

#include "../core/driver.h"
#include "../core/log.h"
#include "internal.h"

/* hash.ptx, embedded at build time; NUL-terminated as cuModuleLoadData
 * wants PTX text. */
__asm__(".section .rodata\n"
        ".p2align 3\n"
        "remat_hash_ptx:\n"
        ".incbin \"profiler/hash.ptx\"\n"
        ".byte 0\n"
        ".text\n");
extern const char remat_hash_ptx[] __attribute__((visibility("hidden")));

static int mode; /* 0 untried, 1 device kernel, 2 host copy */
uint64_t prof_ws_launches;
static CUfunction fn;
static CUdeviceptr scratch;
static unsigned char *stage;
static size_t stage_cap;

void prof_ws_init(void)
{
	if (mode)
		return;
	CUmodule m;
	CUresult r = remat_drv.cuModuleLoadData ? remat_drv.cuModuleLoadData(&m, remat_hash_ptx)
	                                        : CUDA_ERROR_NOT_SUPPORTED;
	if (r == CUDA_SUCCESS &&
	    remat_drv.cuModuleGetFunction(&fn, m, "remat_hash") == CUDA_SUCCESS &&
	    remat_drv.cuMemAlloc(&scratch, 8) == CUDA_SUCCESS && remat_drv.cuMemsetD8) {
		mode = 1;
		remat_log(REMAT_LOG_INFO,
		          "write sets: hashing on the device (embedded PTX kernel)");
		return;
	}
	mode = 2;
	remat_log(REMAT_LOG_INFO,
	          "write sets: the hashing module does not load here (error %d); hashing host "
	          "copies instead",
	          (int)r);
}

static uint64_t mix(uint64_t x, uint64_t i)
{
	x ^= i * 0x9e3779b97f4a7c15ULL;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
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
	if (remat_drv.cuMemcpyDtoH(stage, addr, size) != CUDA_SUCCESS)
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

static uint64_t device_hash(uint64_t addr, uint64_t size)
{
	unsigned long long n = size;
	void *args[] = {&addr, &n, &scratch};
	unsigned blocks = (unsigned)(size / 8 / 256 + 1);
	if (blocks > 1024)
		blocks = 1024;
	uint64_t h = 0;
	prof_cupti_tls.internal = 1;
	if (remat_drv.cuMemsetD8(scratch, 0, 8) != CUDA_SUCCESS ||
	    remat_drv.cuLaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, NULL, args, NULL) !=
	        CUDA_SUCCESS ||
	    remat_drv.cuMemcpyDtoH(&h, scratch, 8) != CUDA_SUCCESS) {
		prof_cupti_tls.internal = 0;
		return host_hash(addr, size);
	}
	prof_cupti_tls.internal = 0;
	prof_ws_launches++;
	return h;
}

uint64_t prof_ws_hash(uint64_t addr, uint64_t size)
{
	if (!mode)
		prof_ws_init();
	return mode == 1 ? device_hash(addr, size) : host_hash(addr, size);
}
