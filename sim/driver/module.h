/*
 * module.h — loaded modules/libraries and their functions, shared by
 * module.c (loading), function.c (queries) and launch.c.
 */
#ifndef SIMCUDA_DRIVER_MODULE_H
#define SIMCUDA_DRIVER_MODULE_H

#include "driver.h"

/* The default cap on dynamic shared memory per launch (48 KiB), raised by
 * cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES). */
#define DEFAULT_MAX_DYNAMIC_SMEM 49152
#define MAX_DYNAMIC_SMEM_OPTIN   232448 /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */

struct sim_module {
	void *dl;
	const struct simcuda_module *m;
	struct sim_func *funcs;   /* CUfunction handles, one per kernel */
	struct sim_func *kernels; /* CUkernel handles (libraries only) */
	bool library;
	/* The memfd of an in-memory image, open while loaded: dlopen knows the
	 * object by its /proc/self/fd path, which a reused descriptor number
	 * would give the next image. */
	int image_fd;
};

CUresult module_load_file(const char *path, struct sim_module **out, bool library);
CUresult module_load_image(const void *image, struct sim_module **out, bool library);
void module_unload(struct sim_module *mod);

/* A CUfunction, or a CUkernel standing in for one (CUDA 12 allows both
 * wherever a function is launched or queried). */
struct sim_func *func_lookup(const void *h);

#endif
