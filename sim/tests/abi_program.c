/*
 * abi_program.c — an application built against the REAL libcudart.so.13
 * and libcupti.so.13 (see abi_real_link.sh) that must run unchanged on the
 * simulated libraries: it allocates, copies, launches a kernel from a
 * library, and traces the launch with CUPTI.
 *
 *   abi_program MODULE.so SIMCUDA_DIR
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include "expect.h"

#define CHECK(call)                                                                                \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
			        cudaGetErrorName(e_));                                             \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define CUPTI_CHECK(call)                                                                          \
	do {                                                                                       \
		CUptiResult r_ = (call);                                                           \
		if (r_ != CUPTI_SUCCESS) {                                                         \
			fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, (int)r_);    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static uint32_t launch_correlation;
static int launch_callbacks, kernel_records;
static uint32_t record_correlation;
static char record_name[64];

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId cbid,
                                 const void *data)
{
	(void)ud;
	const CUpti_CallbackData *cb = data;
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 &&
	    cb->callbackSite == CUPTI_API_EXIT) {
		launch_callbacks++;
		launch_correlation = cb->correlationId;
	}
}

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 1 << 16;
	*buf = aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI completed(CUcontext c, uint32_t s, uint8_t *buf, size_t size, size_t valid)
{
	(void)c, (void)s, (void)size;
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
			kernel_records++;
			record_correlation = k->correlationId;
			snprintf(record_name, sizeof(record_name), "%s", k->name);
		}
	free(buf);
}

/* The library that defines sym must live in dir. */
static void expect_from(const void *sym, const char *dir)
{
	Dl_info info;
	char lib[PATH_MAX], want[PATH_MAX];
	EXPECT(dladdr(sym, &info) && info.dli_fname);
	EXPECT(realpath(info.dli_fname, lib) && realpath(dir, want));
	char *slash = strrchr(lib, '/');
	EXPECT(slash);
	*slash = 0;
	if (strcmp(lib, want) != 0) {
		fprintf(stderr, "%s comes from %s, not %s\n", info.dli_fname, lib, want);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: abi_program MODULE.so SIMCUDA_DIR\n");
		return 2;
	}
	expect_from((const void *)cudaMalloc, argv[2]);
	expect_from((const void *)cuptiSubscribe, argv[2]);

	CUpti_SubscriberHandle sub;
	CUPTI_CHECK(cuptiSubscribe(&sub, on_callback, NULL));
	CUPTI_CHECK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API));
	CUPTI_CHECK(cuptiActivityRegisterCallbacks(requested, completed));
	CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));

	int version = 0;
	CHECK(cudaRuntimeGetVersion(&version));
	EXPECT(version == 13000);

	cudaLibrary_t lib;
	cudaKernel_t axpy;
	CHECK(cudaLibraryLoadFromFile(&lib, argv[1], NULL, NULL, 0, NULL, NULL, 0));
	CHECK(cudaLibraryGetKernel(&axpy, lib, "rt_axpy"));

	enum { N = 3000 };
	static float hx[N], hy[N];
	for (int i = 0; i < N; i++) {
		hx[i] = (float)i;
		hy[i] = 1.0f;
	}
	float *x, *y;
	CHECK(cudaMalloc((void **)&x, sizeof(hx)));
	CHECK(cudaMalloc((void **)&y, sizeof(hy)));
	CHECK(cudaMemcpy(x, hx, sizeof(hx), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(y, hy, sizeof(hy), cudaMemcpyHostToDevice));
	float a = 0.5f;
	int n = N;
	void *args[] = {&a, &x, &y, &n};
	dim3 grid = {(N + 255) / 256, 1, 1}, block = {256, 1, 1};
	CHECK(cudaLaunchKernel((const void *)axpy, grid, block, args, 0, 0));
	CHECK(cudaMemcpy(hy, y, sizeof(hy), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		EXPECT(hy[i] == 1.0f + 0.5f * (float)i);

	/* A real name the simulator does not implement answers "not supported". */
	EXPECT(cudaGraphicsUnregisterResource(NULL) == cudaErrorNotSupported);

	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaLibraryUnload(lib));
	CUPTI_CHECK(cuptiActivityFlushAll(0));
	EXPECT(launch_callbacks == 1);
	EXPECT(kernel_records == 1);
	EXPECT(record_correlation == launch_correlation);
	EXPECT(strcmp(record_name, "rt_axpy") == 0);
	CUPTI_CHECK(cuptiUnsubscribe(sub));
	printf("abi_program: ok\n");
	return 0;
}
