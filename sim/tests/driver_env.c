/*
 * driver_env.c — what the SIMCUDA_* variables do: the exit report (to
 * stderr and to a file, in the key=value format other tools parse), fault
 * injection of allocations and launches, the deterministic simulated
 * clock (same times every run, with or without a slowed stream), the
 * fill policy of fresh memory on every allocation path, and one clear
 * message for a malformed value.  Each scenario runs in a child.
 */
#include "driver_common.h"

#include <inttypes.h>

static int child_workload(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 1000));
	unsigned host[250] = {0};
	CHECK(cuMemcpyHtoD(p, host, sizeof(host)));
	CHECK(cuMemsetD32(p, 0, 250));
	unsigned v = 1;
	void *args[] = {&p, &v};
	CHECK(cuLaunchKernel(get_fn(m, "append"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CHECK(cuLaunchKernel(get_fn(m, "append"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CHECK(cuMemcpyDtoH(host, p, sizeof(host)));
	CHECK(cuMemFree(p));
	return host[0] == 2 ? 0 : 3;
}

static int child_fail_alloc(void)
{
	/* SIMCUDA_FAIL_ALLOC=3: the third device allocation of any kind */
	setup_context();
	CUdeviceptr a, b, c, d;
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE}};
	size_t g;
	CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CHECK(cuMemAlloc(&a, 16));
	CHECK(cuMemAllocAsync(&b, 16, NULL));
	assert_int_equal(cuMemCreate(&h, g, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(cuMemAlloc(&c, 16));
	CHECK(cuMemCreate(&h, g, &prop, 0));
	CHECK(cuMemAlloc(&d, 16));
	return 0;
}

/* A context, 64 zeroed bytes at *p, one launch of "append" (1) through
 * them; returns "append". */
static CUfunction append_once(CUdeviceptr *p)
{
	setup_context();
	CUmodule m = load_test_module();
	CHECK(cuMemAlloc(p, 64));
	CHECK(cuMemsetD32(*p, 0, 16));
	CUfunction f = get_fn(m, "append");
	unsigned v = 1;
	void *args[] = {p, &v};
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	return f;
}

static int child_fail_launch(void)
{
	/* SIMCUDA_FAIL_LAUNCH=2: the second launch faults.  As on a GPU the
	 * launch itself succeeds and the context is poisoned: every later call
	 * that uses it fails with the error, queries still answer, and only a
	 * reset recovers. */
	CUdeviceptr p;
	unsigned v = 1;
	void *args[] = {&p, &v};
	CUfunction f = append_once(&p);
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
	                 CUDA_ERROR_LAUNCH_FAILED);
	unsigned out[3];
	assert_int_equal(cuMemcpyDtoH(out, p, sizeof(out)), CUDA_ERROR_LAUNCH_FAILED);
	CUdeviceptr q;
	assert_int_equal(cuMemAlloc(&q, 16), CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
	assert_int_equal(cuStreamSynchronize(NULL), CUDA_ERROR_LAUNCH_FAILED);
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE}};
	size_t g;
	CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUmemGenericAllocationHandle h;
	assert_int_equal(cuMemCreate(&h, g, &prop, 0), CUDA_ERROR_LAUNCH_FAILED);
	CUdevice dev;
	CHECK(cuCtxGetDevice(&dev));
	struct simcuda_stats st;
	simcudaGetStats(&st);
	assert_int_equal(st.faults_injected, 1);
	/* The reset destroys the context and its memory; a new one works. */
	CHECK(cuDevicePrimaryCtxReset(0));
	f = append_once(&p);
	v = 3;
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CHECK(cuMemcpyDtoH(out, p, sizeof(out)));
	assert_int_equal(out[0], 2); /* count, then the values appended */
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 3);
	return 0;
}

static int child_fail_launch_oom(void)
{
	/* SIMCUDA_FAIL_LAUNCH=2 SIMCUDA_FAIL_LAUNCH_ERROR=oom: the second
	 * launch is refused for memory; nothing is poisoned. */
	CUdeviceptr p;
	unsigned v = 1;
	void *args[] = {&p, &v};
	CUfunction f = append_once(&p);
	v = 2;
	assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
	                 CUDA_ERROR_OUT_OF_MEMORY);
	v = 3;
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	unsigned out[3];
	CHECK(cuMemcpyDtoH(out, p, sizeof(out)));
	assert_int_equal(out[0], 2); /* the refused launch never ran */
	assert_int_equal(out[1], 1);
	assert_int_equal(out[2], 3);
	struct simcuda_stats st;
	simcudaGetStats(&st);
	assert_int_equal(st.faults_injected, 1);
	return 0;
}

/* Prints the simulated times of a two-stream workload (see test_clock). */
static int child_clock(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUstream s1, s2;
	CUevent e0, e1, e2;
	CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&e0, 0));
	CHECK(cuEventCreate(&e1, 0));
	CHECK(cuEventCreate(&e2, 0));
	enum { MB = 1 << 20 };
	static unsigned char host[MB];
	CUdeviceptr buf;
	CHECK(cuMemAlloc(&buf, MB));
	CHECK(cuEventRecord(e0, s1));
	CHECK(cuMemcpyHtoDAsync(buf, host, MB, s1)); /* 1000 + 1048576 / 10 = 105857 ns */
	unsigned v = 1;
	void *aargs[] = {&buf, &v};
	CHECK(
	    cuLaunchKernel(get_fn(m, "append"), 1, 1, 1, 1, 1, 1, 0, s1, aargs, NULL)); /* 12345 */
	CHECK(cuEventRecord(e1, s1));
	CHECK(cuStreamWaitEvent(s2, e1, 0));
	int n = 1024;
	void *fargs[] = {&buf, &v, &n};
	/* default model: 2000 + 0.5 x 1024 threads = 2512 ns */
	CHECK(cuLaunchKernel(get_fn(m, "fill_u32"), 4, 1, 1, 256, 1, 1, 0, s2, fargs, NULL));
	CHECK(cuEventRecord(e2, s2));
	CHECK(cuCtxSynchronize());
	float a, b;
	CHECK(cuEventElapsedTime(&a, e0, e1));
	CHECK(cuEventElapsedTime(&b, e1, e2));
	struct simcuda_stats st;
	simcudaGetStats(&st);
	fprintf(stderr, "clock: %.6f %.6f %" PRIu64 "\n", a, b, st.sim_time_ns);
	return 0;
}

