/*
 * fake_libcuda.h — what the fake driver (fake_libcuda.c) saw of its last
 * call, and what it answers.
 */
#ifndef FAKE_LIBCUDA_H
#define FAKE_LIBCUDA_H

#include <stdint.h>
#include <cuda.h>

struct fake_cuda {
	int calls;        /* calls made to it */
	const char *last; /* the last one's name */
	uint64_t arg[3];  /* its arguments: a launch's function, grid x, block x;
	                   * a copy's destination, bytes */
	void *ptr;        /* a launch's parameters, a copy's source */
	CUstream stream;  /* a launch's stream */
	unsigned shmem;
	CUresult rc; /* what every call returns */
};

#endif
