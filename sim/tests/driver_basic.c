/*
 * driver_basic.c — the simulated driver's core: initialization, device
 * and context queries, allocation and copies, module loading, launches
 * through every entry point, parameter layout, image rejection, error
 * strings.
 */
#include "driver_common.h"

#include <fcntl.h>
#include <sys/stat.h>

static CUmodule mod;

static int group_setup(void **state)
{
	(void)state;
	setup_context();
	mod = load_test_module();
	return 0;
}

static void test_not_initialized_first(void **state)
{
	(void)state;
	/* Runs first, before group setup's cuInit: see main(). */
}

static void test_version_and_device(void **state)
{
	(void)state;
	int v, n, attr;
	char name[64];
	size_t total;
	CUdevice d;
	CHECK(cuDriverGetVersion(&v));
	assert_int_equal(v, 13000);
	CHECK(cuDeviceGetCount(&n));
	assert_int_equal(n, 1);
	CHECK(cuDeviceGet(&d, 0));
	assert_int_equal(cuDeviceGet(&d, 1), CUDA_ERROR_INVALID_DEVICE);
	CHECK(cuDeviceGetName(name, sizeof(name), d));
	assert_string_equal(name, "simcuda");
	CHECK(cuDeviceTotalMem(&total, d));
	assert_int_equal(total, 16ull << 30);
	CHECK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d));
	assert_int_equal(attr, 1024);
	CHECK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d));
	assert_int_equal(attr, 9);
	CHECK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d));
	assert_int_equal(attr, 132);
	CHECK(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, d));
	assert_int_equal(attr, 1);
	assert_int_equal(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_MAX, d),
	                 CUDA_ERROR_INVALID_VALUE);
	CUuuid u;
	CHECK(cuDeviceGetUuid(&u, d));
	assert_memory_equal(u.bytes, "simcuda-device-0", 16);
}

static void test_contexts(void **state)
{
	(void)state;
	CUcontext c, c2, popped;
	unsigned flags;
	int active;
	CHECK(cuCtxGetCurrent(&c));
	assert_non_null(c);
	CHECK(cuDevicePrimaryCtxRetain(&c2, 0));
	assert_ptr_equal(c, c2);
	CHECK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	assert_int_equal(active, 1);
	CHECK(cuDevicePrimaryCtxRelease(0));
	CHECK(cuCtxPushCurrent(c));
	CHECK(cuCtxPopCurrent(&popped));
	assert_ptr_equal(popped, c);
	CUdevice d = -1;
	CHECK(cuCtxGetDevice(&d));
	assert_int_equal(d, 0);
	CHECK(cuCtxSynchronize());
	assert_int_equal(cuCtxSetCurrent((CUcontext)&flags), CUDA_ERROR_INVALID_CONTEXT);
	/* No current context on a fresh thread's stack after popping it. */
	CHECK(cuCtxPopCurrent(&popped));
	CUdeviceptr p;
	assert_int_equal(cuMemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
	CHECK(cuCtxSetCurrent(c));
}

static void test_alloc_copy_roundtrip(void **state)
{
	(void)state;
	enum { N = 4096 };
	unsigned in[N], out[N];
	for (unsigned i = 0; i < N; i++)
		in[i] = i * 7u;
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, sizeof(in)));
	CHECK(cuMemAlloc(&b, sizeof(in)));
	CHECK(cuMemcpyHtoD(a, in, sizeof(in)));
	CHECK(cuMemcpyDtoD(b, a, sizeof(in)));
	memset(out, 0, sizeof(out));
	CHECK(cuMemcpyDtoH(out, b, sizeof(out)));
	assert_memory_equal(in, out, sizeof(in));
	/* generic cuMemcpy infers directions */
	CHECK(cuMemsetD32(b, 0xdeadbeef, N));
	CHECK(cuMemcpy((CUdeviceptr)(uintptr_t)out, b, sizeof(out)));
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(out[i], 0xdeadbeef);
	CHECK(cuMemsetD8(b, 0x11, 3));
	CHECK(cuMemsetD16(b + 4, 0x2233, 1));
	CHECK(cuMemcpyDtoH(out, b, 8));
	assert_int_equal(((unsigned char *)out)[0], 0x11);
	assert_int_equal(((unsigned char *)out)[2], 0x11);
	assert_int_equal(((unsigned char *)out)[3], 0xde);
	assert_int_equal(((unsigned short *)out)[2], 0x2233);
	/* wrong directions, ranges past the end, misaligned memsets */
	assert_int_equal(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)in, out, 4),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemcpyDtoH(out, a, sizeof(in) + 4), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuMemsetD32(a + 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
	size_t fr, tot;
	CHECK(cuMemGetInfo(&fr, &tot));
	assert_true(tot - fr >= 2 * sizeof(in));
	CUdeviceptr base;
	size_t size;
	CHECK(cuMemGetAddressRange(&base, &size, a + 100));
	assert_int_equal(base, a);
	assert_int_equal(size, sizeof(in));
	CHECK(cuMemFree(a));
	CHECK(cuMemFree(b));
	assert_int_equal(cuMemFree(a), CUDA_ERROR_INVALID_VALUE);           /* double free */
	assert_int_equal(cuMemcpyHtoD(a, in, 4), CUDA_ERROR_INVALID_VALUE); /* freed */
}

