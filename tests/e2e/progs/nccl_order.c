/*
 * nccl_order.c — two ranks whose host code orders them through a file:
 * each iteration, rank 0 starts an all-reduce on its communication stream,
 * launches a kernel on its compute stream, and only then tells rank 1
 * (which waits for that before starting its side of the all-reduce).  A
 * profiler that synchronizes the whole context before rank 0's kernel
 * waits for an all-reduce that rank 1 cannot start: the job hangs.
 * Prints the accumulator's checksum at the end (the same on both ranks).
 *
 *   nccl_order KERNELS.so ITERS RENDEZVOUS_DIR     (RANK or LOCAL_RANK: 0 or 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>
#include <nccl.h>

#include "progs.h"

#define NK(x)                                                                                      \
	do {                                                                                       \
		ncclResult_t r_ = (x);                                                             \
		if (r_) {                                                                          \
			printf("%s: %s\n", #x, ncclGetErrorString(r_));                            \
			exit(2);                                                                   \
		}                                                                                  \
	} while (0)

enum { N = 65536 };

static void pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The step file holds the last iteration rank 0 finished launching. */
static void say_step(const char *dir, int it)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/step", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", it) < 0 || fclose(f) || rename(tmp, path))
		exit(2);
}

static void wait_step(const char *dir, int it)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/step", dir);
	for (int tries = 0; tries < 60000; tries++) {
		FILE *f = fopen(path, "r");
		int v = -1;
		if (f) {
			if (fscanf(f, "%d", &v) != 1)
				v = -1;
			fclose(f);
		}
		if (v >= it)
			return;
		pause_ms(1);
	}
	fprintf(stderr, "nccl_order: rank 1: rank 0 never reached iteration %d\n", it);
	exit(2);
}

static void exchange_id(const char *dir, int rank, ncclUniqueId *id)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/id", dir);
	if (rank == 0) {
		NK(ncclGetUniqueId(id));
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		FILE *f = fopen(tmp, "wb");
		if (!f || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) || rename(tmp, path))
			exit(2);
		return;
	}
	for (int tries = 0; tries < 60000; tries++) {
		FILE *f = fopen(path, "rb");
		if (f && fread(id, sizeof(*id), 1, f) == 1) {
			fclose(f);
			return;
		}
		if (f)
			fclose(f);
		pause_ms(1);
	}
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: nccl_order KERNELS.so ITERS RENDEZVOUS_DIR\n");
		return 1;
	}
	const char *rk = getenv("RANK") ? getenv("RANK") : getenv("LOCAL_RANK");
	int rank = rk ? atoi(rk) : 0, iters = atoi(argv[2]);
	const char *dir = argv[3];
	CUmodule mod;
	CUfunction fwd;
	prog_context();
	CK(cuModuleLoad(&mod, argv[1]));
	CK(cuModuleGetFunction(&fwd, mod, "fwd"));
	CUstream comm_s, comp_s;
	CK(cuStreamCreate(&comm_s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&comp_s, CU_STREAM_NON_BLOCKING));
	ncclUniqueId id;
	exchange_id(dir, rank, &id);
	ncclComm_t comm;
	NK(ncclCommInitRank(&comm, 2, id, rank));
	CUdeviceptr g, x, y;
	CK(cuMemAlloc(&g, N * sizeof(float)));
	CK(cuMemAlloc(&x, N * sizeof(float)));
	CK(cuMemAlloc(&y, N * sizeof(float)));
	CK(cuMemsetD32(g, 0x3f800000u, N)); /* 1.0f */
	CK(cuMemsetD32(x, 0x40000000u, N)); /* 2.0f */
	CK(cuCtxSynchronize());
	int n = N;
	float a = 0.5f;
	void *args[] = {&x, &y, &n, &a};
	for (int it = 0; it < iters; it++) {
		if (rank == 1)
			wait_step(dir, it);
		NK(ncclAllReduce((void *)g, (void *)g, N, ncclFloat32, ncclAvg, comm, comm_s));
		CK(cuLaunchKernel(fwd, N / 256, 1, 1, 256, 1, 1, 0, comp_s, args, NULL));
		if (rank == 0)
			say_step(dir, it);
		CK(cuStreamSynchronize(comp_s));
		CK(cuStreamSynchronize(comm_s));
	}
	static float h[N];
	CK(cuMemcpyDtoH(h, g, sizeof(h)));
	uint64_t sum = 0xcbf29ce484222325ULL;
	const unsigned char *b = (const unsigned char *)h;
	for (size_t i = 0; i < sizeof(h); i++)
		sum = (sum ^ b[i]) * 0x100000001b3ULL;
	printf("checksum %016llx\n", (unsigned long long)sum);
	NK(ncclCommDestroy(comm));
	return 0;
}
