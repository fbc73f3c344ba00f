/*
 * cupti_test.c — the simulated libcupti.so.13 against the simulated
 * driver and runtime: callbacks with the real ids and params for every
 * launch path, correlation between callbacks and activity records,
 * copy/set/API records, buffers, flushing from any thread, the single
 * subscriber rule.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#ifndef RT_MODULE
#error "RT_MODULE: path of the rt_kernels.so test module"
#endif

#define CHECK(call) assert_int_equal((call), cudaSuccess)
#define CU(call)    assert_int_equal((call), CUDA_SUCCESS)
#define CUPTI(call) assert_int_equal((call), CUPTI_SUCCESS)
#define MAX_EVENTS  4096
#define MAX_RECORDS 4096

/* ---- what the subscriber saw ------------------------------------------- */

struct event {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	CUpti_ApiCallbackSite site;
	const char *function; /* a global constant, so kept as is */
	uint32_t correlation_id;
	char symbol[32];
	unsigned grid_x; /* launches: from the params struct */
	int has_context;
	uint32_t context_uid;
	char proc[48]; /* cuGetProcAddress_v2: what was asked for */
	int proc_version;
	cuuint64_t proc_flags;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct event events[MAX_EVENTS];
static int nevents;
static int correlation_data_mismatches;

static unsigned grid_x_of(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *params)
{
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		return ((const cudaLaunchKernel_v7000_params *)params)->gridDim.x;
	if (d == CUPTI_CB_DOMAIN_DRIVER_API &&
	    (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
	     cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz))
		return ((const cuLaunchKernel_params *)params)->gridDimX;
	if (d == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx)
		return ((const cuLaunchKernelEx_params *)params)->config->gridDimX;
	return 0;
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
	assert_ptr_equal(userdata, &events);
	const CUpti_CallbackData *cb = data;
	/* correlationData carries a value from enter to exit of one call. */
	uint64_t mark = ((uint64_t)cb->correlationId << 16) | cbid;
	pthread_mutex_lock(&lock);
	if (cb->callbackSite == CUPTI_API_ENTER)
		*cb->correlationData = mark;
	else if (*cb->correlationData != mark)
		correlation_data_mismatches++;
	if (nevents < MAX_EVENTS) {
		struct event *e = &events[nevents++];
		memset(e, 0, sizeof(*e));
		e->domain = domain;
		e->cbid = cbid;
		e->site = cb->callbackSite;
		e->function = cb->functionName;
		e->correlation_id = cb->correlationId;
		if (cb->symbolName)
			snprintf(e->symbol, sizeof(e->symbol), "%s", cb->symbolName);
		e->grid_x = grid_x_of(domain, cbid, cb->functionParams);
		e->has_context = cb->context != NULL;
		e->context_uid = cb->contextUid;
		if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2) {
			const cuGetProcAddress_v2_params *p = cb->functionParams;
			snprintf(e->proc, sizeof(e->proc), "%s", p->symbol);
			e->proc_version = p->cudaVersion;
			e->proc_flags = p->flags;
		}
	}
	pthread_mutex_unlock(&lock);
}

/* The exit event of the call with this id and grid size, or NULL. */
static const struct event *find_event(CUpti_CallbackDomain d, CUpti_CallbackId cbid,
                                      unsigned grid_x)
{
	for (int i = 0; i < nevents; i++)
		if (events[i].domain == d && events[i].cbid == cbid &&
		    events[i].site == CUPTI_API_EXIT && events[i].grid_x == grid_x)
			return &events[i];
	return NULL;
}

/* ---- activity records ---------------------------------------------------- */

static CUpti_ActivityKernel10 kernels[MAX_RECORDS];
static CUpti_ActivityMemcpy6 copies[MAX_RECORDS];
static CUpti_ActivityMemset4 sets[MAX_RECORDS];
static CUpti_ActivityAPI apis[MAX_RECORDS];
static int nkernels, ncopies, nsets, napis, nbuffers;
static int overfull_small_buffers; /* one-record buffers holding more */
/* Buffers hold one kernel record: every test exercises the delivery of
 * full buffers by CUPTI's thread as well as flushing. */
