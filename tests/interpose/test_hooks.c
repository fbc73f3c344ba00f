/*
 * test_hooks.c — interpose/'s hook machinery in process: the exported
 * entry points and the twins cuGetProcAddress hands out, in front of a
 * fake real driver (fake_libcuda.c, found as libcuda.so.1) and a fake
 * session (below: the session's two flags and its op calls, recorded).
 * The session, profiler and replay are not linked: what interpose/ asks
 * of the layers below is exactly what this file defines.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <cuda.h>

#include "../../core/op.h"
#include "fake_libcuda.h"

/* The entry points by their own names (cuda.h maps these to variants). */
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

/* interpose/dlsym.c's decision, called by its trampoline. */
void *remat_dlsym_override(void *handle, const char *name);

/* ---- the fake session --------------------------------------------------- */

int remat_session_active, remat_session_watch;

static struct {
	int begins, ends;
	struct remat_op op; /* as session_op_begin saw it */
	CUresult begin_rc;  /* what session_op_begin answers */
	CUresult end_rc;    /* the result session_op_end got */
	int real_calls_at_begin;
	int names;
	const char *name;
	void *func;
} ses;

static struct fake_cuda *drv;

CUresult session_op_begin(struct remat_op *op)
{
	ses.begins++;
	ses.op = *op;
	ses.real_calls_at_begin = drv->calls;
	return ses.begin_rc;
}

void session_op_end(struct remat_op *op, CUresult rc)
{
	(void)op;
	ses.ends++;
	ses.end_rc = rc;
}

void session_function_name(void *func, const char *name, int is_kernel)
{
	(void)is_kernel;
	ses.names++;
	ses.func = func;
	ses.name = name;
}

/* ---- helpers ------------------------------------------------------------ */

/* The fake driver's own function: dlsym with the session inactive, which
 * our dlsym hook leaves to glibc. */
static void *real_fn(const char *name)
{
	int active = remat_session_active;
	remat_session_active = 0;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	void *f = dlsym(h, name);
	dlclose(h);
	remat_session_active = active;
	assert_non_null(f);
	return f;
}

static int setup(void **state)
{
	(void)state;
	memset(&ses, 0, sizeof(ses));
	memset(drv, 0, sizeof(*drv));
	remat_session_active = 1;
	remat_session_watch = 0;
	return 0;
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);

static void *proc(const char *symbol, int version, cuuint64_t flags, CUresult want,
                  CUdriverProcAddressQueryResult want_status)
{
	void *fn = (void *)1;
	CUdriverProcAddressQueryResult st = 99;
	assert_int_equal(cuGetProcAddress_v2(symbol, &fn, version, flags, &st), want);
	assert_int_equal(st, want_status);
	return fn;
}

/* ---- cuGetProcAddress --------------------------------------------------- */

/* A hooked name gets our twin: neither the real function nor our exported
 * one, and calling it reaches the real one the driver returned. */