static void test_launch_vec_add(void **state)
{
	(void)state;
	enum { N = 1000 };
	float a[N], b[N], c[N];
	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = 2.0f * (float)i;
	}
	CUdeviceptr da, db, dc;
	CHECK(cuMemAlloc(&da, sizeof(a)));
	CHECK(cuMemAlloc(&db, sizeof(b)));
	CHECK(cuMemAlloc(&dc, sizeof(c)));
	CHECK(cuMemcpyHtoD(da, a, sizeof(a)));
	CHECK(cuMemcpyHtoD(db, b, sizeof(b)));
	CUfunction f = get_fn(mod, "vec_add");
	int n = N;
	void *args[] = {&da, &db, &dc, &n};
	CHECK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	CHECK(cuMemcpyDtoH(c, dc, sizeof(c)));
	for (int i = 0; i < N; i++)
		assert_true(c[i] == 3.0f * (float)i);

	/* the packed `extra` form */
	struct {
		CUdeviceptr a, b, c;
		int n;
		int pad;
	} packed = {db, db, dc, N, 0};
	size_t size = 28;
	void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
	                 &size, CU_LAUNCH_PARAM_END};
	CHECK(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
	CHECK(cuMemcpyDtoH(c, dc, sizeof(c)));
	for (int i = 0; i < N; i++)
		assert_true(c[i] == 4.0f * (float)i);
	size = 24;
	assert_int_equal(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, extra),
	                 CUDA_ERROR_INVALID_VALUE);

	/* cuLaunchKernelEx with a validated attribute */
	CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .value.priority = 0};
	CUlaunchConfig cfg = {.gridDimX = 4,
	                      .gridDimY = 1,
	                      .gridDimZ = 1,
	                      .blockDimX = 256,
	                      .blockDimY = 1,
	                      .blockDimZ = 1,
	                      .attrs = &attr,
	                      .numAttrs = 1};
	CHECK(cuLaunchKernelEx(&cfg, f, args, NULL));
	CHECK(cuMemcpyDtoH(c, dc, sizeof(c)));
	assert_true(c[10] == 30.0f);
	attr.id = (CUlaunchAttributeID)15;
	assert_int_equal(cuLaunchKernelEx(&cfg, f, args, NULL), CUDA_ERROR_INVALID_VALUE);

	/* cooperative: at most 132 SMs x 8 blocks of 256 threads */
	CHECK(cuLaunchCooperativeKernel(f, 4, 1, 1, 256, 1, 1, 0, NULL, args));
	CHECK(cuLaunchCooperativeKernel(f, 132 * 8, 1, 1, 256, 1, 1, 0, NULL, args));
	assert_int_equal(cuLaunchCooperativeKernel(f, 132 * 8 + 1, 1, 1, 256, 1, 1, 0, NULL, args),
	                 CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	/* ... fewer when dynamic shared memory takes room: 228 KiB per SM, 40
	 * KiB (+1 KiB reserved) a block: 5 per SM */
	assert_int_equal(
	    cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 40960),
	    CUDA_SUCCESS);
	CHECK(cuLaunchCooperativeKernel(f, 132 * 5, 1, 1, 256, 1, 1, 40960, NULL, args));
	assert_int_equal(
	    cuLaunchCooperativeKernel(f, 132 * 5 + 1, 1, 1, 256, 1, 1, 40960, NULL, args),
	    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
	CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 49152));

	/* invalid configurations never reach the stream */
	assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, NULL, args, NULL),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f, 1, 65536, 1, 32, 1, 1, 0, NULL, args, NULL),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 49153, NULL, args, NULL),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL),
	                 CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuLaunchKernel((CUfunction)&size, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL),
	                 CUDA_ERROR_INVALID_HANDLE);
	CHECK(cuCtxSynchronize());
	CHECK(cuMemFree(da));
	CHECK(cuMemFree(db));
	CHECK(cuMemFree(dc));
}

