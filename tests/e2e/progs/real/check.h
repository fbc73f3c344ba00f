// check.h — the error check the programs in this directory share, as
// small third-party CUDA trainers write it: print the failed call and exit.
#ifndef REAL_CHECK_H
#define REAL_CHECK_H
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			printf("%s: %s\n", #x, cudaGetErrorString(e_));                            \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

#endif