/* The legacy stream's implicit wait for a blocking stream counts in
 * simulated time even when that work finished (in real time) long before. */
static int child_clock_legacy(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUstream a;
	CUevent e0, e1;
	CHECK(cuStreamCreate(&a, 0));
	CHECK(cuEventCreate(&e0, 0));
	CHECK(cuEventCreate(&e1, 0));
	CUdeviceptr buf;
	CHECK(cuMemAlloc(&buf, 64));
	CHECK(cuMemsetD32(buf, 0, 16));
	CHECK(cuCtxSynchronize());
	CHECK(cuEventRecord(e0, NULL));
	unsigned v = 1;
	void *args[] = {&buf, &v};
	CHECK(cuLaunchKernel(get_fn(m, "append"), 1, 1, 1, 1, 1, 1, 0, a, args, NULL));
	usleep(50 * 1000); /* the kernel has long finished */
	CHECK(cuEventRecord(e1, NULL));
	CHECK(cuStreamDestroy(a));
	CHECK(cuEventSynchronize(e1));
	float ms;
	CHECK(cuEventElapsedTime(&ms, e0, e1));
	fprintf(stderr, "legacy: %.6f\n", ms);
	return 0;
}

/* Stream-ordered frees give capacity back in call order: the peak does
 * not depend on how far behind the (slowed) stream is. */