/* Launch attributes reach the kernel (the cluster shape, cooperative
 * groups' grid) and are checked as the driver checks them. */
static void launch_attrs(CUfunction f, unsigned grid, unsigned block, CUstream s, void **args,
                         CUlaunchAttribute *attrs, unsigned n, CUresult want)
{
	CUlaunchConfig cfg = {.gridDimX = grid,
	                      .gridDimY = 1,
	                      .gridDimZ = 1,
	                      .blockDimX = block,
	                      .blockDimY = 1,
	                      .blockDimZ = 1,
	                      .hStream = s,
	                      .attrs = attrs,
	                      .numAttrs = n};
	assert_int_equal(cuLaunchKernelEx(&cfg, f, args, NULL), want);
}

static int grid_sync_not_cooperative(void)
{
	setup_context();
	CUmodule m = load_test_module();
	CUfunction f = get_fn(m, "grid_rotate");
	CUdeviceptr a, b;
	CHECK(cuMemAlloc(&a, 4 * 64));
	CHECK(cuMemAlloc(&b, 4 * 64));
	int n = 64;
	void *args[] = {&a, &b, &n};
	CHECK(cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
	CHECK(cuCtxSynchronize());
	return 0;
}

static void test_launch_attributes(void **state)
{
	(void)state;
	CUmodule m = load_test_module();
	CUfunction rank = get_fn(m, "cluster_rank"), rot = get_fn(m, "grid_rotate");
	CUdeviceptr out;
	CHECK(cuMemAlloc(&out, 4 * 256));
	void *args[] = {&out};
	CUlaunchAttribute a = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
	a.value.clusterDim.x = 2;
	a.value.clusterDim.y = a.value.clusterDim.z = 1;
	unsigned h[8];

	/* the kernel sees its cluster: rank * 100 + cluster size per block */
	launch_attrs(rank, 8, 32, NULL, args, &a, 1, CUDA_SUCCESS);
	CHECK(cuMemcpyDtoH(h, out, sizeof(h)));
	for (int i = 0; i < 8; i++)
		assert_int_equal(h[i], (unsigned)(i % 2) * 100 + 2);
	launch_attrs(rank, 8, 32, NULL, args, NULL, 0, CUDA_SUCCESS);
	CHECK(cuMemcpyDtoH(h, out, sizeof(h)));
	assert_int_equal(h[1], 1);

	/* whole clusters, of at most 8 blocks unless non-portable sizes are
	 * allowed (then 16) */
	launch_attrs(rank, 7, 32, NULL, args, &a, 1, CUDA_ERROR_INVALID_CLUSTER_SIZE);
	a.value.clusterDim.x = 16;
	launch_attrs(rank, 32, 32, NULL, args, &a, 1, CUDA_ERROR_INVALID_CLUSTER_SIZE);
	int np = -1;
	CHECK(cuFuncGetAttribute(&np, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, rank));
	assert_int_equal(np, 0);
	CHECK(cuFuncSetAttribute(rank, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	launch_attrs(rank, 32, 32, NULL, args, &a, 1, CUDA_SUCCESS);
	a.value.clusterDim.x = 32;
	launch_attrs(rank, 32, 32, NULL, args, &a, 1, CUDA_ERROR_INVALID_CLUSTER_SIZE);
	a.value.clusterDim.x = 0;
	launch_attrs(rank, 32, 32, NULL, args, &a, 1, CUDA_ERROR_INVALID_CLUSTER_SIZE);

	/* a cooperative grid meets at grid.sync(): each thread reads what
	 * another block wrote before it; each block has its own static
	 * shared memory */
	CUdeviceptr ga, gb;
	CHECK(cuMemAlloc(&ga, 4 * 128));
	CHECK(cuMemAlloc(&gb, 4 * 128));
	int n = 128;
	void *rargs[] = {&ga, &gb, &n};
	CUlaunchAttribute c = {.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE};
	c.value.cooperative = 1;
	launch_attrs(rot, 4, 32, NULL, rargs, &c, 1, CUDA_SUCCESS);
	unsigned g[128];
	CHECK(cuMemcpyDtoH(g, gb, sizeof(g)));
	for (unsigned i = 0; i < 128; i++)
		assert_int_equal(g[i], (i + 32) % 128 * 1000 + i / 32);
	CHECK(cuMemsetD32(gb, 0, 128));
	CHECK(cuLaunchCooperativeKernel(rot, 4, 1, 1, 32, 1, 1, 0, NULL, rargs));
	CHECK(cuMemcpyDtoH(g, gb, sizeof(g)));
	assert_int_equal(g[0], 32000u);

	/* a captured launch keeps its attributes: node attribute, and run */
	CUstream s;
	CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	a.value.clusterDim.x = 4;
	CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	launch_attrs(rank, 8, 32, s, args, &a, 1, CUDA_SUCCESS);
	CUgraph gr;
	CHECK(cuStreamEndCapture(s, &gr));
	CUgraphNode node;
	size_t count = 1;
	CHECK(cuGraphGetNodes(gr, &node, &count));
	CUkernelNodeAttrValue v;
	CHECK(cuGraphKernelNodeGetAttribute(node, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v));
	assert_int_equal(v.clusterDim.x, 4);
	CUgraphExec ex;
	CHECK(cuGraphInstantiate(&ex, gr, 0));
	CHECK(cuGraphLaunch(ex, s));
	CHECK(cuStreamSynchronize(s));
	CHECK(cuMemcpyDtoH(h, out, sizeof(h)));
	assert_int_equal(h[3], 304);
	CHECK(cuGraphExecDestroy(ex));
	CHECK(cuGraphDestroy(gr));
	CHECK(cuStreamDestroy(s));

	/* grid.sync() in a launch that is not cooperative: one message, abort */
	struct child_result r = run_child("grid-sync-not-cooperative", NULL);
	assert_died_with(&r, "grid.sync() in a launch that is not cooperative");
	CHECK(cuMemFree(out));
	CHECK(cuMemFree(ga));
	CHECK(cuMemFree(gb));
	CHECK(cuModuleUnload(m));
}

static void test_library_kernel_launch(void **state)
{
	(void)state;
	CUlibrary lib;
	CUkernel k;
	CUfunction f;
	const char *name;
	CHECK(cuLibraryLoadFromFile(&lib, TEST_MODULE, NULL, NULL, 0, NULL, NULL, 0));
	CHECK(cuLibraryGetKernel(&k, lib, "fill_u32"));
	assert_int_equal(cuLibraryGetKernel(&k, lib, "nope"), CUDA_ERROR_NOT_FOUND);
	CHECK(cuLibraryGetKernel(&k, lib, "fill_u32"));
	CHECK(cuKernelGetName(&name, k));
	assert_string_equal(name, "fill_u32");
	CHECK(cuKernelGetFunction(&f, k));
	CHECK(cuFuncGetName(&name, f));
	assert_string_equal(name, "fill_u32");
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 64 * 4));
	unsigned v = 77;
	int n = 64;
	void *args[] = {&p, &v, &n};
	/* CUDA 12: a CUkernel is accepted where a CUfunction is expected. */
	CHECK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
	unsigned out[64];
	CHECK(cuMemcpyDtoH(out, p, sizeof(out)));
	for (int i = 0; i < 64; i++)
		assert_int_equal(out[i], 77);
	size_t off, size;
	CHECK(cuKernelGetParamInfo(k, 2, &off, &size));
	assert_int_equal(off, 12);
	assert_int_equal(size, 4);
	CHECK(cuMemFree(p));
	CHECK(cuLibraryUnload(lib));
	assert_int_equal(cuKernelGetName(&name, k), CUDA_ERROR_INVALID_HANDLE);
	assert_int_equal(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
}

static void test_param_info(void **state)
{
	(void)state;
	CUfunction f = get_fn(mod, "mixed");
	static const size_t off[] = {0, 8, 16, 24, 32}, size[] = {1, 8, 8, 2, 8};
	for (size_t i = 0; i < 5; i++) {
		size_t o, s;
		CHECK(cuFuncGetParamInfo(f, i, &o, &s));
		assert_int_equal(o, off[i]);
		assert_int_equal(s, size[i]);
	}
	size_t o, s;
	assert_int_equal(cuFuncGetParamInfo(f, 5, &o, &s), CUDA_ERROR_INVALID_VALUE);
	/* launching with those offsets delivers each value intact */
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 16));
	char c = 'x';
	double d = 41.9;
	short sh = -3;
	long long q = 1ll << 40 | 5;
	void *args[] = {&c, &d, &p, &sh, &q};
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	int out[4];
	CHECK(cuMemcpyDtoH(out, p, sizeof(out)));
	assert_int_equal(out[0], 'x');
	assert_int_equal(out[1], 41);
	assert_int_equal(out[2], -3);
	assert_int_equal(out[3], 5);
	int attr;
	CHECK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	assert_int_equal(attr, 49152);
	CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
	CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 65536, NULL, args, NULL));
	CHECK(cuCtxSynchronize());
	CHECK(cuMemFree(p));
}

