// calibrate.cu — measures on one host thread what the simulated device's
// profile (the SIMCUDA_* cost variables, sim/README.md) charges per driver
// call: launches, copies, events, allocations and each VMM call (per call and
// per chunk), and whether cuMemUnmap and cuMemSetAccess wait for unrelated
// running work.  It prints NAME=value lines to paste into the environment, so
// that the simulator can stand for the GPU it ran on.  On a GPU it times with
// CLOCK_MONOTONIC; with --simulate it reads the simulator's host clock
// (simcudaGetStats), so it prints the profile's own numbers back.  Built and
// run by tools/gpu/calibrate.sh (docs/gpu-validation.md).
#include <cuda.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "simcuda_stats.h"

// ---- kernels ----------------------------------------------------------------

extern "C" __global__ void calib_empty(int x)
{
	(void)x;
}

// Spins for ns nanoseconds of the GPU's global timer; on the simulator the
// cost function gives it that duration.
extern "C" __global__ void calib_spin(unsigned long long ns)
{
#ifdef __CUDA_ARCH__
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	} while (t - t0 < ns);
#else
	(void)ns;
#endif
}

#ifdef __SIMCUDA__
// Its duration: the device profiles price work (nothing here but wire_ns,
// time off the device, on top of the profile's floor), the legacy model
// takes a cost.
SIMCUDA_WORK(calib_spin)
{
	return {0.0, 0.0, SIMCUDA_MATH_FP32, (double)SIMCUDA_ARG(0)};
}
SIMCUDA_COST(calib_spin)
{
	return (double)SIMCUDA_ARG(0);
}
#endif

// ---- state, errors, clock -------------------------------------------------

#define SPIN_NS 5000000ull // the long kernel of the wait probes: 5 ms
#define MANY    16         // chunks of the larger handle, handles of the many-handle call

static struct {
	CUdevice dev;
	CUcontext ctx;
	CUstream s, s2; // non-blocking streams
	CUfunction empty, spin;
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	size_t gran;
	int reps, warm;
	double overhead; // the clock's own cost, subtracted from every sample
	int (*sim_stats)(struct simcuda_stats *); // set: the simulated host clock
} g;

static void check(CUresult r, const char *call, int line)
{
	if (r == CUDA_SUCCESS)
		return;
	const char *name = "?";
	cuGetErrorName(r, &name);
	fprintf(stderr, "calibrate: %s failed (line %d): %s\n", call, line, name);
	exit(1);
}
#define CK(call) check((call), #call, __LINE__)

