/*
 * occupancy.c — occupancy queries, answered from the simulated device's
 * limits (2048 threads, 32 blocks and 228 KiB shared memory per SM), as
 * a register-light kernel would get on an sm_90 GPU.
 */
#include "module.h"

int occupancy_blocks_per_sm(unsigned threads, size_t smem)
{
	int by_threads = threads ? (int)(2048 / threads) : 0, by_smem = 32;
	if (smem)
		by_smem = (int)(SIM_SMEM_PER_SM / (smem + 1024));
	int n = by_threads < 32 ? by_threads : 32;
	return n < by_smem ? n : by_smem;
}

static int blocks_per_sm(int block_size, size_t smem)
{
	return occupancy_blocks_per_sm((unsigned)block_size, smem);
}

static CUresult max_active(int *n, CUfunction h, int block_size, size_t smem, unsigned flags)
{
	if (!sim_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	struct sim_func *f = func_lookup(h);
	if (f == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	if (n == NULL || block_size <= 0 || block_size > 1024 ||
	    (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
		return CUDA_ERROR_INVALID_VALUE;
	*n = smem > (size_t)f->max_dynamic_smem ? 0 : blocks_per_sm(block_size, smem);
	return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                                    int blockSize,
                                                                    size_t dynamicSMemSize)
{
	cuOccupancyMaxActiveBlocksPerMultiprocessor_params p = {numBlocks, func, blockSize,
	                                                        dynamicSMemSize};
	API_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessor, &p,
	         max_active(numBlocks, func, blockSize, dynamicSMemSize, 0));
}

EXPORT CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags)
{
	cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_params p = {numBlocks, func, blockSize,
	                                                                 dynamicSMemSize, flags};
	API_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, &p,
	         max_active(numBlocks, func, blockSize, dynamicSMemSize, flags));
}