static void write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
}

static void test_image_rejection(void **state)
{
	(void)state;
	CUmodule m;
	static const char ptx[] = "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n";
	assert_int_equal(cuModuleLoadData(&m, ptx), CUDA_ERROR_INVALID_PTX);
	assert_int_equal(cuModuleLoadData(&m, "  .version 8.5\n.target sm_80\n"),
	                 CUDA_ERROR_INVALID_PTX);
	static const unsigned fatbin[8] = {0xba55ed50u, 0x00100001u};
	assert_int_equal(cuModuleLoadData(&m, fatbin), CUDA_ERROR_INVALID_IMAGE);
	/* a cubin: 64-bit ELF executable for EM_CUDA (190) */
	unsigned char cubin[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
	cubin[16] = 2;   /* ET_EXEC */
	cubin[18] = 190; /* EM_CUDA */
	assert_int_equal(cuModuleLoadData(&m, cubin), CUDA_ERROR_INVALID_IMAGE);
	char path[] = "/tmp/simcuda-bad-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, cubin, sizeof(cubin));
	assert_int_equal(cuModuleLoad(&m, path), CUDA_ERROR_INVALID_IMAGE);
	write_file(path, ptx, sizeof(ptx));
	assert_int_equal(cuModuleLoad(&m, path), CUDA_ERROR_INVALID_PTX);
	unlink(path);
	assert_int_equal(cuModuleLoad(&m, "/nonexistent/x.so"), CUDA_ERROR_FILE_NOT_FOUND);
	assert_int_equal(cuModuleLoad(&m, TEST_MODULE_DIR "/badabi.so"), CUDA_ERROR_INVALID_IMAGE);
}

static char *read_image(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *image = malloc((size_t)n);
	assert_int_equal(fread(image, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return image;
}

static void test_load_from_memory(void **state)
{
	(void)state;
	char *image = read_image(TEST_MODULE);
	CUmodule m;
	CHECK(cuModuleLoadData(&m, image));
	free(image); /* the driver keeps its own copy */
	/* A second, different image loaded meanwhile is a module of its own
	 * (libraries too), not the first one again. */
	char *second = read_image(TEST_MODULE_DIR "/second.so");
	CUmodule m2;
	CUlibrary lib;
	CUkernel k;
	CHECK(cuModuleLoadData(&m2, second));
	CHECK(cuLibraryLoadData(&lib, second, NULL, NULL, 0, NULL, NULL, 0));
	free(second);
	CUfunction f2;
	CHECK(cuModuleGetFunction(&f2, m2, "second_kernel"));
	CHECK(cuLibraryGetKernel(&k, lib, "second_kernel"));
	assert_int_equal(cuModuleGetFunction(&f2, m2, "fill_u32"), CUDA_ERROR_NOT_FOUND);
	CHECK(cuLibraryUnload(lib));
	CHECK(cuModuleUnload(m2));
	CUfunction fn = get_fn(m, "fill_u32");
	unsigned count;
	CHECK(cuModuleGetFunctionCount(&count, m));
	assert_int_equal(count, 11);
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 16));
	unsigned v = 5;
	int len = 4;
	void *args[] = {&p, &v, &len};
	CHECK(cuLaunchKernel(fn, 1, 1, 1, 4, 1, 1, 0, NULL, args, NULL));
	unsigned out[4];
	CHECK(cuMemcpyDtoH(out, p, sizeof(out)));
	assert_int_equal(out[3], 5);
	CHECK(cuModuleUnload(m));
	assert_int_equal(cuModuleGetFunction(&fn, m, "fill_u32"), CUDA_ERROR_INVALID_HANDLE);
	CHECK(cuMemFree(p));
}

static void test_error_strings(void **state)
{
	(void)state;
	const char *s;
	CHECK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
	assert_string_equal(s, "CUDA_ERROR_OUT_OF_MEMORY");
	CHECK(cuGetErrorString(CUDA_ERROR_INVALID_VALUE, &s));
	assert_non_null(strstr(s, "parameters"));
	assert_int_equal(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
}

static void test_stubs_not_supported(void **state)
{
	(void)state;
	CUcontext c;
	/* cuCtxCreate is one of the names the simulator does not implement. */
	assert_int_equal(cuCtxCreate(&c, NULL, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	CHECK(cuStreamIsCapturing(NULL, &st));
	assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_NONE);
}

static void on_callback(CUstream s, CUresult status, void *data)
{
	(void)s;
	*(int *)data = status == CUDA_SUCCESS ? 1 : -1;
}

static void test_pointer_attributes_and_callbacks(void **state)
{
	(void)state;
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 3000));
	unsigned type = 0;
	CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 10));
	assert_int_equal(type, CU_MEMORYTYPE_DEVICE);
	CUdeviceptr start = 0;
	size_t size = 0;
	CHECK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 10));
	CHECK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 10));
	assert_int_equal(start, p);
	assert_int_equal(size, 3000);
	int host_var = 0;
	assert_int_equal(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	                                       (CUdeviceptr)(uintptr_t)&host_var),
	                 CUDA_ERROR_INVALID_VALUE);
	CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
	                               CU_POINTER_ATTRIBUTE_CONTEXT};
	CUcontext ctx = (CUcontext)&type;
	void *data[] = {&type, &ctx};
	CHECK(cuPointerGetAttributes(2, attrs, data, (CUdeviceptr)(uintptr_t)&host_var));
	assert_int_equal(type, 0);
	assert_null(ctx);
	CHECK(cuMemFree(p));
	int called = 0;
	CHECK(cuStreamAddCallback(NULL, on_callback, &called, 0));
	CHECK(cuStreamSynchronize(NULL));
	assert_int_equal(called, 1);
	size_t limit = 0;
	CHECK(cuCtxGetLimit(&limit, CU_LIMIT_STACK_SIZE));
	assert_int_equal(limit, 1024);
	int blocks = 0;
	CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, get_fn(mod, "vec_add"), 256, 0));
	assert_int_equal(blocks, 8);
}