static void test_procaddr_twin(void **state)
{
	(void)state;
	void *fn = proc("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_DEFAULT, CUDA_SUCCESS,
	                CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_not_equal(fn, real_fn("cuLaunchKernel"));
	assert_ptr_not_equal(fn, (void *)cuLaunchKernel);
	drv->rc = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	void *params[1] = {NULL};
	CUresult r =
	    ((launch_fn)fn)((CUfunction)0x77, 3, 1, 1, 32, 1, 1, 64, (CUstream)0x5, params, NULL);
	assert_int_equal(r, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	assert_string_equal(drv->last, "cuLaunchKernel");
	assert_int_equal(drv->arg[0], 0x77);
	assert_int_equal(drv->arg[1], 3);
	assert_int_equal(drv->arg[2], 32);
	assert_ptr_equal(drv->ptr, params);
	assert_ptr_equal(drv->stream, (CUstream)0x5);
	assert_int_equal(drv->shmem, 64);
	assert_int_equal(ses.begins, 0); /* watch clear: straight through */
}

/* The per-thread flag: the real _ptsz function behind a twin whose null
 * stream is the per-thread stream. */
static void test_procaddr_per_thread(void **state)
{
	(void)state;
	void *fn = proc("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
	                CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_not_equal(fn, real_fn("cuLaunchKernel_ptsz"));
	remat_session_watch = 1;
	assert_int_equal(((launch_fn)fn)((CUfunction)0x77, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
	                 CUDA_SUCCESS);
	assert_string_equal(drv->last, "cuLaunchKernel_ptsz");
	assert_ptr_equal(drv->stream, NULL); /* the real one gets what the caller passed */
	assert_int_equal(ses.begins, 1);
	assert_ptr_equal(ses.op.stream, CU_STREAM_PER_THREAD);
	assert_string_equal(ses.op.via, "cuGetProcAddress:cuLaunchKernel_ptsz");
}

/* Below a hook's version the driver's older variant passes through; so do
 * names not hooked, and everything while the session is inactive. */
static void test_procaddr_passes_through(void **state)
{
	(void)state;
	void *fn = proc("cuMemcpyHtoD", 3000, CU_GET_PROC_ADDRESS_DEFAULT, CUDA_SUCCESS,
	                CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_equal(fn, real_fn("cuMemcpyHtoD"));
	fn = proc("cuMemcpyHtoD", 3020, CU_GET_PROC_ADDRESS_DEFAULT, CUDA_SUCCESS,
	          CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_not_equal(fn, real_fn("cuMemcpyHtoD_v2"));
	fn = proc("cuCtxGetDevice", 12000, CU_GET_PROC_ADDRESS_DEFAULT, CUDA_SUCCESS,
	          CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_equal(fn, real_fn("cuCtxGetDevice"));
	remat_session_active = 0;
	fn = proc("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_DEFAULT, CUDA_SUCCESS,
	          CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_equal(fn, real_fn("cuLaunchKernel"));
}

/* What the driver does not know, or not at that version, stays its
 * answer: the error, the reason, no pointer. */
static void test_procaddr_unknown(void **state)
{
	(void)state;
	assert_null(proc("cuNoSuchFunction", 12000, CU_GET_PROC_ADDRESS_DEFAULT,
	                 CUDA_ERROR_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND));
	assert_null(proc("cuLaunchKernel", 3000, CU_GET_PROC_ADDRESS_DEFAULT, CUDA_ERROR_NOT_FOUND,
	                 CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT));
}

/* cuGetProcAddress for itself returns ours (v1 or v2 by version), and the
 * v1 entry point swaps as v2 does. */
static void test_procaddr_self(void **state)
{
	(void)state;
	void *fn = NULL;
	assert_int_equal(cuGetProcAddress("cuGetProcAddress", &fn, 12000, 0), CUDA_SUCCESS);
	assert_ptr_equal(fn, (void *)cuGetProcAddress_v2);
	fn = proc("cuGetProcAddress", 11040, CU_GET_PROC_ADDRESS_DEFAULT, CUDA_SUCCESS,
	          CU_GET_PROC_ADDRESS_SUCCESS);
	assert_ptr_equal(fn, (void *)cuGetProcAddress);
	assert_int_equal(cuGetProcAddress("cuLaunchKernel", &fn, 12000, 0), CUDA_SUCCESS);
	assert_ptr_not_equal(fn, real_fn("cuLaunchKernel"));
	assert_ptr_not_equal(fn, NULL);
}

/* ---- dlsym -------------------------------------------------------------- */

/* The dlsym hook hands our exported function for a hooked name and leaves
 * every other name (and everything while inactive) to glibc. */
static void test_dlsym_hook(void **state)
{
	(void)state;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	assert_ptr_equal(remat_dlsym_override(h, "cuLaunchKernel"), (void *)cuLaunchKernel);
	assert_ptr_equal(remat_dlsym_override(h, "cuGetProcAddress_v2"),
	                 (void *)cuGetProcAddress_v2);
	assert_null(remat_dlsym_override(h, "cuCtxGetDevice"));
	assert_null(remat_dlsym_override(h, "fake_cuda"));
	/* through the trampoline: ours, and glibc's answer for the rest */
	assert_ptr_equal(dlsym(h, "cuLaunchKernel"), (void *)cuLaunchKernel);
	assert_ptr_equal(dlsym(h, "fake_cuda"), (void *)drv);
	remat_session_active = 0;
	assert_null(remat_dlsym_override(h, "cuLaunchKernel"));
	assert_ptr_not_equal(dlsym(h, "cuLaunchKernel"), (void *)cuLaunchKernel);
	dlclose(h);
}

/* ---- the entry points --------------------------------------------------- */

/* Exported: the real function resolved lazily, same arguments, same result. */
static void test_exported_passes_through(void **state)
{
	(void)state;
	drv->rc = CUDA_ERROR_INVALID_VALUE;
	char src[16];
	assert_int_equal(cuMemcpyHtoD_v2(0x1000, src, sizeof(src)), CUDA_ERROR_INVALID_VALUE);
	assert_string_equal(drv->last, "cuMemcpyHtoD_v2");
	assert_int_equal(drv->arg[0], 0x1000);
	assert_int_equal(drv->arg[1], sizeof(src));
	assert_ptr_equal(drv->ptr, src);
	assert_int_equal(ses.begins + ses.ends, 0);
}

/* Watched: the op goes to the session before and after the real call,
 * with its fields and the real call's result. */
static void test_watched_op(void **state)
{
	(void)state;
	remat_session_watch = 1;
	drv->rc = CUDA_ERROR_ILLEGAL_ADDRESS;
	void *params[2] = {NULL, NULL}, *extra[1] = {CU_LAUNCH_PARAM_END};
	CUresult r =
	    cuLaunchKernel((CUfunction)0x99, 4, 5, 6, 7, 8, 9, 128, (CUstream)0x3, params, extra);
	assert_int_equal(r, CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(ses.begins, 1);
	assert_int_equal(ses.real_calls_at_begin, 0); /* begin came before the real call */
	assert_int_equal(drv->calls, 1);
	assert_int_equal(ses.ends, 1);
	assert_int_equal(ses.end_rc, CUDA_ERROR_ILLEGAL_ADDRESS);
	const struct remat_op *op = &ses.op;
	assert_int_equal(op->kind, REMAT_OP_KERNEL);
	assert_string_equal(op->via, "cuLaunchKernel");
	assert_ptr_equal(op->func, (void *)0x99);
	assert_true(op->grid[0] == 4 && op->grid[1] == 5 && op->grid[2] == 6);
	assert_true(op->block[0] == 7 && op->block[1] == 8 && op->block[2] == 9);
	assert_int_equal(op->shmem, 128);
	assert_ptr_equal(op->stream, (CUstream)0x3);
	assert_ptr_equal(op->params, params);
	assert_ptr_equal(op->extra, extra);

	char src[8];
	assert_int_equal(cuMemcpyHtoD_v2(0x2000, src, sizeof(src)), CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_int_equal(ses.op.kind, REMAT_OP_MEMCPY);
	assert_int_equal(ses.op.copy, REMAT_COPY_HTOD);
	assert_int_equal(ses.op.dst, 0x2000);
	assert_int_equal(ses.op.src, (uint64_t)(uintptr_t)src);
	assert_int_equal(ses.op.bytes, sizeof(src));
	assert_ptr_equal(ses.op.stream, NULL);
}

/* A refusal from session_op_begin is the op's result: no real call, no
 * session_op_end. */
static void test_begin_refuses(void **state)
{
	(void)state;
	remat_session_watch = 1;
	ses.begin_rc = CUDA_ERROR_OUT_OF_MEMORY;
	assert_int_equal(cuLaunchKernel((CUfunction)0x1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
	                 CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(ses.begins, 1);
	assert_int_equal(drv->calls, 0);
	assert_int_equal(ses.ends, 0);
}

/* A function looked up by name tells the session its name (active only). */
static void test_function_names(void **state)
{
	(void)state;
	CUfunction f = NULL;
	assert_int_equal(cuModuleGetFunction(&f, NULL, "gemm"), CUDA_SUCCESS);
	assert_int_equal(ses.names, 1);
	assert_ptr_equal(ses.func, (void *)f);
	assert_string_equal(ses.name, "gemm");
	remat_session_active = 0;
	assert_int_equal(cuModuleGetFunction(&f, NULL, "gemm"), CUDA_SUCCESS);
	assert_int_equal(ses.names, 1);
}

int main(void)
{
	/* The fake driver, loaded as libremat's core/driver.c will find it. */
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h || !(drv = dlsym(h, "fake_cuda"))) {
		print_error("fake libcuda.so.1 not found: %s\n", dlerror());
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_procaddr_twin, setup),
	    cmocka_unit_test_setup(test_procaddr_per_thread, setup),
	    cmocka_unit_test_setup(test_procaddr_passes_through, setup),
	    cmocka_unit_test_setup(test_procaddr_unknown, setup),
	    cmocka_unit_test_setup(test_procaddr_self, setup),
	    cmocka_unit_test_setup(test_dlsym_hook, setup),
	    cmocka_unit_test_setup(test_exported_passes_through, setup),
	    cmocka_unit_test_setup(test_watched_op, setup),
	    cmocka_unit_test_setup(test_begin_refuses, setup),
	    cmocka_unit_test_setup(test_function_names, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
