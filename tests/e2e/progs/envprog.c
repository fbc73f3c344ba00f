/*
 * envprog.c — what a program sees of the frameworks' allocator variables
 * (session/frameworks.c): prints each, then, with `change`, sets PyTorch's
 * two the way a script does from Python before `import torch`
 * (expandable segments), and makes its first CUDA calls.
 *
 *   envprog [change]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "progs.h"

int main(int argc, char **argv)
{
	static const char *const names[] = {"PYTORCH_ALLOC_CONF",
	                                    "PYTORCH_CUDA_ALLOC_CONF",
	                                    "XLA_PYTHON_CLIENT_PREALLOCATE",
	                                    "XLA_PYTHON_CLIENT_ALLOCATOR",
	                                    "TF_GPU_ALLOCATOR",
	                                    "TF_FORCE_GPU_ALLOW_GROWTH"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = getenv(names[i]);
		printf("%s=%s\n", names[i], v ? v : "(unset)");
	}
	if (argc > 1 && !strcmp(argv[1], "change")) {
		setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True", 1);
		setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 1);
	}
	CUdeviceptr p;
	prog_context();
	CK(cuMemAlloc(&p, 1 << 20));
	CK(cuMemFree(p));
	return 0;
}