static void test_default_pool(void **state)
{
	(void)state;
	CUmemoryPool pool, same;
	CHECK(cuDeviceGetDefaultMemPool(&pool, 0));
	CHECK(cuDeviceGetMemPool(&same, 0));
	assert_ptr_equal(pool, same);
	cuuint64_t v = 1 << 20;
	CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	v = 0;
	CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	assert_int_equal(v, 1 << 20);
	CUdeviceptr a, b;
	CHECK(cuMemAllocFromPoolAsync(&a, 1000, pool, NULL));
	CHECK(cuMemAllocAsync(&b, 3000, NULL));
	CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
	assert_int_equal(v, 1024 + 3072);
	CHECK(cuMemFreeAsync(a, NULL));
	CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
	assert_int_equal(v, 3072);
	CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	assert_true(v >= 1024 + 3072);
	v = 5;
	assert_int_equal(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v),
	                 CUDA_ERROR_INVALID_VALUE);
	v = 0;
	CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	CHECK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	assert_int_equal(v, 3072);
	assert_int_equal(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v),
	                 CUDA_ERROR_INVALID_VALUE);
	CHECK(cuMemFreeAsync(b, NULL));
	CHECK(cuMemPoolTrimTo(pool, 0));
	assert_int_equal(cuMemAllocFromPoolAsync(&a, 16, (CUmemoryPool)&v, NULL),
	                 CUDA_ERROR_INVALID_VALUE);
	CHECK(cuStreamSynchronize(NULL));
}

