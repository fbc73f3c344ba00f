#!/bin/sh
# The program's own VMM calls under libremat (alloc/program.c), through
# both doors (linked by name, and from cuGetProcAddress as PyTorch gets
# them): a plain handle libremat backs, an exportable one it leaves to the
# driver, a handle mapped at two places (an alias: both show the same
# bytes), cuMemRetainAllocationHandle and
# cuMemGetAllocationPropertiesFromHandle, the reference counts (memory
# stays mapped after the release until the unmap), and the driver's
# refusals (unmapping part of a mapping, freeing a range that still has a
# mapping, a second release, a map over a mapping).  Same output with and
# without libremat; libremat's log shows which handles it took.
. tests/e2e/trace_lib.sh
cat >"$tmp/vmm.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <cuda.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("%s: %d\n", #x, (int)r_); return 2; } } while (0)
#define SAY(x) printf("%s -> %d\n", #x, (int)(x))
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			      unsigned long long);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			   unsigned long long);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
static void *proc(const char *name)
{
	void *f = NULL;
	CUdriverProcAddressQueryResult q;
	if (cuGetProcAddress(name, &f, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &q) || !f)
		printf("no %s\n", name);
	return f;
}
int main(void)
{
	CUdevice dev; CUcontext ctx;
	CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	create_fn create = (create_fn)proc("cuMemCreate");
	map_fn map = (map_fn)proc("cuMemMap");
	access_fn access = (access_fn)proc("cuMemSetAccess");
	CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
				    .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
	size_t g;
	CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CUdeviceptr r;
	CK(cuMemAddressReserve(&r, 16 * g, 0, 0, 0));
	CUmemGenericAllocationHandle a, b, c, got;
	CK(create(&a, 2 * g, &prop, 0));
	CUmemAllocationProp xprop = prop;
	xprop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	CK(cuMemCreate(&b, g, &xprop, 0));
	CK(cuMemCreate(&c, g, &prop, 0));
	CK(map(r, 2 * g, 0, a, 0));
	CK(cuMemMap(r + 2 * g, g, 0, b, 0));
	CK(map(r + 4 * g, g, 0, c, 0));
	CUmemAccessDesc rw = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	CK(access(r, 3 * g, &rw, 1));
	CK(cuMemSetAccess(r + 4 * g, g, &rw, 1));
	SAY(cuMemMap(r + g, g, 0, c, 0));
	SAY(cuMemUnmap(r, g));
	SAY(cuMemAddressFree(r, 16 * g));
	CK(cuMemsetD8(r, 0x11, 2 * g));
	CK(cuMemsetD8(r + 2 * g, 0x22, g));
	CK(cuMemsetD8(r + 4 * g, 0x33, g));
	/* An alias of c: the same bytes at two addresses. */
	CK(cuMemMap(r + 6 * g, g, 0, c, 0));
	CK(cuMemSetAccess(r + 6 * g, g, &rw, 1));
	unsigned char v[4] = {0};
	CK(cuMemcpyDtoH(&v[0], r + 6 * g + 5, 1));
	CK(cuMemsetD8(r + 6 * g + 7, 0x44, 1));
	CK(cuMemcpyDtoH(&v[1], r + 4 * g + 7, 1));
	CK(cuMemcpyDtoH(&v[2], r + g + 3, 1));
	CK(cuMemcpyDtoH(&v[3], r + 2 * g + 9, 1));
	printf("bytes %02x %02x %02x %02x\n", v[0], v[1], v[2], v[3]);
	CK(cuMemRetainAllocationHandle(&got, (void *)(uintptr_t)(r + g + 100)));
	printf("retained the handle mapped there: %d\n", got == a);
	CUmemAllocationProp back;
	CK(cuMemGetAllocationPropertiesFromHandle(&back, a));
	printf("a: type %d location %d/%d handle types %d\n", (int)back.type,
	       (int)back.location.type, back.location.id, (int)back.requestedHandleTypes);
	CK(cuMemGetAllocationPropertiesFromHandle(&back, b));
	printf("b: type %d location %d/%d handle types %d\n", (int)back.type,
	       (int)back.location.type, back.location.id, (int)back.requestedHandleTypes);
	/* Released twice (create, retain), still mapped: the bytes stay. */
	CK(cuMemRelease(a));
	CK(cuMemRelease(a));
	SAY(cuMemRelease(a));
	CK(cuMemcpyDtoH(&v[0], r + g, 1));
	printf("after release %02x\n", v[0]);
	CK(cuMemUnmap(r, 2 * g));
	CK(cuMemUnmap(r + 2 * g, g));
	CK(cuMemRelease(b));
	CK(cuMemUnmap(r + 4 * g, g));
	CK(cuMemRelease(c));
	CK(cuMemcpyDtoH(&v[0], r + 6 * g + 7, 1));
	printf("alias after one unmap and the release %02x\n", v[0]);
	CK(cuMemUnmap(r + 6 * g, g));
	CK(cuMemAddressFree(r, 16 * g));
	printf("done\n");
	return 0;
}
C
cc -std=c11 -Wall -Werror -I"${CUDA_HOME:-/usr/local/cuda}/include" "$tmp/vmm.c" -o "$tmp/vmm" \
	-L"${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" -lcuda || fail "cannot build the probe"
run plain -- "$tmp/vmm"
grep -q "^done" "$tmp/plain.out" || fail "the probe failed on its own: $(cat "$tmp/plain.out")"
grep -q "^bytes 33 44 11 22" "$tmp/plain.out" || fail "unexpected bytes: $(cat "$tmp/plain.out")"
run remat LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR="$tmp/t.d" REMAT_LOG=2 -- "$tmp/vmm"
same plain remat
n=$(grep -c "the program's cuMemCreate of [0-9]* bytes: [0-9]* chunks of libremat's" "$tmp/remat.err" || true)
[ "$n" = 2 ] || fail "libremat took $n handles, not 2 (a, c): $(grep libremat "$tmp/remat.err" | tail -n 4)"
grep -q "the program's cuMemCreate of [0-9]* bytes passes through" "$tmp/remat.err" ||
	fail "the exportable handle did not pass through"
echo "trace_vmm_calls: ok"
