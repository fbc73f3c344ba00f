/*
 * simcc_test.h — what the simcc unit tests share: a module sim/bin/simcc
 * built, opened without the driver, and its kernels by name.  Include
 * after <cmocka.h>.
 */
#ifndef SIMCC_TEST_H
#define SIMCC_TEST_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "simcuda_abi.h"

/* The module at path, or NULL with the loader's message on stderr. */
static inline const struct simcuda_module *simcc_open(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return NULL;
	}
	return dlsym(h, SIMCUDA_MODULE_SYMBOL);
}

static inline const struct simcuda_kernel *simcc_kernel(const struct simcuda_module *m,
                                                        const char *name)
{
	for (unsigned i = 0; i < m->nkernels; i++)
		if (strcmp(m->kernels[i].name, name) == 0)
			return &m->kernels[i];
	fail_msg("kernel %s not registered", name);
	return NULL;
}

#endif
