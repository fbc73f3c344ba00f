/*
 * nccl_test.c — the simulated NCCL across processes: each test starts its
 * ranks as processes (this binary again, `self RANKS RANK SCENARIO ID`),
 * each with its own simulated device; each rank checks what it received
 * and exits 0.  Collectives: all-reduce (sum, average, maximum; several
 * chunks), all-gather, reduce-scatter, broadcast (in place too), reduce,
 * a group of several, and the argument checks; every rank's reduction is
 * the same bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"

#define CK(x) EXPECT((x) == cudaSuccess)
#define NK(x) EXPECT((x) == ncclSuccess)

/* ---- one rank ------------------------------------------------------------ */

static int rank, nranks;
static ncclComm_t comm;
static cudaStream_t stream;

static float *dev_floats(size_t n, float (*f)(size_t i))
{
	float *h = malloc(n * sizeof(float)), *d;
	EXPECT(h != NULL);
	for (size_t i = 0; i < n; i++)
		h[i] = f ? f(i) : 0.0f;
	CK(cudaMalloc((void **)&d, n * sizeof(float)));
	CK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
	/* The copy may still run on the legacy stream: the collectives'
	 * non-blocking stream does not wait for it. */
	CK(cudaDeviceSynchronize());
	free(h);
	return d;
}

static float *host_copy(const float *d, size_t n)
{
	float *h = malloc(n * sizeof(float));
	EXPECT(h != NULL);
	CK(cudaStreamSynchronize(stream));
	CK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
	return h;
}

/* What rank r holds at i: different per rank, not integers. */
static float value(int r, size_t i)
{
	return (float)(r + 1) * 0.37f + (float)(i % 1000) * 0.001f;
}
static float mine(size_t i)
{
	return value(rank, i);
}

static void all_reduce(void)
{
	/* three chunks of 1 MiB and a bit: several rounds */
	size_t n = 3 * (1u << 18) + 5;
	float *send = dev_floats(n, mine), *recv = dev_floats(n, NULL);
	NK(ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comm, stream));
	float *h = host_copy(recv, n);
	for (size_t i = 0; i < n; i += 4099) {
		float want = value(0, i);
		for (int r = 1; r < nranks; r++)
			want += value(r, i); /* in rank order, as NCCL here */
		EXPECT(h[i] == want);
	}
	/* average and maximum, in place */
	NK(ncclAllReduce(send, send, n, ncclFloat, ncclAvg, comm, stream));
	free(h);
	h = host_copy(send, n);
	float sum = value(0, 7);
	for (int r = 1; r < nranks; r++)
		sum += value(r, 7);
	EXPECT(h[7] == sum / (float)nranks);
	int32_t *iv;
	CK(cudaMalloc((void **)&iv, 64 * sizeof(int32_t)));
	int32_t hv[64];
	for (int i = 0; i < 64; i++)
		hv[i] = (rank * 7 + i) % 11;
	CK(cudaMemcpy(iv, hv, sizeof(hv), cudaMemcpyHostToDevice));
	CK(cudaDeviceSynchronize());
	NK(ncclAllReduce(iv, iv, 64, ncclInt32, ncclMax, comm, stream));
	CK(cudaStreamSynchronize(stream));
	CK(cudaMemcpy(hv, iv, sizeof(hv), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 64; i++) {
		int32_t want = 0;
		for (int r = 0; r < nranks; r++)
			want = (r * 7 + i) % 11 > want ? (r * 7 + i) % 11 : want;
		EXPECT(hv[i] == want);
	}
	free(h);
	CK(cudaFree(send));
	CK(cudaFree(recv));
	CK(cudaFree(iv));
}

static void gather_scatter(void)
{
	size_t n = 1000;
	float *send = dev_floats(n * nranks, mine), *recv = dev_floats(n * nranks, NULL);
	/* all-gather: rank r's first n values at r * n */
	NK(ncclAllGather(send, recv, n, ncclFloat, comm, stream));
	float *h = host_copy(recv, n * nranks);
	for (int r = 0; r < nranks; r++)
		for (size_t i = 0; i < n; i += 97)
			EXPECT(h[r * n + i] == value(r, i));
	free(h);
	/* reduce-scatter: block `rank` of everyone's send, summed */
	NK(ncclReduceScatter(send, recv, n, ncclFloat, ncclSum, comm, stream));
	h = host_copy(recv, n);
	for (size_t i = 0; i < n; i += 97) {
		float want = value(0, rank * n + i);
		for (int r = 1; r < nranks; r++)
			want += value(r, rank * n + i);
		EXPECT(h[i] == want);
	}
	free(h);
	/* broadcast from the last rank, then in place from rank 0; reduce */
	NK(ncclBroadcast(send, recv, n, ncclFloat, nranks - 1, comm, stream));
	h = host_copy(recv, n);
	EXPECT(h[5] == value(nranks - 1, 5));
	free(h);
	NK(ncclBcast(send, n, ncclFloat, 0, comm, stream));
	h = host_copy(send, n);
	EXPECT(h[9] == value(0, 9));
	free(h);
	NK(ncclReduce(send, recv, n, ncclFloat, ncclSum, 0, comm, stream));
	h = host_copy(recv, n);
	if (rank == 0)
		EXPECT(h[3] == value(0, 3) * (float)nranks);
	free(h);
	CK(cudaFree(send));
	CK(cudaFree(recv));
}