/* A child forked after cuInit cannot use the device (no workers there). */
static void test_fork_after_init(void **state)
{
	(void)state;
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		CUdeviceptr p;
		int ok = cuMemAlloc(&p, 16) == CUDA_ERROR_NOT_INITIALIZED &&
		         cuInit(0) == CUDA_ERROR_NOT_INITIALIZED;
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	char buf[256] = "";
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(buf, "simcuda: CUDA used in a process forked after cuInit"));
	/* the parent is unaffected */
	CUdeviceptr p;
	CHECK(cuMemAlloc(&p, 16));
	CHECK(cuMemFree(p));
}

/* Last: resetting the primary context destroys its memory and streams. */
static void test_primary_reset(void **state)
{
	(void)state;
	CUdeviceptr p, q;
	CUstream s;
	CHECK(cuMemAlloc(&p, 4096));
	CHECK(cuStreamCreate(&s, 0));
	CHECK(cuDevicePrimaryCtxReset(0));
	unsigned flags;
	int active = 1;
	CHECK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	assert_int_equal(active, 0);
	assert_int_equal(cuMemAlloc(&q, 16), CUDA_ERROR_CONTEXT_IS_DESTROYED);
	CUcontext c;
	CHECK(cuDevicePrimaryCtxRetain(&c, 0));
	CHECK(cuCtxSetCurrent(c));
	unsigned v = 0;
	assert_int_equal(cuMemcpyHtoD(p, &v, 4), CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
	struct simcuda_stats st;
	simcudaGetStats(&st);
	assert_int_equal(st.physical_in_use, 0);
	CHECK(cuMemAlloc(&q, 16));
	CHECK(cuMemFree(q));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "grid-sync-not-cooperative"))
		return grid_sync_not_cooperative();
	/* Before any cuInit: the driver must say so. */
	CUdeviceptr p;
	int n;
	if (cuMemAlloc(&p, 16) != CUDA_ERROR_NOT_INITIALIZED ||
	    cuDeviceGetCount(&n) != CUDA_ERROR_NOT_INITIALIZED) {
		fprintf(stderr, "calls before cuInit did not fail with NOT_INITIALIZED\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_not_initialized_first),
	    cmocka_unit_test(test_version_and_device),
	    cmocka_unit_test(test_contexts),
	    cmocka_unit_test(test_alloc_copy_roundtrip),
	    cmocka_unit_test(test_launch_vec_add),
	    cmocka_unit_test(test_launch_attributes),
	    cmocka_unit_test(test_library_kernel_launch),
	    cmocka_unit_test(test_param_info),
	    cmocka_unit_test(test_image_rejection),
	    cmocka_unit_test(test_load_from_memory),
	    cmocka_unit_test(test_error_strings),
	    cmocka_unit_test(test_stubs_not_supported),
	    cmocka_unit_test(test_pointer_attributes_and_callbacks),
	    cmocka_unit_test(test_default_pool),
	    cmocka_unit_test(test_fork_after_init),
	    cmocka_unit_test(test_primary_reset),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