static int child_async_peak(void)
{
	setup_context();
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < 3; i++) {
		CUdeviceptr p;
		CHECK(cuMemAllocAsync(&p, 1 << 20, s));
		CHECK(cuMemsetD8Async(p, 1, 1 << 20, s));
		CHECK(cuMemFreeAsync(p, s));
	}
	CHECK(cuStreamSynchronize(s));
	struct simcuda_stats st;
	simcudaGetStats(&st);
	return st.peak_physical == (1 << 20) && st.physical_in_use == 0 ? 0 : 3;
}

static void test_report_file(void **state)
{
	(void)state;
	char path[] = "/tmp/simcuda-report-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	char env[128];
	snprintf(env, sizeof(env), "SIMCUDA_REPORT_FILE=%s", path);
	const char *envs[] = {env, "SIMCUDA_REPORT=1", "SIMCUDA_DEVICE=legacy", NULL};
	struct child_result r = run_child("workload", envs);
	assert_exit_ok(&r);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[512] = "";
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	/* the same line went to stderr */
	assert_non_null(strstr(r.err, line));
	unsigned long long peak, ops, kernels, copies, sets, hostfns, t, faults, vmm[6], host;
	char device[16];
	assert_int_equal(sscanf(line,
	                        "simcuda: peak_physical=%llu ops=%llu kernels=%llu memcpy=%llu "
	                        "memset=%llu host_funcs=%llu sim_time_ns=%llu faults_injected=%llu "
	                        "vmm_create=%llu vmm_map=%llu vmm_set_access=%llu vmm_unmap=%llu "
	                        "vmm_release=%llu vmm_reserve=%llu host_time_ns=%llu device=%15s\n",
	                        &peak, &ops, &kernels, &copies, &sets, &hostfns, &t, &faults,
	                        &vmm[0], &vmm[1], &vmm[2], &vmm[3], &vmm[4], &vmm[5], &host,
	                        device),
	                 16);
	assert_string_equal(device, "legacy");
	for (int i = 0; i < 6; i++)
		assert_int_equal(vmm[i], 0);
	/* the host waited for the last copy: no later */
	assert_true(host <= t);
	assert_int_equal(faults, 0);
	assert_int_equal(peak, 1024); /* 1000 bytes in 512-byte units */
	assert_int_equal(kernels, 2);
	assert_int_equal(copies, 2);
	assert_int_equal(sets, 1);
	assert_int_equal(hostfns, 0);
	assert_int_equal(ops, 5);
	/* HtoD 1000 + 1000/10, memset 1000 + 1000/40, 2 x 12345, DtoH 1100 */
	assert_int_equal(t, 1100 + 1025 + 2 * 12345 + 1100);
}

static void test_fail_alloc(void **state)
{
	(void)state;
	const char *env[] = {"SIMCUDA_FAIL_ALLOC=3", "SIMCUDA_GRANULARITY=64K", NULL};
	struct child_result r = run_child("fail-alloc", env);
	assert_exit_ok(&r);
}

static void test_fail_launch(void **state)
{
	(void)state;
	const char *env[] = {"SIMCUDA_FAIL_LAUNCH=2", NULL};
	struct child_result r = run_child("fail-launch", env);
	assert_exit_ok(&r);
	const char *oom[] = {"SIMCUDA_FAIL_LAUNCH=2", "SIMCUDA_FAIL_LAUNCH_ERROR=oom", NULL};
	r = run_child("fail-launch-oom", oom);
	assert_exit_ok(&r);
}