static void group(void)
{
	size_t n = 512;
	float *a = dev_floats(n, mine), *b = dev_floats(n, mine), *g = dev_floats(n * nranks, NULL);
	cudaStream_t other;
	CK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
	NK(ncclGroupStart());
	NK(ncclAllReduce(a, a, n, ncclFloat, ncclSum, comm, stream));
	NK(ncclAllGather(b, g, n, ncclFloat, comm, other));
	NK(ncclGroupEnd());
	CK(cudaStreamSynchronize(other));
	float *ha = host_copy(a, n), *hg = host_copy(g, n * nranks);
	float want = value(0, 1);
	for (int r = 1; r < nranks; r++)
		want += value(r, 1);
	EXPECT(ha[1] == want);
	EXPECT(hg[(nranks - 1) * n + 2] == value(nranks - 1, 2));
	free(ha);
	free(hg);
	CK(cudaStreamDestroy(other));
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(g));
}

static void bad_arguments(void)
{
	float *a = dev_floats(16, mine);
	EXPECT(ncclAllReduce(a, a, 16, ncclFloat16, ncclSum, comm, stream) == ncclInvalidArgument);
	EXPECT(strstr(ncclGetLastError(comm), "not simulated") != NULL);
	EXPECT(ncclAllReduce(a, a, 16, ncclFloat, ncclSum, NULL, stream) == ncclInvalidArgument);
	EXPECT(ncclBroadcast(a, a, 16, ncclFloat, nranks, comm, stream) == ncclInvalidArgument);
	EXPECT(ncclGroupEnd() == ncclInvalidUsage);
	/* names the simulator does not implement answer "invalid usage" */
	EXPECT(ncclSend(a, 16, ncclFloat, 0, comm, stream) == ncclInvalidUsage);
	NK(ncclAllReduce(a, a, 0, ncclFloat, ncclSum, comm, stream)); /* nothing to do */
	CK(cudaFree(a));
}

static int run_rank(int argc, char **argv)
{
	nranks = atoi(argv[1]);
	rank = atoi(argv[2]);
	const char *what = argv[3];
	ncclUniqueId id;
	memset(&id, 0, sizeof(id));
	strncpy(id.internal, argv[4], sizeof(id.internal) - 1);
	(void)argc;
	CK(cudaSetDevice(0));
	CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	NK(ncclCommInitRank(&comm, nranks, id, rank));
	int v, c, rk, dev;
	NK(ncclGetVersion(&v));
	EXPECT(v == NCCL_VERSION_CODE);
	NK(ncclCommCount(comm, &c));
	NK(ncclCommUserRank(comm, &rk));
	NK(ncclCommCuDevice(comm, &dev));
	EXPECT(c == nranks && rk == rank && dev == 0);
	if (!strcmp(what, "all-reduce"))
		all_reduce();
	else if (!strcmp(what, "gather-scatter"))
		gather_scatter();
	else if (!strcmp(what, "group"))
		group();
	else if (!strcmp(what, "bad-arguments"))
		bad_arguments();
	CK(cudaStreamSynchronize(stream));
	NK(ncclCommDestroy(comm));
	return 0;
}

/* ---- the test: ranks as processes ---------------------------------------- */

static void ranks(int n, const char *what)
{
	ncclUniqueId id;
	NK(ncclGetUniqueId(&id));
	char sn[16];
	snprintf(sn, sizeof(sn), "%d", n);
	pid_t pid[8];
	for (int r = 0; r < n; r++) {
		pid[r] = fork();
		assert_true(pid[r] >= 0);
		if (pid[r] == 0) {
			char sr[16];
			snprintf(sr, sizeof(sr), "%d", r);
			char *argv[] = {"self", sn, sr, (char *)what, id.internal, NULL};
			execv("/proc/self/exe", argv);
			_exit(127);
		}
	}
	for (int r = 0; r < n; r++) {
		int st;
		assert_int_equal(waitpid(pid[r], &st, 0), pid[r]);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fail_msg("%s: rank %d of %d failed (status 0x%x)", what, r, n, st);
	}
}

static void test_all_reduce(void **state)
{
	(void)state;
	ranks(2, "all-reduce");
	ranks(3, "all-reduce");
}

static void test_gather_scatter(void **state)
{
	(void)state;
	ranks(2, "gather-scatter");
	ranks(4, "gather-scatter");
}

static void test_group(void **state)
{
	(void)state;
	ranks(2, "group");
}

static void test_bad_arguments(void **state)
{
	(void)state;
	ranks(1, "bad-arguments");
	ncclComm_t c;
	ncclUniqueId id;
	memset(&id, 0, sizeof(id));
	assert_int_equal(ncclCommInitRank(&c, 2, id, 5), ncclInvalidArgument);
	assert_int_equal(ncclCommInitRank(&c, 2, id, 0), ncclInvalidArgument); /* not an id */
}

int main(int argc, char **argv)
{
	if (argc == 5)
		return run_rank(argc, argv);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_reduce),
	    cmocka_unit_test(test_gather_scatter),
	    cmocka_unit_test(test_group),
	    cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
