/*
 * driver_clock.c — the device profile's clock, predicted exactly: host time
 * per driver call (a launch-bound loop is launch-bound), VMM calls per call
 * and per chunk with their counts, SIMCUDA_VMM_SYNC's wait for unrelated
 * work, kernels by their declared work or the bytes their pointers touch,
 * device copies and memsets at the memory bandwidth, the profiles' own
 * figures, one host clock per thread, malformed values.  Negative
 * control: a loop of one-chunk map/unmap costs what its calls cost.  Each
 * scenario runs in a child with its variables.
 */
#include "driver_common.h"

#include <inttypes.h>
#include <pthread.h>

#include "simcuda_stats.h"

static uint64_t host_now(void)
{
	struct simcuda_stats st;
	simcudaGetStats(&st);
	return st.host_time_ns;
}

/* Ten launches of a floor-length kernel, then a synchronize: host time of
 * the launches and of the whole. */
static int child_launches(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 4096));
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	unsigned v = 1;
	int n = 32;
	void *args[] = {&p, &v, &n};
	uint64_t t0 = host_now();
	for (int i = 0; i < 10; i++)
		CHECK(cuLaunchKernel(get_fn(m, "fill_u32"), 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
	uint64_t t1 = host_now();
	CHECK(cuStreamSynchronize(s));
	printf("launch %" PRIu64 " sync %" PRIu64 "\n", t1 - t0, host_now() - t0);
	return 0;
}

static CUmemAllocationProp dev_prop(void)
{
	return (CUmemAllocationProp){.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                             .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE}};
}