static void test_clock(void **state)
{
	(void)state;
	/* The legacy model's figures (driver_clock.c predicts the profiles'). */
	const char *legacy[] = {"SIMCUDA_DEVICE=legacy", NULL};
	struct child_result r1 = run_child("clock", legacy);
	assert_exit_ok(&r1);
	const char *expected = "clock: 0.118202 0.002512 120714\n";
	assert_string_equal(r1.err, expected);
	struct child_result r2 = run_child("clock", legacy);
	assert_string_equal(r2.err, expected);
	/* real-time delays do not move simulated time */
	const char *slow[] = {"SIMCUDA_SLOW_STREAM=20", "SIMCUDA_DEVICE=legacy", NULL};
	struct child_result r3 = run_child("clock", slow);
	assert_string_equal(r3.err, expected);
	struct child_result r4 = run_child("clock-legacy", legacy);
	assert_string_equal(r4.err, "legacy: 0.012345\n");
	/* The h100 profile: the same figures every run, slowed or not. */
	const char *h100[] = {"SIMCUDA_DEVICE=h100", NULL};
	const char *slow_h100[] = {"SIMCUDA_SLOW_STREAM=20", "SIMCUDA_DEVICE=h100", NULL};
	struct child_result h1 = run_child("clock", h100), h2 = run_child("clock", slow_h100);
	assert_exit_ok(&h1);
	assert_string_equal(h1.err, h2.err);
	assert_string_not_equal(h1.err, expected);
}

static void test_async_free_peak(void **state)
{
	(void)state;
	const char *env[] = {"SIMCUDA_SLOW_STREAM=30", NULL};
	struct child_result r = run_child("async-peak", env);
	assert_exit_ok(&r);
}

static void test_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *env, *message;
	} cases[] = {
	    {"SIMCUDA_MEMORY=12Q", "simcuda: invalid SIMCUDA_MEMORY='12Q'"},
	    {"SIMCUDA_MEMORY=", NULL}, /* empty: the default */
	    {"SIMCUDA_MEMORY=-1G", "simcuda: invalid SIMCUDA_MEMORY='-1G'"},
	    {"SIMCUDA_GRANULARITY=3000", "simcuda: invalid SIMCUDA_GRANULARITY='3000'"},
	    {"SIMCUDA_FAIL_ALLOC=x", "simcuda: invalid SIMCUDA_FAIL_ALLOC='x'"},
	    {"SIMCUDA_SLOW_STREAM=1e3", "simcuda: invalid SIMCUDA_SLOW_STREAM='1e3'"},
	    {"SIMCUDA_REPORT=yes", "simcuda: invalid SIMCUDA_REPORT='yes'"},
	    {"SIMCUDA_FAIL_LAUNCH_ERROR=oops", "simcuda: invalid SIMCUDA_FAIL_LAUNCH_ERROR='oops' "
	                                       "(expected fault or oom)"},
	    {"SIMCUDA_FILL=junk", "simcuda: invalid SIMCUDA_FILL='junk' (expected zero, poison "
	                          "or random)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *env[] = {cases[i].env, NULL};
		struct child_result r = run_child("workload", env);
		if (cases[i].message == NULL) {
			assert_exit_ok(&r);
			continue;
		}
		assert_true(WIFEXITED(r.status));
		assert_int_equal(WEXITSTATUS(r.status), 1);
		if (strstr(r.err, cases[i].message) == NULL)
			fail_msg("for %s expected '%s', got:\n%s", cases[i].env, cases[i].message,
			         r.err);
		/* one message, one line */
		assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	}
}

/* Prints, for each allocation path, "PATH FIRST8BYTES UNIFORM" about the
 * memory it just handed out (UNIFORM: every byte the same). */
static void describe(const char *path, const unsigned char *bytes, size_t n)
{
	int uniform = 1;
	for (size_t i = 1; i < n; i++)
		uniform &= bytes[i] == bytes[0];
	uint64_t first;
	memcpy(&first, bytes, sizeof first);
	printf("%s %016" PRIx64 " %d\n", path, first, uniform);
}