static const size_t buffer_size = sizeof(CUpti_ActivityKernel10);

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, buffer_size);
	*size = buffer_size;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
	(void)ctx, (void)stream, (void)size;
	CUpti_Activity *r = NULL;
	pthread_mutex_lock(&lock);
	nbuffers++;
	int records = 0;
	while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
		records++;
		switch (r->kind) {
		case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		case CUPTI_ACTIVITY_KIND_KERNEL:
			if (nkernels < MAX_RECORDS)
				kernels[nkernels++] = *(CUpti_ActivityKernel10 *)r;
			break;
		case CUPTI_ACTIVITY_KIND_MEMCPY:
			if (ncopies < MAX_RECORDS)
				copies[ncopies++] = *(CUpti_ActivityMemcpy6 *)r;
			break;
		case CUPTI_ACTIVITY_KIND_MEMSET:
			if (nsets < MAX_RECORDS)
				sets[nsets++] = *(CUpti_ActivityMemset4 *)r;
			break;
		case CUPTI_ACTIVITY_KIND_RUNTIME:
		case CUPTI_ACTIVITY_KIND_DRIVER:
			if (napis < MAX_RECORDS)
				apis[napis++] = *(CUpti_ActivityAPI *)r;
			break;
		default:
			fail_msg("unexpected activity kind %d", (int)r->kind);
		}
	}
	if (records > 1 &&
	    ((CUpti_Activity *)buffer)->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
		overfull_small_buffers++;
	pthread_mutex_unlock(&lock);
	free(buffer);
}

static const CUpti_ActivityKernel10 *kernel_with_grid(unsigned grid_x)
{
	for (int i = 0; i < nkernels; i++)
		if ((unsigned)kernels[i].gridX == grid_x)
			return &kernels[i];
	return NULL;
}

static void reset_records(void)
{
	pthread_mutex_lock(&lock);
	nevents = nkernels = ncopies = nsets = napis = nbuffers = overfull_small_buffers = 0;
	correlation_data_mismatches = 0;
	pthread_mutex_unlock(&lock);
}

/* ---- fixture ------------------------------------------------------------- */

/* The tests read the recorded events and records without the lock: once
 * cuptiActivityFlushAll has returned, every buffer has been delivered and
 * callbacks only come from the test's own thread.  (An assertion failing
 * while holding the lock would hang the next test.) */

static CUpti_SubscriberHandle sub;
static cudaLibrary_t lib;
static cudaKernel_t k_fill;
static float *buf;
enum { N = 1024 };

