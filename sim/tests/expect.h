/*
 * expect.h — EXPECT(cond) for the test programs that run outside cmocka
 * (abi_program.c, the nvcc-built runtime_nvcc_*.cu): one line naming the
 * condition on stderr, then exit status 1.
 */
#ifndef SIMCUDA_TEST_EXPECT_H
#define SIMCUDA_TEST_EXPECT_H

#include <stdio.h>
#include <stdlib.h>

#define EXPECT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);        \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#endif
