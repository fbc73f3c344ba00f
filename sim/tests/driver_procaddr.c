/*
 * driver_procaddr.c — cuGetProcAddress picks the ABI variant a caller
 * built for a CUDA version expects (and the per-thread-stream one when
 * asked); cuGetExportTable serves the simulator's private table and the
 * CUPTI hooks see every call with its real callback id and parameters.
 */
#include "driver_common.h"

#include <cupti.h>
#include <dlfcn.h>

#include "simcuda_internal.h"

static void *sym(const char *name)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	void *p = dlsym(h, name);
	dlclose(h);
	assert_non_null(p);
	return p;
}

static void *proc(const char *name, int version, cuuint64_t flags,
                  CUdriverProcAddressQueryResult *st)
{
	void *p = NULL;
	CUresult r = cuGetProcAddress(name, &p, version, flags, st);
	if (r != CUDA_SUCCESS)
		return NULL;
	return p;
}

static void test_variants_by_version(void **state)
{
	(void)state;
	CUdriverProcAddressQueryResult st;
	assert_ptr_equal(proc("cuMemAlloc", 13000, 0, &st), sym("cuMemAlloc_v2"));
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_equal(proc("cuMemAlloc", 3010, 0, &st), sym("cuMemAlloc"));
	assert_ptr_equal(proc("cuCtxCreate", 12000, 0, &st), sym("cuCtxCreate_v3"));
	assert_ptr_equal(proc("cuCtxCreate", 13000, 0, &st), sym("cuCtxCreate_v4"));
	assert_ptr_equal(proc("cuEventElapsedTime", 12000, 0, &st), sym("cuEventElapsedTime"));
	assert_ptr_equal(proc("cuEventElapsedTime", 13000, 0, &st), sym("cuEventElapsedTime_v2"));
	assert_ptr_equal(proc("cuStreamGetCaptureInfo", 11030, 0, &st),
	                 sym("cuStreamGetCaptureInfo_v2"));
	assert_ptr_equal(proc("cuGetProcAddress", 13000, 0, &st), sym("cuGetProcAddress_v2"));
	assert_ptr_equal(proc("cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st),
	                 sym("cuLaunchKernel"));
}

static void test_per_thread_variants(void **state)
{
	(void)state;
	CUdriverProcAddressQueryResult st;
	const cuuint64_t pt = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	assert_ptr_equal(proc("cuLaunchKernel", 13000, pt, &st), sym("cuLaunchKernel_ptsz"));
	assert_ptr_equal(proc("cuMemcpyHtoD", 13000, pt, &st), sym("cuMemcpyHtoD_v2_ptds"));
	assert_ptr_equal(proc("cuMemcpyAsync", 13000, pt, &st), sym("cuMemcpyAsync_ptsz"));
	assert_ptr_equal(proc("cuStreamGetCaptureInfo", 13000, pt, &st),
	                 sym("cuStreamGetCaptureInfo_v3_ptsz"));
	/* no per-thread variant: the ordinary one */
	assert_ptr_equal(proc("cuMemAlloc", 13000, pt, &st), sym("cuMemAlloc_v2"));
	/* per-thread variants appeared in 7.0 */
	assert_ptr_equal(proc("cuLaunchKernel", 6050, pt, &st), sym("cuLaunchKernel"));
}

static void test_not_found(void **state)
{
	(void)state;
	void *p = &p;
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
	assert_int_equal(cuGetProcAddress("cuNoSuchThing", &p, 13000, 0, &st),
	                 CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	assert_null(p);
	assert_int_equal(cuGetProcAddress("cuLaunchKernelEx", &p, 11000, 0, &st),
	                 CUDA_ERROR_NOT_FOUND);
	assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	assert_int_equal(cuGetProcAddress("cuMemAlloc", &p, 13000, 4, &st),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuGetProcAddress(NULL, &p, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);
}

static void test_returned_pointer_works(void **state)
{
	(void)state;
	CUresult (*get_count)(int *) = (CUresult(*)(int *))proc("cuDeviceGetCount", 13000, 0, NULL);
	assert_non_null(get_count);
	int n = 0;
	CHECK(get_count(&n));
	assert_int_equal(n, 1);
	/* an unimplemented name is present and answers "not supported" */
	CUresult (*array_create)(void *, const void *) =
	    (CUresult(*)(void *, const void *))proc("cuArrayCreate", 13000, 0, NULL);
	assert_non_null(array_create);
	assert_int_equal(array_create(NULL, NULL), CUDA_ERROR_NOT_SUPPORTED);
}

static void test_export_table(void **state)
{
	(void)state;
	const void *t = NULL;
	CUuuid ours = SIMCUDA_EXPORT_UUID, other = {{1, 2, 3}};
	assert_int_equal(cuGetExportTable(&t, &other), CUDA_ERROR_NOT_SUPPORTED);
	CHECK(cuGetExportTable(&t, &ours));
	const struct simcuda_export *e = t;
	assert_int_equal(e->size, sizeof(struct simcuda_export));
	uint32_t a = e->new_correlation_id(), b = e->new_correlation_id();
	assert_true(b > a);
	assert_null(e->hooks());
	unsigned long long id;
	CHECK(cuStreamGetId(NULL, &id));
	assert_int_equal(e->stream_id(NULL), (uint32_t)id);
	CUcontext c;
	CHECK(cuCtxGetCurrent(&c));
	assert_int_equal(e->context_id(c), 1);
}

/* ---- CUPTI hooks -------------------------------------------------------- */

struct seen {
	int enter_alloc, exit_alloc;
	size_t alloc_bytes;
	CUresult alloc_result;
	uint32_t launch_corr;
	int kernels, memops;
	uint32_t kernel_corr;
	char kernel_name[64];
	uint64_t kstart, kend;
	uint32_t memop_corr;
	int memop_kind;
};
static struct seen seen;

static void on_api(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
                   const char *fn, const void *params, const void *retval, uint32_t corr,
                   const char *symbol)
{
	(void)symbol;
	assert_int_equal(dom, CUPTI_CB_DOMAIN_DRIVER_API);
	if (cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2) {
		assert_string_equal(fn, "cuMemAlloc_v2");
		const cuMemAlloc_v2_params *p = params;
		seen.alloc_bytes = p->bytesize;
		if (site == CUPTI_API_ENTER) {
			seen.enter_alloc++;
			assert_null(retval);
		} else {
			seen.exit_alloc++;
			seen.alloc_result = *(const CUresult *)retval;
		}
	}
	if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel && site == CUPTI_API_ENTER)
		seen.launch_corr = corr;
}

static void on_kernel(const struct simcuda_activity_kernel *k)
{
	seen.kernels++;
	seen.kernel_corr = k->correlation_id;
	snprintf(seen.kernel_name, sizeof(seen.kernel_name), "%s", k->name);
	seen.kstart = k->start_ns;
	seen.kend = k->end_ns;
}

static void on_memop(const struct simcuda_activity_memop *m)
{
	seen.memops++;
	seen.memop_corr = m->correlation_id;
	seen.memop_kind = m->copy_kind;
}

static void test_hooks(void **state)
{
	(void)state;
	const void *t;
	CUuuid ours = SIMCUDA_EXPORT_UUID;
	CHECK(cuGetExportTable(&t, &ours));
	const struct simcuda_export *e = t;
	static const struct simcuda_hooks hooks = {on_api, on_kernel, on_memop};
	e->set_hooks(&hooks);
	assert_ptr_equal(e->hooks(), &hooks);
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 1000));
	assert_int_equal(seen.enter_alloc, 1);
	assert_int_equal(seen.exit_alloc, 1);
	assert_int_equal(seen.alloc_bytes, 1000);
	assert_int_equal(seen.alloc_result, CUDA_SUCCESS);
	CUmodule m = load_test_module();
	CUfunction f = get_fn(m, "append");
	unsigned v = 1;
	CHECK(cuMemsetD32(p, 0, 4));
	void *args[] = {&p, &v};
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CHECK(cuCtxSynchronize());
	assert_int_equal(seen.kernels, 1);
	assert_int_equal(seen.kernel_corr, seen.launch_corr);
	assert_string_equal(seen.kernel_name, "append");
	/* the module's cost_ns (the legacy model: rerun_as_legacy) */
	assert_int_equal(seen.kend - seen.kstart, 12345);
	/* an outer (runtime) correlation id wins over the driver call's */
	e->set_outer_correlation(4242);
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	e->set_outer_correlation(0);
	CHECK(cuCtxSynchronize());
	assert_int_equal(seen.kernel_corr, 4242);
	unsigned out[4];
	CHECK(cuMemcpyDtoH(out, p, sizeof(out)));
	assert_int_equal(seen.memop_kind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
	assert_int_equal(seen.memops, 2); /* the memset and the copy */
	e->set_hooks(NULL);
	CHECK(cuMemFree(p));
	assert_int_equal(seen.enter_alloc, 1);
	CHECK(cuModuleUnload(m));
}

int main(int argc, char **argv)
{
	(void)argc;
	rerun_as_legacy(argv);
	setup_context();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_variants_by_version),
	    cmocka_unit_test(test_per_thread_variants),
	    cmocka_unit_test(test_not_found),
	    cmocka_unit_test(test_returned_pointer_works),
	    cmocka_unit_test(test_export_table),
	    cmocka_unit_test(test_hooks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