/* Each VMM call over 4 chunks: its host time, then the counts. */
static int child_vmm(void)
{
	setup_context();
	CUmemAllocationProp prop = dev_prop();
	size_t g;
	CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUmemAccessDesc acc = {.location = prop.location,
	                       .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUdeviceptr va;
	CUmemGenericAllocationHandle h;
	uint64_t t[8];
	t[0] = host_now();
	CHECK(cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
	t[1] = host_now();
	CHECK(cuMemCreate(&h, 4 * g, &prop, 0));
	t[2] = host_now();
	CHECK(cuMemMap(va, 4 * g, 0, h, 0));
	t[3] = host_now();
	CHECK(cuMemSetAccess(va, 4 * g, &acc, 1));
	t[4] = host_now();
	CHECK(cuMemUnmap(va, 4 * g));
	t[5] = host_now();
	CHECK(cuMemRelease(h));
	t[6] = host_now();
	CHECK(cuMemAddressFree(va, 4 * g));
	t[7] = host_now();
	printf("reserve %" PRIu64 " create %" PRIu64 " map %" PRIu64 " access %" PRIu64
	       " unmap %" PRIu64 " release %" PRIu64 " free %" PRIu64 "\n",
	       t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4], t[6] - t[5],
	       t[7] - t[6]);
	struct simcuda_stats st;
	simcudaGetStats(&st);
	printf("counts %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
	       st.vmm_create, st.vmm_map, st.vmm_set_access, st.vmm_unmap, st.vmm_release,
	       st.vmm_reserve);
	return 0;
}

/* A chunk mapped and accessible at *va (reserved with room for n). */
static CUmemGenericAllocationHandle mapped(CUdeviceptr *va, size_t n, size_t *g)
{
	CUmemAllocationProp prop = dev_prop();
	CHECK(cuMemGetAllocationGranularity(g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CHECK(cuMemAddressReserve(va, n * *g, 0, 0, 0));
	CUmemGenericAllocationHandle h;
	CHECK(cuMemCreate(&h, n * *g, &prop, 0));
	return h;
}

/* A one-chunk handle mapped, opened and unmapped at each of n chunks, against
 * one handle of n chunks at once: the host time of each. */
static int child_map_loop(void)
{
	setup_context();
	enum { N = 64 };
	size_t g;
	CUdeviceptr va;
	CUmemGenericAllocationHandle h = mapped(&va, N, &g);
	CUmemAccessDesc acc = {.location = dev_prop().location,
	                       .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CUmemAllocationProp prop = dev_prop();
	CUmemGenericAllocationHandle one;
	CHECK(cuMemCreate(&one, g, &prop, 0));
	uint64_t t0 = host_now();
	for (size_t i = 0; i < N; i++) {
		CHECK(cuMemMap(va + i * g, g, 0, one, 0));
		CHECK(cuMemSetAccess(va + i * g, g, &acc, 1));
		CHECK(cuMemUnmap(va + i * g, g));
	}
	uint64_t t1 = host_now();
	CHECK(cuMemMap(va, N * g, 0, h, 0));
	CHECK(cuMemSetAccess(va, N * g, &acc, 1));
	CHECK(cuMemUnmap(va, N * g));
	printf("loop %" PRIu64 " whole %" PRIu64 "\n", t1 - t0, host_now() - t1);
	return 0;
}

/* A long kernel on unrelated memory, then cuMemSetAccess and cuMemUnmap of
 * a range it never uses: the host time each takes. */
static int child_vmm_sync(void)
{
	setup_context();
	CUmodule m = load_test_module();
	size_t g;
	CUdeviceptr va, p;
	CUmemGenericAllocationHandle h = mapped(&va, 1, &g);
	CHECK(cuMemMap(va, g, 0, h, 0));
	CHECK(cuMemAlloc(&p, 4096));
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	unsigned v = 1;
	int n = 32;
	void *args[] = {&p, &v, &n};
	CHECK(cuLaunchKernel(get_fn(m, "fill_u32"), 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
	uint64_t t0 = host_now();
	CUmemAccessDesc acc = {.location = dev_prop().location,
	                       .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CHECK(cuMemSetAccess(va, g, &acc, 1));
	uint64_t t1 = host_now();
	CHECK(cuLaunchKernel(get_fn(m, "fill_u32"), 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
	uint64_t t2 = host_now();
	CHECK(cuMemUnmap(va, g));
	printf("access %" PRIu64 " unmap %" PRIu64 "\n", t1 - t0, host_now() - t2);
	return 0;
}

/* Simulated ns between two events around op() on one stream. */
static double timed(CUstream s, void (*op)(CUstream, void *), void *arg)
{
	CUevent a, b;
	CHECK(cuEventCreate(&a, 0));
	CHECK(cuEventCreate(&b, 0));
	CHECK(cuEventRecord(a, s));
	op(s, arg);
	CHECK(cuEventRecord(b, s));
	CHECK(cuEventSynchronize(b));
	float ms;
	CHECK(cuEventElapsedTime(&ms, a, b));
	return (double)ms * 1e6;
}

struct vec_add_args {
	CUfunction f;
	CUdeviceptr p[3];
	int n;
};

static void vec_add_op(CUstream s, void *arg)
{
	struct vec_add_args *a = arg;
	void *args[] = {&a->p[0], &a->p[1], &a->p[2], &a->n};
	CHECK(cuLaunchKernel(a->f, (unsigned)a->n / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void append_op(CUstream s, void *arg)
{
	struct vec_add_args *a = arg;
	unsigned v = 1;
	void *args[] = {&a->p[0], &v};
	CHECK(cuLaunchKernel(a->f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

static void memset_op(CUstream s, void *arg)
{
	CHECK(cuMemsetD8Async(*(CUdeviceptr *)arg, 0, 8192, s));
}

static void dtod_op(CUstream s, void *arg)
{
	CUdeviceptr *p = arg;
	CHECK(cuMemcpyDtoDAsync(p[1], p[0], 4096, s));
}

static void htod_op(CUstream s, void *arg)
{
	void **a = arg;
	CHECK(cuMemcpyHtoDAsync(*(CUdeviceptr *)a[0], a[1], 1 << 20, s));
}

/* vec_add over n floats in buffers of `bytes` each; append (declared
 * work); an 8 KiB memset; a 4 KiB device copy; a 1 MiB pinned copy. */
static int child_kernels(int n, size_t bytes)
{
	setup_context();
	CUmodule m = load_test_module();
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	struct vec_add_args a = {.f = get_fn(m, "vec_add"), .n = n};
	for (int i = 0; i < 3; i++)
		CHECK(cuMemAlloc(&a.p[i], bytes < (1 << 20) ? 1 << 20 : bytes));
	printf("vec_add %.0f\n", timed(s, vec_add_op, &a));
	CHECK(cuMemsetD32Async(a.p[0], 0, 16, s)); /* append's count, in stream order */
	CHECK(cuStreamSynchronize(s));
	a.f = get_fn(m, "append");
	printf("append %.0f\n", timed(s, append_op, &a));
	printf("memset %.0f\n", timed(s, memset_op, &a.p[0]));
	printf("dtod %.0f\n", timed(s, dtod_op, a.p));
	void *pinned;
	CHECK(cuMemAllocHost(&pinned, 1 << 20));
	void *h[] = {&a.p[0], pinned};
	printf("htod %.0f\n", timed(s, htod_op, h));
	return 0;
}

static void *second_thread(void *arg)
{
	uint64_t *t = arg;
	t[0] = host_now();
	CUcontext ctx;
	CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CHECK(cuCtxSetCurrent(ctx));
	CUevent e;
	CHECK(cuEventCreate(&e, 0));
	for (int i = 0; i < 5; i++)
		CHECK(cuEventRecord(e, NULL));
	t[1] = host_now();
	return NULL;
}

/* The main thread records 10 events, then a second thread 5: each has its
 * own host time, the second starting from the first's. */
static int child_threads(void)
{
	setup_context();
	CUevent e;
	CHECK(cuEventCreate(&e, 0));
	uint64_t t0 = host_now();
	for (int i = 0; i < 10; i++)
		CHECK(cuEventRecord(e, NULL));
	uint64_t t1 = host_now(), t[2];
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, second_thread, t), 0);
	pthread_join(th, NULL);
	printf("main %" PRIu64 " thread-start %" PRIu64 " thread %" PRIu64 " main-after %" PRIu64
	       "\n",
	       t1 - t0, t[0] - t0, t[1] - t[0], host_now() - t1);
	return 0;
}

static const char *h100[] = {"SIMCUDA_DEVICE=h100", NULL};

static struct child_result run_ok(const char *mode, const char *const *env)
{
	struct child_result r = run_child(mode, env);
	assert_exit_ok(&r);
	return r;
}

static void test_launch_bound(void **state)
{
	(void)state;
	/* 3000 ns a launch against 2000 ns a kernel: the host sets the pace;
	 * the synchronize (1000 ns) waits for the last kernel. */
	expect_line(run_ok("launches", h100).err, "launch 30000 sync 32000\n");
	/* 500 ns a launch: the kernels set it (500 + 10 x 2000). */
	const char *cheap[] = {"SIMCUDA_LAUNCH_NS=500", "SIMCUDA_DEVICE=h100", NULL};
	expect_line(run_ok("launches", cheap).err, "launch 5000 sync 20500\n");
	/* legacy: calls cost nothing, kernels 2000 + 0.5 ns a thread */
	const char *legacy[] = {"SIMCUDA_DEVICE=legacy", NULL};
	expect_line(run_ok("launches", legacy).err, "launch 0 sync 20160\n");
}

static void test_vmm_calls(void **state)
{
	(void)state;
	const char *dflt[] = {"SIMCUDA_GRANULARITY=64K", "SIMCUDA_REPORT=1", "SIMCUDA_DEVICE=h100",
	                      NULL};
	struct child_result r = run_ok("vmm", dflt);
	expect_line(r.err, "reserve 19000 create 193000 map 1450 access 36000 unmap 25600 "
	                   "release 25600 free 19000\n");
	expect_line(r.err, "counts 1 1 1 1 1 2\n");
	expect_line(r.err, " vmm_create=1 vmm_map=1 vmm_set_access=1 vmm_unmap=1 vmm_release=1 "
	                   "vmm_reserve=2 host_time_ns=");
	expect_line(r.err, " device=h100\n");
	/* Per chunk on top of per call: 4 chunks each. */
	const char *chunks[] = {
	    "SIMCUDA_GRANULARITY=64K",        "SIMCUDA_DEVICE=h100",
	    "SIMCUDA_VMM_RESERVE_CHUNK_NS=1", "SIMCUDA_VMM_CREATE_CHUNK_NS=100",
	    "SIMCUDA_VMM_MAP_CHUNK_NS=10",    "SIMCUDA_VMM_SET_ACCESS_CHUNK_NS=1000",
	    "SIMCUDA_VMM_UNMAP_CHUNK_NS=20",  "SIMCUDA_VMM_RELEASE_CHUNK_NS=30",
	    "SIMCUDA_VMM_UNMAP_NS=7",         NULL};
	expect_line(run_ok("vmm", chunks).err, "reserve 19004 create 193400 map 1490 access 40000 "
	                                       "unmap 87 release 25720 free 19004\n");
}

static void test_map_loop(void **state)
{
	(void)state;
	/* Negative control: 64 one-chunk map + access + unmap cost 64 times
	 * what one call of each over the 64 chunks costs (1450 + 36000 +
	 * 25600 ns). */
	const char *env[] = {"SIMCUDA_GRANULARITY=64K", "SIMCUDA_DEVICE=h100", NULL};
	expect_line(run_ok("map-loop", env).err, "loop 4035200 whole 63050\n");
}

static void test_vmm_sync(void **state)
{
	(void)state;
	/* A 1 ms kernel on other memory: cuMemSetAccess and cuMemUnmap wait
	 * for it (device), or not (none). */
	const char *device[] = {"SIMCUDA_GRANULARITY=64K", "SIMCUDA_KERNEL_FLOOR_NS=1000000",
	                        "SIMCUDA_DEVICE=h100", NULL};
	expect_line(run_ok("vmm-sync", device).err, "access 1000000 unmap 1000000\n");
	const char *none[] = {"SIMCUDA_GRANULARITY=64K", "SIMCUDA_KERNEL_FLOOR_NS=1000000",
	                      "SIMCUDA_VMM_SYNC=none", "SIMCUDA_DEVICE=h100", NULL};
	expect_line(run_ok("vmm-sync", none).err, "access 36000 unmap 25600\n");
}

static void test_kernels_and_copies(void **state)
{
	(void)state;
	/* At 1 byte/ns and 1 TFLOP/s, each after its 3000 ns launch or 5000
	 * ns copy issue: vec_add's three pointers touch 4 bytes a thread
	 * (12288 ns); append declares 5e6 flops (5000 ns), 1000 bytes and
	 * 500 ns off the device; a memset takes 1000 ns and its bytes, a device
	 * copy 1000 ns and twice its bytes; a pinned copy keeps the link's 1000 +
	 * bytes / 52.8. */
	const char *slow[] = {"SIMCUDA_HBM_GBPS=1", "SIMCUDA_FP32_TFLOPS=1", "SIMCUDA_DEVICE=h100",
	                      NULL};
	struct child_result r = run_ok("kernels-small", slow);
	expect_line(r.err, "vec_add 15288\n");
	expect_line(r.err, "append 8500\n");
	expect_line(r.err, "memset 14192\n");
	expect_line(r.err, "dtod 14192\n");
	expect_line(r.err, "htod 25859\n");
}

static void test_profiles(void **state)
{
	(void)state;
	/* 12 MiB through vec_add's pointers: H100 3350 GB/s, H200 4800, A100
	 * 2039 (and PCIe Gen4: 1000 + 1 MiB / 26.4 GB/s). */
	expect_line(run_ok("kernels-large", h100).err, "vec_add 6756\n");
	const char *h200[] = {"SIMCUDA_DEVICE=h200", NULL};
	expect_line(run_ok("kernels-large", h200).err, "vec_add 5621\n");
	const char *a100[] = {"SIMCUDA_DEVICE=a100", NULL};
	struct child_result r = run_ok("kernels-large", a100);
	expect_line(r.err, "vec_add 9171\n");
	expect_line(r.err, "htod 45719\n");
}

static void test_threads(void **state)
{
	(void)state;
	/* 1000 ns an event record; the second thread starts where the first
	 * was and leaves it where it was. */
	expect_line(run_ok("threads", h100).err,
	            "main 10000 thread-start 10000 thread 5000 main-after 0\n");
}

static void test_malformed(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
	    {"SIMCUDA_DEVICE=b200", "(expected h100, h200, a100 or legacy)"},
	    {"SIMCUDA_VMM_SYNC=yes", "(expected device or none)"},
	    {"SIMCUDA_LAUNCH_NS=-3", "(expected a number from 0 to 1e+09)"},
	    {"SIMCUDA_HBM_GBPS=0", "(expected a number from 0.001 to 1e+06)"},
	    {"SIMCUDA_VMM_UNMAP_CHUNK_NS=2us", "(expected a number from 0 to 1e+09)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *env[] = {bad[i][0], NULL};
		struct child_result r = run_child("launches", env);
		assert_true(WIFEXITED(r.status));
		assert_int_equal(WEXITSTATUS(r.status), 1);
		expect_line(r.err, bad[i][1]);
		expect_line(r.err, "simcuda: invalid ");
	}
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "launches") == 0)
			return child_launches();
		if (strcmp(argv[1], "vmm") == 0)
			return child_vmm();
		if (strcmp(argv[1], "map-loop") == 0)
			return child_map_loop();
		if (strcmp(argv[1], "vmm-sync") == 0)
			return child_vmm_sync();
		if (strcmp(argv[1], "kernels-small") == 0)
			return child_kernels(1024, 4096);
		if (strcmp(argv[1], "kernels-large") == 0)
			return child_kernels(1 << 20, 4 << 20);
		if (strcmp(argv[1], "threads") == 0)
			return child_threads();
		return 2;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_launch_bound),
	    cmocka_unit_test(test_vmm_calls),
	    cmocka_unit_test(test_map_loop),
	    cmocka_unit_test(test_vmm_sync),
	    cmocka_unit_test(test_kernels_and_copies),
	    cmocka_unit_test(test_profiles),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