// The calling thread's time: simulated (the simulator's per-thread host
// clock) or CLOCK_MONOTONIC.
static int64_t now_ns(void)
{
	if (g.sim_stats) {
		struct simcuda_stats s;
		g.sim_stats(&s);
		return (int64_t)s.host_time_ns;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// TIMED(dst, call): dst = the call's host time in ns, the clock's cost taken off.
#define TIMED(dst, call)                                                                           \
	do {                                                                                       \
		int64_t t0_ = now_ns();                                                            \
		CK(call);                                                                          \
		(dst) = (double)(now_ns() - t0_) - g.overhead;                                     \
	} while (0)

// ---- samples ----------------------------------------------------------------

// A table of samples: reps rows of nf figures; row r is repetition r (the
// first g.warm are warm-up, left out of the statistics).
struct tab {
	int nf, rows;
	double v[];
};

static struct tab *tab_new(int nf, int rows)
{
	struct tab *t = (struct tab *)calloc(1, sizeof(*t) + sizeof(double) * nf * rows);
	if (!t) {
		fprintf(stderr, "calibrate: out of memory\n");
		exit(1);
	}
	t->nf = nf;
	t->rows = rows;
	return t;
}

static double *row(struct tab *t, int r)
{
	return t->v + (size_t)r * t->nf;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// stat T F P: the P-quantile (nearest rank; 0.5: the median) of figure F.
static double stat(const struct tab *t, int f, double p)
{
	int n = t->rows - g.warm;
	double col[4096];
	for (int r = 0; r < n; r++)
		col[r] = t->v[(size_t)(r + g.warm) * t->nf + f];
	qsort(col, n, sizeof(double), cmp_double);
	if (p == 0.5)
		return n % 2 ? col[n / 2] : (col[n / 2 - 1] + col[n / 2]) / 2;
	int k = (int)ceil(p * n) - 1;
	return col[k < 0 ? 0 : k];
}

static long long ns(double x)
{
	return x > 0 ? llround(x) : 0;
}

// ---- host calls -------------------------------------------------------------

enum {
	H_LAUNCH,
	H_COPY,
	H_RECORD,
	H_QUERY,
	H_SQUERY,
	H_WAIT,
	H_SYNC,
	H_ALLOC,
	H_FREE,
	H_AALLOC,
	H_AFREE,
	H_N
};

// One repetition of every host call but VMM's, each on an idle device.
static void host_calls_once(double *d, CUdeviceptr dbuf, void *hbuf, CUevent ev)
{
	int x = 0;
	void *args[] = {&x};
	CUdeviceptr p;
	TIMED(d[H_LAUNCH], cuLaunchKernel(g.empty, 1, 1, 1, 1, 1, 1, 0, g.s, args, NULL));
	CK(cuStreamSynchronize(g.s));
	TIMED(d[H_COPY], cuMemcpyHtoDAsync(dbuf, hbuf, 8, g.s));
	CK(cuStreamSynchronize(g.s));
	TIMED(d[H_RECORD], cuEventRecord(ev, g.s));
	CK(cuStreamSynchronize(g.s));
	TIMED(d[H_QUERY], cuEventQuery(ev));
	TIMED(d[H_SQUERY], cuStreamQuery(g.s));
	TIMED(d[H_WAIT], cuStreamWaitEvent(g.s2, ev, 0));
	CK(cuStreamSynchronize(g.s2));
	TIMED(d[H_SYNC], cuStreamSynchronize(g.s)); // idle: the call's own cost
	TIMED(d[H_ALLOC], cuMemAlloc(&p, 1 << 20));
	TIMED(d[H_FREE], cuMemFree(p));
	TIMED(d[H_AALLOC], cuMemAllocAsync(&p, 1 << 20, g.s));
	TIMED(d[H_AFREE], cuMemFreeAsync(p, g.s));
	CK(cuStreamSynchronize(g.s));
}

static struct tab *host_calls(void)
{
	struct tab *t = tab_new(H_N, g.warm + g.reps);
	CUdeviceptr dbuf;
	void *hbuf;
	CUevent ev;
	CK(cuMemAlloc(&dbuf, 256));
	CK(cuMemAllocHost(&hbuf, 256)); // pinned: the copy is fully asynchronous
	memset(hbuf, 0, 256);
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	for (int r = 0; r < t->rows; r++)
		host_calls_once(row(t, r), dbuf, hbuf, ev);
	CK(cuEventDestroy(ev));
	CK(cuMemFreeHost(hbuf));
	CK(cuMemFree(dbuf));
	return t;
}

// ---- VMM --------------------------------------------------------------------

enum { V_RESERVE, V_CREATE, V_MAP, V_ACCESS, V_UNMAP, V_RELEASE, V_AFREE, V_N };

// One handle of `chunks` granules through its whole life, each call timed.
static void vmm_once(double *d, size_t chunks)
{
	size_t size = chunks * g.gran;
	CUdeviceptr va;
	CUmemGenericAllocationHandle h;
	TIMED(d[V_RESERVE], cuMemAddressReserve(&va, size, 0, 0, 0));
	TIMED(d[V_CREATE], cuMemCreate(&h, size, &g.prop, 0));
	TIMED(d[V_MAP], cuMemMap(va, size, 0, h, 0));
	TIMED(d[V_ACCESS], cuMemSetAccess(va, size, &g.access, 1));
	TIMED(d[V_UNMAP], cuMemUnmap(va, size));
	TIMED(d[V_RELEASE], cuMemRelease(h));
	TIMED(d[V_AFREE], cuMemAddressFree(va, size));
}

static struct tab *vmm(size_t chunks)
{
	struct tab *t = tab_new(V_N, g.warm + g.reps);
	CK(cuCtxSynchronize()); // nothing queued: no call waits for the device
	for (int r = 0; r < t->rows; r++)
		vmm_once(row(t, r), chunks);
	return t;
}

// MANY one-chunk handles mapped side by side: one cuMemSetAccess and one
// cuMemUnmap over all of them.
static struct tab *vmm_many(void)
{
	struct tab *t = tab_new(2, g.warm + g.reps);
	CUmemGenericAllocationHandle h[MANY];
	CUdeviceptr va;
	size_t size = MANY * g.gran;
	CK(cuCtxSynchronize());
	for (int r = 0; r < t->rows; r++) {
		CK(cuMemAddressReserve(&va, size, 0, 0, 0));
		for (int i = 0; i < MANY; i++) {
			CK(cuMemCreate(&h[i], g.gran, &g.prop, 0));
			CK(cuMemMap(va + i * g.gran, g.gran, 0, h[i], 0));
		}
		TIMED(row(t, r)[0], cuMemSetAccess(va, size, &g.access, 1));
		TIMED(row(t, r)[1], cuMemUnmap(va, size));
		for (int i = 0; i < MANY; i++)
			CK(cuMemRelease(h[i]));
		CK(cuMemAddressFree(va, size));
	}
	return t;
}

// ---- waits: does a VMM call wait for unrelated running work? -------------

struct other {
	pthread_t thread;
	volatile int go;
	double launch_ns; // its launch's host time
};

// Another thread launches an empty kernel on the second stream about 1 ms
// after the probed call started.
static void *other_thread(void *arg)
{
	struct other *o = (struct other *)arg;
	int x = 0;
	void *args[] = {&x};
	CK(cuCtxSetCurrent(g.ctx));
	while (!__atomic_load_n(&o->go, __ATOMIC_ACQUIRE))
		;
	struct timespec ms = {0, 1000000};
	nanosleep(&ms, NULL);
	TIMED(o->launch_ns, cuLaunchKernel(g.empty, 1, 1, 1, 1, 1, 1, 0, g.s2, args, NULL));
	return NULL;
}

struct probe {
	double took, left; // the call's host time; the kernel's time left when it started
	double other;      // the other thread's launch (with_thread), else -1
};

// probe UNMAP WITH_THREAD: a SPIN_NS kernel on the first stream, then
// cuMemUnmap (or cuMemSetAccess) of a mapping it never touches.
static struct probe probe(int unmap, int with_thread)
{
	struct probe p = {0, 0, -1};
	struct other o;
	memset(&o, 0, sizeof(o));
	CUdeviceptr va;
	CUmemGenericAllocationHandle h;
	unsigned long long spin = SPIN_NS;
	void *args[] = {&spin};
	CK(cuMemAddressReserve(&va, g.gran, 0, 0, 0));
	CK(cuMemCreate(&h, g.gran, &g.prop, 0));
	CK(cuMemMap(va, g.gran, 0, h, 0));
	if (unmap)
		CK(cuMemSetAccess(va, g.gran, &g.access, 1));
	if (with_thread && pthread_create(&o.thread, NULL, other_thread, &o) != 0) {
		fprintf(stderr, "calibrate: pthread_create failed\n");
		exit(1);
	}
	CK(cuCtxSynchronize());
	CK(cuLaunchKernel(g.spin, 1, 1, 1, 1, 1, 1, 0, g.s, args, NULL));
	int64_t launched = now_ns();
	__atomic_store_n(&o.go, 1, __ATOMIC_RELEASE);
	int64_t t0 = now_ns();
	if (unmap)
		CK(cuMemUnmap(va, g.gran));
	else
		CK(cuMemSetAccess(va, g.gran, &g.access, 1));
	p.took = (double)(now_ns() - t0) - g.overhead;
	p.left = (double)SPIN_NS - (double)(t0 - launched);
	if (with_thread) {
		pthread_join(o.thread, NULL);
		p.other = o.launch_ns;
	}
	CK(cuCtxSynchronize());
	if (!unmap)
		CK(cuMemUnmap(va, g.gran));
	CK(cuMemRelease(h));
	CK(cuMemAddressFree(va, g.gran));
	return p;
}

static int cmp_took(const void *a, const void *b)
{
	return cmp_double(&((const struct probe *)a)->took, &((const struct probe *)b)->took);
}

// The median of three probes: does the call wait for the kernel?
static int waits(const char *call, int unmap)
{
	struct probe p[3];
	for (int i = 0; i < 3; i++)
		p[i] = probe(unmap, 0);
	qsort(p, 3, sizeof(p[0]), cmp_took);
	int w = p[1].took >= p[1].left / 2;
	printf("# %s while a %llu ms kernel runs elsewhere: took %lld ns with %lld ns of it "
	       "left (median of 3): %s\n",
	       call, SPIN_NS / 1000000, ns(p[1].took), ns(p[1].left),
	       w ? "waits" : "does not wait");
	return w;
}

// Does a launch from another thread wait while the call waits?
static void blocks_other(const char *call, int unmap, double launch_p50)
{
	struct probe p = probe(unmap, 1);
	const char *verdict = p.other > 10 * launch_p50 && p.other > 100000 ? "blocked"
	                      : p.took < p.left / 2 ? "not blocked, but the call did not wait"
	                                            : "not blocked";
	printf("# a launch from another thread while %s took %lld ns: %lld ns (%s)\n", call,
	       ns(p.took), ns(p.other), verdict);
}

// ---- output -----------------------------------------------------------------

static void print_one(const char *name, const char *what, const struct tab *t, int f)
{
	printf("# %s: p50 %lld p99 %lld ns\n", what, ns(stat(t, f, 0.5)), ns(stat(t, f, 0.99)));
	printf("%s=%lld\n", name, ns(stat(t, f, 0.5)));
}

// A call's cost split into per call and per chunk: from 1 chunk and MANY.
static void print_chunked(const char *name, const char *what, const struct tab *one,
                          const struct tab *many, int f)
{
	double t1 = stat(one, f, 0.5), tn = stat(many, f, 0.5);
	double chunk = (tn - t1) / (MANY - 1);
	if (chunk < 0)
		chunk = 0;
	double call = t1 - chunk;
	printf("# %s: 1 chunk p50 %lld p99 %lld ns; %d chunks p50 %lld p99 %lld ns\n", what, ns(t1),
	       ns(stat(one, f, 0.99)), MANY, ns(tn), ns(stat(many, f, 0.99)));
	printf("%s_NS=%lld\n%s_CHUNK_NS=%lld\n", name, ns(call), name, ns(chunk));
}

static void print_host(const struct tab *h)
{
	print_one("SIMCUDA_LAUNCH_NS", "cuLaunchKernel, empty kernel", h, H_LAUNCH);
	print_one("SIMCUDA_COPY_ISSUE_NS", "cuMemcpyHtoDAsync, 8 bytes from pinned memory", h,
	          H_COPY);
	printf("# cuEventQuery: p50 %lld ns; cuStreamQuery: p50 %lld ns\n",
	       ns(stat(h, H_QUERY, 0.5)), ns(stat(h, H_SQUERY, 0.5)));
	print_one("SIMCUDA_EVENT_NS", "cuEventRecord", h, H_RECORD);
	print_one("SIMCUDA_SYNC_NS", "cuStreamSynchronize, idle stream", h, H_SYNC);
	print_one("SIMCUDA_STREAM_WAIT_NS", "cuStreamWaitEvent", h, H_WAIT);
	printf("# cuMemFree: p50 %lld ns\n", ns(stat(h, H_FREE, 0.5)));
	print_one("SIMCUDA_MALLOC_NS", "cuMemAlloc, 1 MiB", h, H_ALLOC);
	printf("# cuMemFreeAsync: p50 %lld ns\n", ns(stat(h, H_AFREE, 0.5)));
	print_one("SIMCUDA_MALLOC_ASYNC_NS", "cuMemAllocAsync, 1 MiB", h, H_AALLOC);
}

static void print_vmm(const struct tab *a, const struct tab *b, const struct tab *m)
{
	print_chunked("SIMCUDA_VMM_CREATE", "cuMemCreate", a, b, V_CREATE);
	print_chunked("SIMCUDA_VMM_MAP", "cuMemMap", a, b, V_MAP);
	print_chunked("SIMCUDA_VMM_SET_ACCESS", "cuMemSetAccess", a, b, V_ACCESS);
	printf("# cuMemSetAccess over %d separately mapped handles, one call: p50 %lld p99 %lld "
	       "ns\n",
	       MANY, ns(stat(m, 0, 0.5)), ns(stat(m, 0, 0.99)));
	print_chunked("SIMCUDA_VMM_UNMAP", "cuMemUnmap", a, b, V_UNMAP);
	printf("# cuMemUnmap over %d separately mapped handles, one call: p50 %lld p99 %lld ns\n",
	       MANY, ns(stat(m, 1, 0.5)), ns(stat(m, 1, 0.99)));
	print_chunked("SIMCUDA_VMM_RELEASE", "cuMemRelease", a, b, V_RELEASE);
	printf("# cuMemAddressFree: 1 chunk p50 %lld ns; %d chunks p50 %lld ns\n",
	       ns(stat(a, V_AFREE, 0.5)), MANY, ns(stat(b, V_AFREE, 0.5)));
	print_chunked("SIMCUDA_VMM_RESERVE", "cuMemAddressReserve", a, b, V_RESERVE);
}

// ---- setup ------------------------------------------------------------------

static void usage_exit(void)
{
	fprintf(stderr, "usage: calibrate --module FILE [--simulate] [--reps N]\n");
	exit(2);
}

// The simulated libcuda.so.1 alone exports simcudaGetStats.
static void pick_clock(int simulate)
{
	void *f = dlsym(RTLD_DEFAULT, "simcudaGetStats");
	if (simulate && !f) {
		fprintf(stderr, "calibrate: --simulate: libcuda.so.1 has no simcudaGetStats: not "
		                "the simulated device (run it with sim/bin/simrun)\n");
		exit(2);
	}
	if (!simulate && f) {
		fprintf(stderr, "calibrate: libcuda.so.1 is the simulated device: pass --simulate, "
		                "or take the simulator off LD_LIBRARY_PATH\n");
		exit(2);
	}
	g.sim_stats = (int (*)(struct simcuda_stats *))f;
}

static void setup(const char *module)
{
	CUmodule mod;
	CK(cuInit(0));
	CK(cuDeviceGet(&g.dev, 0));
	CK(cuDevicePrimaryCtxRetain(&g.ctx, g.dev));
	CK(cuCtxSetCurrent(g.ctx));
	CK(cuStreamCreate(&g.s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&g.s2, CU_STREAM_NON_BLOCKING));
	CK(cuModuleLoad(&mod, module));
	CK(cuModuleGetFunction(&g.empty, mod, "calib_empty"));
	CK(cuModuleGetFunction(&g.spin, mod, "calib_spin"));
	g.prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	g.prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	g.prop.location.id = g.dev;
	g.access.location = g.prop.location;
	g.access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemGetAllocationGranularity(&g.gran, &g.prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	// Both kernels once (a GPU loads a function at its first launch).
	unsigned long long spin = 1000;
	int x = 0;
	void *sargs[] = {&spin}, *eargs[] = {&x};
	CK(cuLaunchKernel(g.spin, 1, 1, 1, 1, 1, 1, 0, g.s, sargs, NULL));
	CK(cuLaunchKernel(g.empty, 1, 1, 1, 1, 1, 1, 0, g.s, eargs, NULL));
	CK(cuCtxSynchronize());
	// The clock's own cost: the median of back-to-back readings.
	double d[64];
	for (int i = 0; i < 64; i++) {
		int64_t t0 = now_ns();
		d[i] = (double)(now_ns() - t0);
	}
	qsort(d, 64, sizeof(double), cmp_double);
	g.overhead = d[32];
}

int main(int argc, char **argv)
{
	const char *module = NULL;
	int simulate = 0;
	g.reps = 100;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--module") && i + 1 < argc)
			module = argv[++i];
		else if (!strcmp(argv[i], "--simulate"))
			simulate = 1;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			g.reps = atoi(argv[++i]);
		else
			usage_exit();
	}
	if (!module || g.reps < 1 || g.reps > 4000)
		usage_exit();
	g.warm = simulate ? 0 : 2;
	pick_clock(simulate);
	setup(module);

	char name[256] = "?";
	CK(cuDeviceGetName(name, sizeof(name), g.dev));
	printf("# calibrate: %s, allocation granularity (chunk) %zu bytes, median of %d "
	       "repetitions, %s\n",
	       name, g.gran, g.reps,
	       g.sim_stats ? "the simulated host clock" : "CLOCK_MONOTONIC on one host thread");
	struct tab *h = host_calls();
	print_host(h);
	struct tab *one = vmm(1), *many = vmm(MANY), *m = vmm_many();
	print_vmm(one, many, m);
	int w = waits("cuMemUnmap", 1);
	w |= waits("cuMemSetAccess", 0);
	blocks_other("cuMemUnmap", 1, stat(h, H_LAUNCH, 0.5));
	blocks_other("cuMemSetAccess", 0, stat(h, H_LAUNCH, 0.5));
	printf("SIMCUDA_VMM_SYNC=%s\n", w ? "device" : "none");
	free(h);
	free(one);
	free(many);
	free(m);
	CK(cuCtxSynchronize());
	return 0;
}
