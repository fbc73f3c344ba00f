/*
 * frameworks.c — what each framework is told at load (config.h).  libremat
 * manages memory allocation by allocation: a framework that grabs the
 * device in one block, or maps its own virtual memory, hides its tensors.
 *
 *   PyTorch     backend:cudaMallocAsync (every tensor a cudaMallocAsync
 *               with its stream), expandable_segments dropped; the
 *               variable is PYTORCH_ALLOC_CONF from 2.9 on,
 *               PYTORCH_CUDA_ALLOC_CONF before (both are set)
 *   JAX         XLA_PYTHON_CLIENT_PREALLOCATE=false (not 75% of the device
 *               at the first operation), XLA_PYTHON_CLIENT_ALLOCATOR=
 *               platform (exactly what each buffer needs, freed when dead)
 *   TensorFlow  TF_GPU_ALLOCATOR=cuda_malloc_async (every tensor a
 *               cudaMallocAsync), TF_FORCE_GPU_ALLOW_GROWTH=true
 */
#include <stdio.h>
#include <string.h>

#include "config.h"

static void fixed(struct remat_env_setting *s, remat_getenv_fn get, const char *name,
                  const char *value)
{
	s->name = name;
	s->before = get(name);
	snprintf(s->value, sizeof(s->value), "%s", value);
}

int remat_frameworks_env(remat_getenv_fn get, struct remat_env_setting *out)
{
	const char *now = get("PYTORCH_ALLOC_CONF"), *old = get("PYTORCH_CUDA_ALLOC_CONF");
	out[0] = (struct remat_env_setting){.name = "PYTORCH_ALLOC_CONF", .before = now};
	out[1] = (struct remat_env_setting){.name = "PYTORCH_CUDA_ALLOC_CONF", .before = old};
	/* The newer name wins in PyTorch 2.9+, as there. */
	if (remat_alloc_conf_merge(now ? now : old, out[0].value, sizeof(out[0].value)))
		return -1;
	memcpy(out[1].value, out[0].value, sizeof(out[1].value));
	fixed(&out[2], get, "XLA_PYTHON_CLIENT_PREALLOCATE", "false");
	fixed(&out[3], get, "XLA_PYTHON_CLIENT_ALLOCATOR", "platform");
	fixed(&out[4], get, "TF_GPU_ALLOCATOR", "cuda_malloc_async");
	fixed(&out[5], get, "TF_FORCE_GPU_ALLOW_GROWTH", "true");
	return 0;
}
