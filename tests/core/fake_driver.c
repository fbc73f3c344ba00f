/*
 * fake_driver.c — the fake driver (fake_driver.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../core/driver.h"
#include "fake_driver.h"

struct remat_driver remat_drv;
struct fake_driver fake = {.create_limit = 1 << 30};

/* FAKE_LOG=1 in the environment prints the log lines while debugging. */
void remat_log(int level, const char *fmt, ...)
{
	(void)level;
	if (!getenv("FAKE_LOG"))
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "log: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void remat_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fake.last_warn, sizeof(fake.last_warn), fmt, ap);
	va_end(ap);
}

static struct {
	uint64_t va;
	CUmemGenericAllocationHandle h;
	uint8_t *mem; /* what a kernel sees there: garbage until written */
} mapped[8192];
static int ev_done[1 << 16], nev;

static CUresult ctx_get_device(CUdevice *d)
{
	*d = fake.dev;
	return CUDA_SUCCESS;
}
static CUresult dev_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)a;
	(void)d;
	*v = 1;
	return CUDA_SUCCESS;
}
static CUresult granularity(size_t *g, const CUmemAllocationProp *p,
                            CUmemAllocationGranularity_flags f)
{
	(void)p;
	(void)f;
	*g = FAKE_GRAN;
	return CUDA_SUCCESS;
}
static CUresult total_mem(size_t *t, CUdevice d)
{
	(void)d;
	*t = FAKE_TOTAL;
	return CUDA_SUCCESS;
}
static CUresult reserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                        unsigned long long f)
{
	(void)size;
	(void)align;
	(void)addr;
	(void)f;
	*p = 0x100000000000ULL + (uint64_t)fake.dev * 0x10000000000ULL;
	return CUDA_SUCCESS;
}
static CUresult create(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *p,
                       unsigned long long f)
{
	(void)p;
	(void)f;
	assert_int_equal(size, FAKE_GRAN);
	if (fake.created - fake.released >= fake.create_limit)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*h = (CUmemGenericAllocationHandle)++fake.created;
	return CUDA_SUCCESS;
}
static CUresult release(CUmemGenericAllocationHandle h)
{
	(void)h;
	fake.released++;
	return CUDA_SUCCESS;
}
static int find_map(uint64_t va)
{
	for (int i = 0; i < fake.nmapped; i++)
		if (mapped[i].va == va)
			return i;
	return -1;
}
static CUresult map(CUdeviceptr va, size_t size, size_t off, CUmemGenericAllocationHandle h,
                    unsigned long long f)
{
	(void)off;
	(void)f;
	assert_int_equal(size, FAKE_GRAN);
	assert_int_equal(va % FAKE_GRAN, 0);
	assert_int_equal(find_map(va), -1); /* never mapped twice */
	assert_true(fake.nmapped < (int)(sizeof(mapped) / sizeof(mapped[0])));
	mapped[fake.nmapped].va = va;
	mapped[fake.nmapped].h = h;
	mapped[fake.nmapped].mem = malloc(FAKE_GRAN);
	assert_non_null(mapped[fake.nmapped].mem);
	memset(mapped[fake.nmapped].mem, 0xdd, FAKE_GRAN);
	fake.nmapped++;
	return CUDA_SUCCESS;
}
static CUresult unmap(CUdeviceptr va, size_t size)
{
	assert_int_equal(size, FAKE_GRAN);
	int i = find_map(va);
	assert_true(i >= 0);
	free(mapped[i].mem);
	mapped[i] = mapped[--fake.nmapped];
	return CUDA_SUCCESS;
}
static CUresult set_access(CUdeviceptr va, size_t size, const CUmemAccessDesc *d, size_t n)
{
	(void)d;
	(void)n;
	for (uint64_t a = va; a < va + size; a += FAKE_GRAN)
		assert_true(find_map(a) >= 0);
	return CUDA_SUCCESS;
}
static CUresult ctx_sync(void)
{
	fake.syncs++;
	return CUDA_SUCCESS;
}

int fake_is_mapped(uint64_t va)
{
	return find_map(va / FAKE_GRAN * FAKE_GRAN) >= 0;
}

uint8_t *fake_byte(uint64_t va)
{
	int i = find_map(va / FAKE_GRAN * FAKE_GRAN);
	if (i < 0)
		fail_msg("access to unmapped device address 0x%llx", (unsigned long long)va);
	return mapped[i].mem + va % FAKE_GRAN;
}

