/*
 * driver_vmm.c — the VMM API is real and strict: alignment, mapping only
 * inside reservations and never over a mapping, unmapping whole mappings,
 * access rights, shared physical memory, release while mapped, capacity
 * and the high-water mark, and loud faults on unmapped or freed memory.
 *
 * Runs with SIMCUDA_GRANULARITY=64K and SIMCUDA_MEMORY=1M (re-executing
 * itself to set them, since the driver reads them when it loads).
 */
#include "driver_common.h"

#include <sys/resource.h>

#define G   (64u << 10)
#define CAP (1u << 20)

static CUmemAllocationProp prop = {
    .type = CU_MEM_ALLOCATION_TYPE_PINNED,
    .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
};
static CUmemAccessDesc rw = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
                             .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};

static uint64_t in_use(void)
{
	struct simcuda_stats s;
	assert_int_equal(simcudaGetStats(&s), 0);
	return s.physical_in_use;
}

static void test_granularity(void **state)
{
	(void)state;
	size_t g = 0;
	CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	assert_int_equal(g, G);
	CUmemAllocationProp bad = prop;
	bad.location.id = 1;
	assert_int_equal(cuMemGetAllocationGranularity(&g, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
	                 CUDA_ERROR_INVALID_DEVICE);
	bad = prop;
	bad.type = CU_MEM_ALLOCATION_TYPE_INVALID;
	assert_int_equal(cuMemGetAllocationGranularity(&g, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
	                 CUDA_ERROR_INVALID_VALUE);
}

static void test_map_rules(void **state)
{
	(void)state;
	CUdeviceptr va, plain;
	CUmemGenericAllocationHandle h, h2;
	assert_int_equal(cuMemAddressReserve(&va, G + 1, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemAddressReserve(&va, 4 * G, 0, 0, 0));
	assert_int_equal(va % G, 0);
	assert_int_equal(cuMemCreate(&h, G / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemCreate(&h, G, &prop, 0));
	CHECK(cuMemCreate(&h2, 2 * G, &prop, 0));
	CHECK(cuMemAlloc(&plain, 4096));
	assert_int_equal(cuMemMap(va + 4096, G, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* unaligned */
	assert_int_equal(cuMemMap(plain, G, 0, h, 0), CUDA_ERROR_INVALID_VALUE);  /* not reserved */
	assert_int_equal(cuMemMap(va, G, G, h2, 0), CUDA_ERROR_INVALID_VALUE);    /* offset */
	assert_int_equal(cuMemMap(va, 2 * G, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* > handle */
	assert_int_equal(cuMemMap(va + 3 * G, 2 * G, 0, h2, 0),
	                 CUDA_ERROR_INVALID_VALUE); /* past end */
	CHECK(cuMemMap(va, G, 0, h, 0));
	assert_int_equal(cuMemMap(va, G, 0, h2, 0), CUDA_ERROR_INVALID_VALUE); /* overlap */
	CHECK(cuMemMap(va + G, 2 * G, 0, h2, 0));
	/* mapped but no access yet: copies are refused */
	unsigned x = 1;
	assert_int_equal(cuMemcpyHtoD(va, &x, 4), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemSetAccess(va, 4 * G, &rw, 1), CUDA_ERROR_INVALID_VALUE); /* gap */
	assert_int_equal(cuMemSetAccess(va, G / 2, &rw, 1), CUDA_ERROR_INVALID_VALUE); /* partial */
	CHECK(cuMemSetAccess(va, 3 * G, &rw, 1));
	unsigned long long flags = 0;
	CHECK(cuMemGetAccess(&flags, &rw.location, va + G));
	assert_int_equal(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	/* a copy spanning both mappings */
	static unsigned buf[3 * G / 4], back[3 * G / 4];
	for (unsigned i = 0; i < 3 * G / 4; i++)
		buf[i] = i ^ 0x5a5a5a5au;
	CHECK(cuMemcpyHtoD(va, buf, sizeof(buf)));
	CHECK(cuMemcpyDtoH(back, va, sizeof(back)));
	assert_memory_equal(buf, back, sizeof(buf));
	/* unmapping only whole mappings */
	assert_int_equal(cuMemUnmap(va + G, G), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemUnmap(va, 4 * G), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemAddressFree(va, 4 * G), CUDA_ERROR_INVALID_VALUE); /* still mapped */
	CHECK(cuMemUnmap(va, 3 * G));
	assert_int_equal(cuMemcpyDtoH(back, va, 4), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemUnmap(va, G), CUDA_ERROR_INVALID_VALUE); /* nothing mapped */
	/* the physical memory kept its contents: map it again elsewhere */
	CHECK(cuMemMap(va + 2 * G, 2 * G, 0, h2, 0));
	CHECK(cuMemSetAccess(va + 2 * G, 2 * G, &rw, 1));
	CHECK(cuMemcpyDtoH(back, va + 2 * G, 2 * G));
	assert_memory_equal(back, (char *)buf + G, 2 * G);
	CHECK(cuMemUnmap(va + 2 * G, 2 * G));
	assert_int_equal(cuMemAddressFree(va, 2 * G), CUDA_ERROR_INVALID_VALUE); /* wrong size */
	CHECK(cuMemAddressFree(va, 4 * G));
	assert_int_equal(cuMemAddressFree(va, 4 * G), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemRelease(h));
	CHECK(cuMemRelease(h2));
	assert_int_equal(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemFree(plain));
	assert_int_equal(in_use(), 0);
}

static void test_shared_handle_and_release_while_mapped(void **state)
{
	(void)state;
	CUdeviceptr a, b;
	CUmemGenericAllocationHandle h;
	CHECK(cuMemAddressReserve(&a, G, 0, 0, 0));
	CHECK(cuMemAddressReserve(&b, G, 0, 0, 0));
	CHECK(cuMemCreate(&h, G, &prop, 0));
	CUmemAllocationProp got;
	CHECK(cuMemGetAllocationPropertiesFromHandle(&got, h));
	assert_int_equal(got.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
	CHECK(cuMemMap(a, G, 0, h, 0));
	CHECK(cuMemMap(b, G, 0, h, 0));
	CHECK(cuMemSetAccess(a, G, &rw, 1));
	CHECK(cuMemSetAccess(b, G, &rw, 1));
	assert_int_equal(in_use(), G); /* one physical allocation, two mappings */
	unsigned fresh = 0;
	CHECK(cuMemcpyDtoH(&fresh, a, 4));
	assert_int_equal(fresh, 0xcdcdcdcdu); /* junk, not zeroes */
	CHECK(cuMemRelease(h));
	assert_int_equal(cuMemGetAllocationPropertiesFromHandle(&got, h), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(in_use(), G); /* still mapped: memory stays */
	CHECK(cuMemsetD32(a, 0xabcdef01, G / 4));
	unsigned v = 0;
	CHECK(cuMemcpyDtoH(&v, b + 100 * 4, 4));
	assert_int_equal(v, 0xabcdef01);
	CUmemGenericAllocationHandle again;
	CHECK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(b + 8)));
	assert_int_equal(again, h);
	CHECK(cuMemRelease(again));
	CHECK(cuMemUnmap(a, G));
	assert_int_equal(in_use(), G);
	CHECK(cuMemUnmap(b, G));
	assert_int_equal(in_use(), 0); /* last mapping gone: memory freed */
	CHECK(cuMemAddressFree(a, G));
	CHECK(cuMemAddressFree(b, G));
}

static void test_capacity_and_peak(void **state)
{
	(void)state;
	CUmemGenericAllocationHandle hs[CAP / G + 1];
	for (unsigned i = 0; i < CAP / G; i++)
		CHECK(cuMemCreate(&hs[i], G, &prop, 0));
	assert_int_equal(in_use(), CAP);
	assert_int_equal(cuMemCreate(&hs[CAP / G], G, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
	CUdeviceptr p;
	assert_int_equal(cuMemAlloc(&p, 1), CUDA_ERROR_OUT_OF_MEMORY);
	size_t fr, total;
	CHECK(cuMemGetInfo(&fr, &total));
	assert_int_equal(fr, 0);
	assert_int_equal(total, CAP);
	CHECK(cuMemRelease(hs[0]));
	/* cuMemAlloc counts whole 512-byte units */
	CUdeviceptr small[128];
	for (unsigned i = 0; i < G / 512; i++)
		CHECK(cuMemAlloc(&small[i], 1));
	assert_int_equal(cuMemAlloc(&p, 1), CUDA_ERROR_OUT_OF_MEMORY);
	for (unsigned i = 0; i < G / 512; i++)
		CHECK(cuMemFree(small[i]));
	for (unsigned i = 1; i < CAP / G; i++)
		CHECK(cuMemRelease(hs[i]));
	assert_int_equal(in_use(), 0);
	struct simcuda_stats s;
	simcudaGetStats(&s);
	assert_int_equal(s.peak_physical, CAP);
	assert_int_equal(s.capacity, CAP);
	/* an allocation larger than the device */
	assert_int_equal(cuMemAlloc(&p, CAP + 1), CUDA_ERROR_OUT_OF_MEMORY);
}

/* ---- faults, each in a child process ------------------------------------ */

static int child_fault_kernel_unmapped(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUdeviceptr va;
	CUmemGenericAllocationHandle h;
	CHECK(cuMemAddressReserve(&va, G, 0, 0, 0));
	CHECK(cuMemCreate(&h, G, &prop, 0));
	CHECK(cuMemMap(va, G, 0, h, 0));
	CHECK(cuMemSetAccess(va, G, &rw, 1));
	CHECK(cuMemUnmap(va, G));
	unsigned v = 3;
	int n = 16;
	void *args[] = {&va, &v, &n};
	CHECK(cuLaunchKernel(get_fn(m, "fill_u32"), 1, 1, 1, 16, 1, 1, 0, NULL, args, NULL));
	cuCtxSynchronize();
	return 0; /* not reached: the kernel faults */
}

static int child_fault_after_free_async(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CUdeviceptr p;
	CHECK(cuMemAllocAsync(&p, 4096, s));
	CHECK(cuMemFreeAsync(p, s));
	unsigned v = 3;
	int n = 16;
	void *args[] = {&p, &v, &n};
	CHECK(cuLaunchKernel(get_fn(m, "fill_u32"), 1, 1, 1, 16, 1, 1, 0, s, args, NULL));
	cuStreamSynchronize(s);
	return 0;
}

static void sleep_100ms(void *arg)
{
	(void)arg;
	usleep(100 * 1000);
}

/* cuMemUnmap does not wait for queued work: a copy still waiting behind
 * an event faults when it finally runs. */
static int child_fault_copy_after_unmap(void)
{
	setup_context();
	CUstream s1, s2;
	CUevent e;
	CHECK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CHECK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CHECK(cuEventCreate(&e, 0));
	CUdeviceptr va, other;
	CUmemGenericAllocationHandle h;
	CHECK(cuMemAlloc(&other, G));
	CHECK(cuMemAddressReserve(&va, G, 0, 0, 0));
	CHECK(cuMemCreate(&h, G, &prop, 0));
	CHECK(cuMemMap(va, G, 0, h, 0));
	CHECK(cuMemSetAccess(va, G, &rw, 1));
	CHECK(cuLaunchHostFunc(s2, sleep_100ms, NULL));
	CHECK(cuEventRecord(e, s2));
	CHECK(cuStreamWaitEvent(s1, e, 0));
	CHECK(cuMemcpyDtoDAsync(other, va, G, s1));
	CHECK(cuMemUnmap(va, G));
	cuStreamSynchronize(s1);
	return 0;
}

/* A kernel with a bad (non-device) pointer: named, then the previous
 * handler (ASan's) reports the SEGV. */
static int child_fault_kernel_bad_pointer(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUdeviceptr bad = 16;
	unsigned v = 3;
	int n = 1;
	void *args[] = {&bad, &v, &n};
	CHECK(cuLaunchKernel(get_fn(m, "fill_u32"), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	cuCtxSynchronize();
	return 0;
}

static int child_fault_host(void)
{
	setup_context();
	CUdeviceptr va;
	CHECK(cuMemAddressReserve(&va, G, 0, 0, 0));
	return *(volatile int *)(uintptr_t)va;
}

/* Thousands of chunks must not need thousands of file descriptors. */
static int child_many_handles(void)
{
	struct rlimit rl = {64, 64};
	setrlimit(RLIMIT_NOFILE, &rl);
	setup_context();
	enum { N = 300 };
	CUdeviceptr va;
	static CUmemGenericAllocationHandle h[N];
	CHECK(cuMemAddressReserve(&va, (size_t)N * G, 0, 0, 0));
	for (unsigned i = 0; i < N; i++) {
		CHECK(cuMemCreate(&h[i], G, &prop, 0));
		CHECK(cuMemMap(va + (size_t)i * G, G, 0, h[i], 0));
		CHECK(cuMemRelease(h[i]));
	}
	CHECK(cuMemSetAccess(va, (size_t)N * G, &rw, 1));
	CHECK(cuMemsetD8(va, 7, (size_t)N * G));
	unsigned char last = 0;
	CHECK(cuMemcpyDtoH(&last, va + (size_t)N * G - 1, 1));
	CHECK(cuMemUnmap(va, (size_t)N * G));
	CHECK(cuMemAddressFree(va, (size_t)N * G));
	return last == 7 ? 0 : 3;
}

static int child_fault_elsewhere(void)
{
	setup_context();
	/* Not device memory: the previous handler (ASan's) deals with it. */
	volatile uintptr_t addr = 16;
	return *(volatile int *)addr;
}

static void test_fault_kernel_unmapped(void **state)
{
	(void)state;
	struct child_result r = run_child("fault-kernel-unmapped", NULL);
	assert_died_with(&r, "simcuda: fault: kernel 'fill_u32' on stream ");
	assert_non_null(strstr(r.err, " touched unmapped device address 0x"));
}

static void test_fault_after_free_async(void **state)
{
	(void)state;
	struct child_result r = run_child("fault-after-free-async", NULL);
	assert_died_with(&r, "simcuda: fault: kernel 'fill_u32' on stream ");
}

static void test_fault_copy_after_unmap(void **state)
{
	(void)state;
	struct child_result r = run_child("fault-copy-after-unmap", NULL);
	assert_died_with(&r, "simcuda: fault: memcpy 'DtoD' on stream ");
}

static void test_fault_kernel_bad_pointer(void **state)
{
	(void)state;
	struct child_result r = run_child("fault-kernel-bad-pointer", NULL);
	assert_false(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	if (strstr(r.err, "simcuda: fault: kernel 'fill_u32' on stream ") == NULL ||
	    strstr(r.err, " touched an invalid address 0x10") == NULL ||
	    strstr(r.err, "SEGV") == NULL)
		fail_msg("unexpected report:\n%s", r.err);
}

static void test_fault_host(void **state)
{
	(void)state;
	struct child_result r = run_child("fault-host", NULL);
	assert_died_with(&r, "simcuda: fault: host code touched unmapped device address 0x");
}

static void test_many_handles(void **state)
{
	(void)state;
	const char *env[] = {"SIMCUDA_MEMORY=64M", NULL};
	struct child_result r = run_child("many-handles", env);
	assert_exit_ok(&r);
}

static void test_fault_elsewhere_chains(void **state)
{
	(void)state;
	struct child_result r = run_child("fault-elsewhere", NULL);
	assert_false(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_null(strstr(r.err, "simcuda: fault"));
	assert_non_null(strstr(r.err, "SEGV")); /* ASan's handler reported it */
}

int main(int argc, char **argv)
{
	if (getenv("SIMCUDA_GRANULARITY") == NULL) {
		setenv("SIMCUDA_GRANULARITY", "64K", 1);
		setenv("SIMCUDA_MEMORY", "1M", 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	if (argc > 1) {
		static const struct {
			const char *mode;
			int (*fn)(void);
		} children[] = {
		    {"fault-kernel-unmapped", child_fault_kernel_unmapped},
		    {"fault-after-free-async", child_fault_after_free_async},
		    {"fault-copy-after-unmap", child_fault_copy_after_unmap},
		    {"fault-kernel-bad-pointer", child_fault_kernel_bad_pointer},
		    {"fault-host", child_fault_host},
		    {"fault-elsewhere", child_fault_elsewhere},
		    {"many-handles", child_many_handles},
		};
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
			if (strcmp(argv[1], children[i].mode) == 0)
				return children[i].fn();
		return 2;
	}
	setup_context();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_granularity),
	    cmocka_unit_test(test_map_rules),
	    cmocka_unit_test(test_shared_handle_and_release_while_mapped),
	    cmocka_unit_test(test_capacity_and_peak),
	    cmocka_unit_test(test_fault_kernel_unmapped),
	    cmocka_unit_test(test_fault_after_free_async),
	    cmocka_unit_test(test_fault_copy_after_unmap),
	    cmocka_unit_test(test_fault_kernel_bad_pointer),
	    cmocka_unit_test(test_fault_host),
	    cmocka_unit_test(test_fault_elsewhere_chains),
	    cmocka_unit_test(test_many_handles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
