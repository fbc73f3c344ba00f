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

#endif