static int setup(void **state)
{
	(void)state;
	if (cuptiSubscribe(&sub, on_callback, &events) != CUPTI_SUCCESS ||
	    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
	    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS ||
	    cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS)
		return -1;
	if (cudaLibraryLoadFromFile(&lib, RT_MODULE, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess ||
	    cudaLibraryGetKernel(&k_fill, lib, "rt_fill") != cudaSuccess ||
	    cudaMalloc((void **)&buf, N * sizeof(float)) != cudaSuccess)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cudaFree(buf);
	cudaLibraryUnload(lib);
	return cuptiUnsubscribe(sub) == CUPTI_SUCCESS ? 0 : -1;
}

/* The runtime, initialized in setup while subscribed, found every driver
 * function the way the real one does: cuGetProcAddress_v2 with version
 * 13000, once per flavour of default stream. */
static void test_runtime_uses_get_proc_address(void **state)
{
	(void)state;
	int asked = 0, launch_default = 0, launch_per_thread = 0, alloc = 0;
	for (int i = 0; i < nevents; i++) {
		const struct event *e = &events[i];
		if (e->cbid != CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2 ||
		    e->domain != CUPTI_CB_DOMAIN_DRIVER_API || e->site != CUPTI_API_ENTER)
			continue;
		asked++;
		assert_int_equal(e->proc_version, 13000);
		assert_true(e->proc_flags == CU_GET_PROC_ADDRESS_DEFAULT ||
		            e->proc_flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
		if (strcmp(e->proc, "cuLaunchKernel") == 0)
			*(e->proc_flags == CU_GET_PROC_ADDRESS_DEFAULT ? &launch_default
			                                               : &launch_per_thread) += 1;
		alloc += strcmp(e->proc, "cuMemAlloc") == 0;
	}
	assert_true(asked >= 40);
	assert_int_equal(launch_default, 1);
	assert_int_equal(launch_per_thread, 1);
	assert_int_equal(alloc, 2);
}

static void test_single_subscriber(void **state)
{
	(void)state;
	CUpti_SubscriberHandle second = NULL;
	assert_int_equal(cuptiSubscribe(&second, on_callback, NULL),
	                 CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	assert_null(second);
	assert_int_equal(
	    cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE),
	    CUPTI_ERROR_INVALID_PARAMETER);
	uint32_t on = 0;
	CUPTI(cuptiGetCallbackState(&on, sub, CUPTI_CB_DOMAIN_DRIVER_API,
	                            CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
	assert_int_equal(on, 1);
	const char *s = NULL;
	CUPTI(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &s));
	assert_string_equal(s, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
	CUPTI(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API,
	                           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &s));
	assert_string_equal(s, "cuLaunchKernel");
	uint32_t v = 0;
	CUPTI(cuptiGetVersion(&v));
	assert_int_equal(v, CUPTI_API_VERSION);
	uint64_t t0 = 0, t1 = 0;
	CUPTI(cuptiGetTimestamp(&t0));
	CUPTI(cuptiGetTimestamp(&t1));
	assert_true(t1 >= t0);
}

/* Every way a kernel reaches the driver raises its real callback, and the
 * kernel record carries the correlation id of the outermost call. */
static void test_launch_paths(void **state)
{
	(void)state;
	reset_records();
	float v = 1.5f;
	int n = N;
	void *args[] = {&buf, &v, &n};
	dim3 block = {32, 1, 1};

	/* grid.x tells the launches apart: 1..5 */
	CHECK(cudaLaunchKernel((const void *)k_fill, (dim3){1, 1, 1}, block, args, 0, 0));

	CUfunction f;
	CU(cuKernelGetFunction(&f, (CUkernel)k_fill));
	CU(cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, NULL, args, NULL));

	CUlaunchConfig cfg = {.gridDimX = 3,
	                      .gridDimY = 1,
	                      .gridDimZ = 1,
	                      .blockDimX = 32,
	                      .blockDimY = 1,
	                      .blockDimZ = 1};
	CU(cuLaunchKernelEx(&cfg, f, args, NULL));

	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	assert_non_null(h);
	__typeof__(cuGetProcAddress) *gpa =
	    (__typeof__(cuGetProcAddress) *)dlsym(h, "cuGetProcAddress_v2");
	assert_non_null(gpa);
	__typeof__(cuLaunchKernel) *launch = NULL, *launch_pt = NULL;
	CUdriverProcAddressQueryResult qr;
	CU(gpa("cuLaunchKernel", (void **)&launch, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &qr));
	CU(gpa("cuLaunchKernel", (void **)&launch_pt, 13000,
	       CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &qr));
	CU(launch(f, 4, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
	CU(launch_pt(f, 5, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
	dlclose(h);

	CHECK(cudaDeviceSynchronize());
	CUPTI(cuptiActivityFlushAll(0));

	struct {
		CUpti_CallbackDomain domain;
		CUpti_CallbackId cbid;
	} want[] = {
	    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
	    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
	    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx},
	    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
	    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz},
	};
	assert_int_equal(nkernels, 5);
	for (unsigned g = 1; g <= 5; g++) {
		const struct event *e = find_event(want[g - 1].domain, want[g - 1].cbid, g);
		assert_non_null(e);
		assert_string_equal(e->symbol, "rt_fill");
		assert_true(e->has_context);
		const CUpti_ActivityKernel10 *k = kernel_with_grid(g);
		assert_non_null(k);
		assert_int_equal(k->kind, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		assert_int_equal(k->correlationId, e->correlation_id);
		assert_string_equal(k->name, "rt_fill");
		assert_int_equal(k->blockX, 32);
		assert_int_equal(k->gridY, 1);
		assert_int_equal(k->deviceId, 0);
		assert_int_equal(k->contextId, e->context_uid);
		assert_true(k->start < k->end);
	}
	/* The runtime launch went through cuLaunchKernel, which reports the
	 * runtime call's id (as CUPTI did on an H100, api.c). */
	const struct event *rt = find_event(CUPTI_CB_DOMAIN_RUNTIME_API,
	                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1);
	const struct event *nested =
	    find_event(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1);
	assert_non_null(nested);
	assert_int_equal(nested->correlation_id, rt->correlation_id);
	/* Function names as the real CUPTI spells them. */
	assert_string_equal(rt->function, "cudaLaunchKernel_v7000");
	assert_string_equal(nested->function, "cuLaunchKernel");
	/* Enter and exit pair up with the same id, exit after the nested call. */
	int enter_rt = -1, exit_rt = -1, nested_at = -1;
	for (int i = 0; i < nevents; i++) {
		if (events[i].domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
		    events[i].correlation_id == rt->correlation_id)
			*(events[i].site == CUPTI_API_ENTER ? &enter_rt : &exit_rt) = i;
		if (&events[i] == nested)
			nested_at = i;
	}
	assert_true(enter_rt >= 0 && enter_rt < nested_at && nested_at < exit_rt);
	assert_int_equal(correlation_data_mismatches, 0);
	/* The runtime API record of the launch has the same id. */
	int found = 0;
	for (int i = 0; i < napis; i++)
		if (apis[i].kind == CUPTI_ACTIVITY_KIND_RUNTIME &&
		    apis[i].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 &&
		    apis[i].correlationId == rt->correlation_id)
			found = apis[i].returnValue == cudaSuccess && apis[i].start <= apis[i].end;
	assert_true(found);
}

static void test_copy_and_set_records(void **state)
{
	(void)state;
	reset_records();
	static float host[N];
	CHECK(cudaMemcpy(buf, host, sizeof(host), cudaMemcpyHostToDevice));
	CHECK(cudaMemset(buf, 0x3c, 100));
	CHECK(cudaMemcpy(host, buf, 256, cudaMemcpyDeviceToHost));
	CHECK(cudaDeviceSynchronize());
	CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));

	assert_int_equal(ncopies, 2);
	assert_int_equal(nsets, 1);
	const struct event *h2d = NULL, *d2h = NULL, *set = NULL;
	for (int i = 0; i < nevents; i++) {
		const struct event *e = &events[i];
		if (e->domain != CUPTI_CB_DOMAIN_RUNTIME_API || e->site != CUPTI_API_EXIT)
			continue;
		if (e->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020)
			*(h2d ? &d2h : &h2d) = e;
		if (e->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020)
			set = e;
	}
	assert_non_null(h2d);
	assert_non_null(d2h);
	assert_non_null(set);
	/* Buffers may be delivered in any order: find the records by kind. */
	const CUpti_ActivityMemcpy6 *up = &copies[0], *down = &copies[1];
	if (up->copyKind != CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) {
		up = &copies[1];
		down = &copies[0];
	}
	assert_int_equal(up->copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	assert_int_equal(up->bytes, sizeof(host));
	assert_int_equal(up->correlationId, h2d->correlation_id);
	assert_int_equal(up->srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
	assert_int_equal(up->dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
	assert_int_equal(down->copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
	assert_int_equal(down->bytes, 256);
	assert_int_equal(down->correlationId, d2h->correlation_id);
	assert_true(up->end <= down->start);
	assert_int_equal(sets[0].bytes, 100);
	assert_int_equal(sets[0].value, 0x3c);
	assert_int_equal(sets[0].correlationId, set->correlation_id);
}

/* With buffers that hold one record each, full ones are delivered by
 * CUPTI's own thread, the last by a flush from another thread; nothing is
 * lost. */
static void *flush_thread(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)cuptiActivityFlushAll(0);
}

static void test_small_buffers_and_flush_from_thread(void **state)
{
	(void)state;
	CUpti_ActivityKind api = CUPTI_ACTIVITY_KIND_RUNTIME;
	CUPTI(cuptiActivityDisable(api));
	CUPTI(cuptiActivityFlushAll(0));
	reset_records();
	float v = 2.0f;
	int n = N;
	void *args[] = {&buf, &v, &n};
	enum { LAUNCHES = 40 };
	for (unsigned g = 1; g <= LAUNCHES; g++)
		CHECK(cudaLaunchKernel((const void *)k_fill, (dim3){g, 1, 1}, (dim3){1, 1, 1}, args,
		                       0, 0));
	CHECK(cudaDeviceSynchronize());
	pthread_t t;
	void *rc;
	assert_int_equal(pthread_create(&t, NULL, flush_thread, NULL), 0);
	pthread_join(t, &rc);
	assert_int_equal((uintptr_t)rc, CUPTI_SUCCESS);
	assert_int_equal(nkernels, LAUNCHES);
	assert_int_equal(overfull_small_buffers, 0);
	assert_true(nbuffers >= LAUNCHES);
	for (unsigned g = 1; g <= LAUNCHES; g++)
		assert_non_null(kernel_with_grid(g));
	size_t dropped = 1;
	CUPTI(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
	assert_int_equal(dropped, 0);
	CUPTI(cuptiActivityEnable(api));
}

/* Disabled callbacks and kinds produce nothing. */
static void test_disable(void **state)
{
	(void)state;
	CUPTI(cuptiEnableCallback(0, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	CUPTI(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	reset_records();
	float v = 0;
	int n = N;
	void *args[] = {&buf, &v, &n};
	CHECK(cudaLaunchKernel((const void *)k_fill, (dim3){9, 1, 1}, (dim3){1, 1, 1}, args, 0, 0));
	CHECK(cudaDeviceSynchronize());
	CUPTI(cuptiActivityFlushAll(0));
	assert_int_equal(nkernels, 0);
	assert_null(find_event(CUPTI_CB_DOMAIN_RUNTIME_API,
	                       CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 9));
	assert_non_null(
	    find_event(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 9));
	CUPTI(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	assert_int_equal(cuptiActivityEnable((CUpti_ActivityKind)100000), CUPTI_ERROR_INVALID_KIND);
}

/* Several threads launch at once, each on its own stream: every kernel
 * record still carries the id of the runtime call that launched it. */
enum { THREADS = 4, PER_THREAD = 25, GRID_BASE = 100 };

static void *launcher(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	cudaStream_t s;
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return (void *)1;
	float v = (float)t;
	int n = N;
	void *args[] = {&buf, &v, &n};
	uintptr_t failures = 0;
	for (unsigned i = 0; i < PER_THREAD; i++) {
		dim3 grid = {GRID_BASE + t * PER_THREAD + i, 1, 1};
		failures += cudaLaunchKernel((const void *)k_fill, grid, (dim3){1, 1, 1}, args, 0,
		                             s) != cudaSuccess;
	}
	failures += cudaStreamSynchronize(s) != cudaSuccess;
	failures += cudaStreamDestroy(s) != cudaSuccess;
	return (void *)failures;
}

static void test_concurrent_launches(void **state)
{
	(void)state;
	reset_records();
	pthread_t th[THREADS];
	for (uintptr_t t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, launcher, (void *)t), 0);
	for (int t = 0; t < THREADS; t++) {
		void *failures;
		pthread_join(th[t], &failures);
		assert_null(failures);
	}
	CUPTI(cuptiActivityFlushAll(0));
	assert_int_equal(nkernels, THREADS * PER_THREAD);
	assert_int_equal(correlation_data_mismatches, 0);
	for (unsigned g = GRID_BASE; g < GRID_BASE + THREADS * PER_THREAD; g++) {
		const struct event *e =
		    find_event(CUPTI_CB_DOMAIN_RUNTIME_API,
		               CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, g);
		const CUpti_ActivityKernel10 *k = kernel_with_grid(g);
		assert_non_null(e);
		assert_non_null(k);
		assert_int_equal(k->correlationId, e->correlation_id);
	}
}

/* cuptiFinalize detaches everything; CUPTI can be attached again. */
static void test_finalize_and_reattach(void **state)
{
	(void)state;
	float v = 0;
	int n = N;
	void *args[] = {&buf, &v, &n};
	CUPTI(cuptiFinalize());
	reset_records();
	CHECK(
	    cudaLaunchKernel((const void *)k_fill, (dim3){11, 1, 1}, (dim3){1, 1, 1}, args, 0, 0));
	CHECK(cudaDeviceSynchronize());
	CUPTI(cuptiActivityFlushAll(0));
	assert_int_equal(nevents, 0);
	assert_int_equal(nkernels, 0);
	/* The old handle is gone: a new subscription is allowed. */
	CUPTI(cuptiSubscribe(&sub, on_callback, &events));
	CUPTI(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	                          CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL));
	CHECK(
	    cudaLaunchKernel((const void *)k_fill, (dim3){12, 1, 1}, (dim3){1, 1, 1}, args, 0, 0));
	CHECK(cudaDeviceSynchronize());
	CUPTI(cuptiActivityFlushAll(0));
	const struct event *e = find_event(CUPTI_CB_DOMAIN_RUNTIME_API,
	                                   CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 12);
	assert_non_null(e);
	assert_int_equal(nkernels, 1);
	assert_int_equal(kernels[0].kind, CUPTI_ACTIVITY_KIND_KERNEL);
	assert_int_equal(kernels[0].correlationId, e->correlation_id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runtime_uses_get_proc_address),
	    cmocka_unit_test(test_single_subscriber),
	    cmocka_unit_test(test_launch_paths),
	    cmocka_unit_test(test_copy_and_set_records),
	    cmocka_unit_test(test_small_buffers_and_flush_from_thread),
	    cmocka_unit_test(test_concurrent_launches),
	    cmocka_unit_test(test_disable),
	    cmocka_unit_test(test_finalize_and_reattach),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
