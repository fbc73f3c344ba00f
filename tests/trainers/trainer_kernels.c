/* trainer_kernels.c — kernel modules and the three launch paths a CUDA
 * program can take (runtime library API, driver module API, cuLaunchKernelEx). */
#include "trainer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* What a real driver answers for a module image it cannot run (our .so). */
static int refused_image(CUresult r)
{
	return r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_INVALID_PTX ||
	       r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_SOURCE;
}

static const char *cu_name(CUresult r)
{
	const char *name = NULL;
	return cuGetErrorName(r, &name) == CUDA_SUCCESS && name ? name : "unknown CUresult";
}

static CUresult try_load(struct kmodule *m, const char *path)
{
	if (m->runtime) {
		cudaError_t e =
		    cudaLibraryLoadFromFile(&m->lib, path, NULL, NULL, 0, NULL, NULL, 0);
		switch (e) {
		case cudaSuccess:
			return CUDA_SUCCESS;
		case cudaErrorInvalidKernelImage:
			return CUDA_ERROR_INVALID_IMAGE;
		case cudaErrorInvalidPtx:
			return CUDA_ERROR_INVALID_PTX;
		case cudaErrorNoKernelImageForDevice:
			return CUDA_ERROR_NO_BINARY_FOR_GPU;
		default:
			rt_check(e, "cudaLibraryLoadFromFile");
			return CUDA_ERROR_UNKNOWN;
		}
	}
	CUresult r = cuModuleLoad(&m->mod, path);
	if (r != CUDA_SUCCESS && !refused_image(r))
		drv_check(r, "cuModuleLoad");
	return r;
}

void kmodule_load(struct kmodule *m, const struct trainer_opts *o, const char *name, int runtime)
{
	char so[PATH_MAX], cubin[PATH_MAX];
	snprintf(so, sizeof so, "%s/%s.so", o->kernels_dir, name);
	snprintf(cubin, sizeof cubin, "%s/sm_90/%s.cubin", o->kernels_dir, name);
	m->runtime = runtime;
	int have_so = access(so, R_OK) == 0, have_cubin = access(cubin, R_OK) == 0;
	if (o->format != KF_CUBIN && have_so) {
		CUresult r = try_load(m, so);
		if (r == CUDA_SUCCESS)
			return;
		if (o->format == KF_SO || !have_cubin) {
			fprintf(stderr, "%s: the driver refused kernel module %s (%s)\n",
			        trainer_prog, so, cu_name(r));
			exit(2);
		}
	}
	if (o->format != KF_SO && have_cubin) {
		CUresult r = try_load(m, cubin);
		if (r == CUDA_SUCCESS)
			return;
		fprintf(stderr, "%s: the driver refused kernel module %s (%s)\n", trainer_prog,
		        cubin, cu_name(r));
		exit(2);
	}
	fprintf(stderr, "%s: no kernel module %s%s%s (see --kernels)\n", trainer_prog,
	        o->format == KF_CUBIN ? "" : so, o->format == KF_AUTO ? " or " : "",
	        o->format == KF_SO ? "" : cubin);
	exit(1);
}

void kernel_get(struct kernel *k, struct kmodule *m, const char *name, enum launch_path path)
{
	k->name = name;
	k->path = path;
	if (path == LAUNCH_RUNTIME) {
		if (!m->runtime) {
			fprintf(stderr, "%s: %s: runtime launch needs a runtime-loaded module\n",
			        trainer_prog, name);
			exit(1);
		}
		RT(cudaLibraryGetKernel(&k->rt, m->lib, name));
	} else {
		if (m->runtime) {
			fprintf(stderr, "%s: %s: driver launch needs a driver-loaded module\n",
			        trainer_prog, name);
			exit(1);
		}
		DRV(cuModuleGetFunction(&k->fn, m->mod, name));
	}
}

void launch(const struct kernel *k, dim3 grid, dim3 block, unsigned smem, cudaStream_t s,
            void **args)
{
	switch (k->path) {
	case LAUNCH_RUNTIME:
		RT(cudaLaunchKernel((const void *)k->rt, grid, block, args, smem, s));
		break;
	case LAUNCH_DRIVER:
		DRV(cuLaunchKernel(k->fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem,
		                   s, args, NULL));
		break;
	case LAUNCH_DRIVER_EX:
	case LAUNCH_DRIVER_CLUSTER: {
		CUlaunchAttribute a = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
		a.value.clusterDim.x = TRAINER_CLUSTER;
		a.value.clusterDim.y = a.value.clusterDim.z = 1;
		int cluster = k->path == LAUNCH_DRIVER_CLUSTER;
		CUlaunchConfig cfg = {
		    /* A cluster's grid counts whole clusters. */
		    .gridDimX =
		        cluster ? (grid.x + TRAINER_CLUSTER - 1) / TRAINER_CLUSTER * TRAINER_CLUSTER
		                : grid.x,
		    .gridDimY = grid.y,
		    .gridDimZ = grid.z,
		    .blockDimX = block.x,
		    .blockDimY = block.y,
		    .blockDimZ = block.z,
		    .sharedMemBytes = smem,
		    .hStream = s,
		    .attrs = cluster ? &a : NULL,
		    .numAttrs = cluster ? 1 : 0,
		};
		DRV(cuLaunchKernelEx(&cfg, k->fn, args, NULL));
		break;
	}
	case LAUNCH_DRIVER_COOP:
		DRV(cuLaunchCooperativeKernel(k->fn, grid.x, grid.y, grid.z, block.x, block.y,
		                              block.z, smem, s, args));
		break;
	}
}

void launch1d(const struct kernel *k, long long threads, unsigned block, cudaStream_t s,
              void **args)
{
	long long blocks = (threads + block - 1) / block;
	if (blocks < 1)
		blocks = 1;
	launch(k, (dim3){(unsigned)blocks, 1, 1}, (dim3){block, 1, 1}, 0, s, args);
}
