/*
 * progs.h — what the driver-API test programs of tests/e2e/progs share: a
 * failing call prints itself and its result on stdout (where the tests
 * compare output) and exits 2.
 */
#ifndef REMAT_E2E_PROGS_H
#define REMAT_E2E_PROGS_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		CUresult r_ = (x);                                                                 \
		if (r_) {                                                                          \
			printf("%s: %d\n", #x, (int)r_);                                           \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

/* Device 0's primary context, current on this thread. */
static inline CUcontext prog_context(void)
{
	CUdevice dev;
	CUcontext ctx;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	return ctx;
}

#endif