void fake_read(void *dst, uint64_t src, size_t n)
{
	for (size_t k = 0; k < n; k++)
		((uint8_t *)dst)[k] = *fake_byte(src + k);
}

void fake_write(uint64_t dst, const void *src, size_t n)
{
	for (size_t k = 0; k < n; k++)
		*fake_byte(dst + k) = ((const uint8_t *)src)[k];
}

static CUresult dtoh(void *dst, CUdeviceptr src, size_t n)
{
	fake_read(dst, src, n);
	return CUDA_SUCCESS;
}
static CUresult htod(CUdeviceptr dst, const void *src, size_t n)
{
	fake_write(dst, src, n);
	return CUDA_SUCCESS;
}
static CUresult dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	(void)s;
	for (size_t k = 0; k < n; k++)
		*fake_byte(dst + k) = *fake_byte(src + k);
	return CUDA_SUCCESS;
}
static CUresult set8_async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
	(void)s;
	for (size_t k = 0; k < n; k++)
		*fake_byte(dst + k) = v;
	return CUDA_SUCCESS;
}
static CUresult set32_async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
	(void)s;
	for (size_t k = 0; k < n; k++)
		fake_write(dst + 4 * k, &v, 4);
	return CUDA_SUCCESS;
}
static CUresult ev_create(CUevent *e, unsigned f)
{
	(void)f;
	assert_true(nev + 1 < (int)(sizeof(ev_done) / sizeof(ev_done[0])));
	*e = (CUevent)(uintptr_t)++nev;
	return CUDA_SUCCESS;
}
static CUresult ev_record(CUevent e, CUstream s)
{
	(void)s;
	ev_done[(uintptr_t)e] = fake.events_complete_at_record;
	return CUDA_SUCCESS;
}
static CUresult ev_query(CUevent e)
{
	return ev_done[(uintptr_t)e] ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
static CUresult ev_sync(CUevent e)
{
	ev_done[(uintptr_t)e] = 1;
	fake.host_waits++;
	return CUDA_SUCCESS;
}
static CUresult stream_wait(CUstream s, CUevent e, unsigned f)
{
	(void)s;
	(void)e;
	(void)f;
	fake.waits++;
	return CUDA_SUCCESS;
}
static CUresult stream_sync(CUstream s)
{
	(void)s;
	return CUDA_SUCCESS;
}
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                       void **extra)
{
	(void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s;
	assert_null(extra);
	++fake.launches;
	if (fake.fail_launch_at && (fake.launches == fake.fail_launch_at ||
	                            (fake.sticky && fake.launches > fake.fail_launch_at)))
		return CUDA_ERROR_LAUNCH_FAILED;
	((const struct fake_kernel *)f)->run(params);
	return CUDA_SUCCESS;
}

void fake_complete_all_events(void)
{
	for (int i = 0; i <= nev; i++)
		ev_done[i] = 1;
}

void fake_install(void)
{
	remat_drv.cuCtxGetDevice = ctx_get_device;
	remat_drv.cuDeviceGetAttribute = dev_attr;
	remat_drv.cuMemGetAllocationGranularity = granularity;
	remat_drv.cuDeviceTotalMem = total_mem;
	remat_drv.cuMemAddressReserve = reserve;
	remat_drv.cuMemCreate = create;
	remat_drv.cuMemRelease = release;
	remat_drv.cuMemMap = map;
	remat_drv.cuMemUnmap = unmap;
	remat_drv.cuMemSetAccess = set_access;
	remat_drv.cuEventCreate = ev_create;
	remat_drv.cuEventRecord = ev_record;
	remat_drv.cuEventQuery = ev_query;
	remat_drv.cuEventSynchronize = ev_sync;
	remat_drv.cuStreamWaitEvent = stream_wait;
	remat_drv.cuStreamSynchronize = stream_sync;
	remat_drv.cuCtxSynchronize = ctx_sync;
	remat_drv.cuMemcpyDtoH = dtoh;
	remat_drv.cuMemcpyHtoD = htod;
	remat_drv.cuMemcpyDtoDAsync = dtod_async;
	remat_drv.cuMemsetD8Async = set8_async;
	remat_drv.cuMemsetD32Async = set32_async;
	remat_drv.cuLaunchKernel = launch;
}