static int child_fill(void)
{
	enum { SMALL = 4096, LARGE = 3u << 20 };
	static unsigned char host[LARGE];
	setup_context();
	CUdeviceptr small, large, async, va;
	CHECK(cuMemAlloc(&small, SMALL));
	CHECK(cuMemAlloc(&large, LARGE));
	CHECK(cuMemAllocAsync(&async, SMALL, NULL));
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
	                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE}};
	CUmemAccessDesc rw = {.location = prop.location,
	                      .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	size_t g;
	CUmemGenericAllocationHandle h;
	CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CHECK(cuMemCreate(&h, g, &prop, 0));
	CHECK(cuMemAddressReserve(&va, g, 0, 0, 0));
	CHECK(cuMemMap(va, g, 0, h, 0));
	CHECK(cuMemSetAccess(va, g, &rw, 1));
	void *pinned;
	CHECK(cuMemAllocHost(&pinned, SMALL));
	CHECK(cuMemcpyDtoH(host, small, SMALL));
	describe("cuMemAlloc", host, SMALL);
	CHECK(cuMemcpyDtoH(host, large, LARGE));
	describe("cuMemAlloc-3M", host, LARGE);
	CHECK(cuMemcpyDtoH(host, async, SMALL));
	describe("cuMemAllocAsync", host, SMALL);
	CHECK(cuMemcpyDtoH(host, va, g));
	describe("cuMemCreate", host, g);
	describe("cuMemAllocHost", pinned, SMALL);
	return 0;
}

/* SIMCUDA_FILL: poison (the default) 0xcd bytes, zero, or random bytes
 * that differ between allocations and between runs, on every path. */
static void test_fill(void **state)
{
	(void)state;
	static const char *const paths[] = {"cuMemAlloc", "cuMemAlloc-3M", "cuMemAllocAsync",
	                                    "cuMemCreate", "cuMemAllocHost"};
	const char *poison[] = {NULL}, *zero[] = {"SIMCUDA_FILL=zero", NULL};
	const char *random[] = {"SIMCUDA_FILL=random", NULL};
	struct child_result p = run_child("fill", poison), z = run_child("fill", zero);
	struct child_result r1 = run_child("fill", random), r2 = run_child("fill", random);
	assert_exit_ok(&p);
	assert_exit_ok(&z);
	assert_exit_ok(&r1);
	assert_exit_ok(&r2);
	char line[128];
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		snprintf(line, sizeof line, "%s cdcdcdcdcdcdcdcd 1\n", paths[i]);
		if (!strstr(p.err, line))
			fail_msg("poison: no '%s' in:\n%s", line, p.err);
		snprintf(line, sizeof line, "%s 0000000000000000 1\n", paths[i]);
		if (!strstr(z.err, line))
			fail_msg("zero: no '%s' in:\n%s", line, z.err);
		/* random: not uniform, and not what the other run saw */
		const char *at = strstr(r1.err, paths[i]), *at2 = strstr(r2.err, paths[i]);
		assert_non_null(at);
		assert_non_null(at2);
		size_t len = strlen(paths[i]) + 1 + 16;
		assert_int_equal(at[len + 1], '0');
		assert_memory_not_equal(at, at2, len);
	}
	assert_int_equal(strcmp(r1.err, r2.err) != 0, 1);
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		if (strcmp(argv[1], "workload") == 0)
			return child_workload();
		if (strcmp(argv[1], "fail-alloc") == 0)
			return child_fail_alloc();
		if (strcmp(argv[1], "fail-launch") == 0)
			return child_fail_launch();
		if (strcmp(argv[1], "fail-launch-oom") == 0)
			return child_fail_launch_oom();
		if (strcmp(argv[1], "clock") == 0)
			return child_clock();
		if (strcmp(argv[1], "clock-legacy") == 0)
			return child_clock_legacy();
		if (strcmp(argv[1], "async-peak") == 0)
			return child_async_peak();
		if (strcmp(argv[1], "fill") == 0)
			return child_fill();
		return 2;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report_file),
	    cmocka_unit_test(test_fail_alloc),
	    cmocka_unit_test(test_fail_launch),
	    cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_async_free_peak),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_fill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
