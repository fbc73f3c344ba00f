#!/bin/sh
# A plain driver-API program: per-thread entry points from cuGetProcAddress
# (the _ptsz variants must come back as our twins and still work), a
# CUkernel from cuLibraryGetKernel launched through cuLaunchKernel, a launch
# with its parameters in an `extra` buffer, a cooperative launch, generic
# and sized copies, 32-bit memsets.  Same output with and without libremat; the trace shows
# each path and the right write sets.
. tests/e2e/trace_lib.sh
cat >"$tmp/k.cu" <<'CU'
extern "C" __global__ void scale(float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}
extern "C" __global__ void copyk(const float *src, float *dst, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		dst[i] = src[i] + 1.0f;
}
CU
sim/bin/simcc --simcuda-dir "$BUILD/simcuda" "$tmp/k.cu" -o "$tmp/k.so" || fail "simcc"
cat >"$tmp/probe.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <cuda.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("%s: %d\n", #x, (int)r_); return 2; } } while (0)
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*set32_fn)(CUdeviceptr, unsigned, size_t, CUstream);
typedef CUresult (*alloca_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*freea_fn)(CUdeviceptr, CUstream);
int main(int argc, char **argv)
{
	(void)argc;
	CUdevice dev; CUcontext ctx; CUmodule mod; CUlibrary lib; CUfunction scale; CUkernel copyk;
	CUstream s;
	CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoad(&mod, argv[1])); CK(cuModuleGetFunction(&scale, mod, "scale"));
	CK(cuLibraryLoadFromFile(&lib, argv[1], NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&copyk, lib, "copyk"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	void *lk, *set, *al, *fr;
	CUdriverProcAddressQueryResult q;
	cuuint64_t pt = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	CK(cuGetProcAddress("cuLaunchKernel", &lk, 13000, pt, &q));
	CK(cuGetProcAddress("cuMemsetD32Async", &set, 13000, pt, &q));
	CK(cuGetProcAddress("cuMemAllocAsync", &al, 13000, pt, &q));
	CK(cuGetProcAddress("cuMemFreeAsync", &fr, 13000, pt, &q));
	int n = 50000;
	float host[2];
	for (int it = 0; it < 8; it++) {
		CUdeviceptr a, b;
		CK(((alloca_fn)al)(&a, n * sizeof(float), s));
		CK(((alloca_fn)al)(&b, n * sizeof(float), s));
		CK(((set32_fn)set)(a, 0x3f800000u, n, s)); /* 1.0f */
		float f = 1.5f + it;
		void *args[] = {&a, &n, &f};
		CK(((launch_fn)lk)(scale, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
		float one = 1.0f;
		void *args1[] = {&b, &n, &one};
		CK(cuLaunchCooperativeKernel(scale, 4, 1, 1, 64, 1, 1, 0, s, args1));
		struct { CUdeviceptr src, dst; int n; } pk = {a, b, n};
		size_t sz = 20; /* ends after n, as the CUDA ABI packs it */
		void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &pk, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
				 CU_LAUNCH_PARAM_END};
		CK(cuLaunchKernel((CUfunction)copyk, (n + 255) / 256, 1, 1, 256, 1, 1, 0, s, NULL, extra));
		CK(cuMemcpyAsync(a, b, 8, s));
		CK(cuStreamSynchronize(s));
		CK(cuMemcpyDtoH(host, a, sizeof(host)));
		CK(((freea_fn)fr)(a, s));
		CK(((freea_fn)fr)(b, s));
		printf("iter %d %a %a\n", it, host[0], host[1]);
	}
	CK(cuStreamSynchronize(s));
	return 0;
}
C
cc -I"${CUDA_HOME:-/usr/local/cuda}/include" -o "$tmp/probe" "$tmp/probe.c" \
	-L"${CUDA_HOME:-/usr/local/cuda}/lib64/stubs" -lcuda || fail "cannot compile the probe"
run none -- "$tmp/probe" "$tmp/k.so"
run trace LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/tr -- "$tmp/probe" "$tmp/k.so"
same none trace
grep -q "iter 7 0x1.3p+3 0x1.3p+3" "$tmp/none.out" || fail "probe results: $(tail -n 2 "$tmp/none.out")"
check_trace "$tmp/tr"
python3 - "$tmp/tr/trace.json" <<'PY' || fail "driver-API trace"
import json, sys
t = json.load(open(sys.argv[1]))
ops = t["ops"]
assert t["iteration"]["period"] == 6, t["iteration"]
coop = [o for o in ops if o["via"] == "cuLaunchCooperativeKernel"]
assert len(coop) == 1 and coop[0]["name"] == "scale" and coop[0]["grid"] == [4, 1, 1], coop
by = {o["name"]: o for o in ops if o["via"] != "cuLaunchCooperativeKernel"}
sc, ck, st, cp = by["scale"], by["copyk"], by["memset"], by["memcpyDtoD"]
assert sc["via"] == "cuGetProcAddress:cuLaunchKernel_ptsz", sc["via"]
assert st["via"] == "cuGetProcAddress:cuMemsetD32Async_ptsz", st["via"]
assert ck["via"] == "cuLaunchKernel" and cp["via"] == "cuMemcpyAsync", (ck["via"], cp["via"])
assert by["memcpyDtoH"]["via"] == "cuMemcpyDtoH_v2"
a = [r[0] for r in sc["refs"] if r[2] == 0][0]
assert sc["writes"] == [a] and st["writes"] == [a]
assert t["kernels"][sc["kernel"]]["layout_known"] is True
# copyk: parameters from the extra buffer (20 bytes), both pointers found.
assert ck["params"][1] == 20, ck["params"]
src = [r[0] for r in ck["refs"] if r[2] == 0][0]
dst = [r[0] for r in ck["refs"] if r[2] == 8][0]
assert src == a and ck["writes"] == [dst] and ck["replayable"], ck
assert cp["writes"] == [a] and cp["reads"] == [dst] and cp["replayable"], cp
# Freed after the last op and allocated again before the first: the low
# point lies between those frees and allocations, so the allocations open
# the iteration (alloc_at 0) and the buffers live to its end.
for b in (a, dst):
    buf = t["buffers"][b]
    assert buf["alloc_at"] == 0 and buf["free_at"] == -1 and not buf["persistent"], buf
assert [t["buffers"][b]["alloc_seq"] for b in (a, dst)] == [0, 1]
assert t["cupti"]["mismatch"] == 0
PY
echo "PASS: per-thread cuGetProcAddress entry points, CUkernel launch, extra buffer, copies, sets"
