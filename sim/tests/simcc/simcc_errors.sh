#!/bin/sh
# simcc reports bad input clearly: a compiler error points at the .cu file
# and line; a template kernel and a missing file are refused.  A file with
# host code (<<<>>> launches, main) beside its kernels builds, and a C++
# kernel is registered under its mangled name.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

cat >"$tmp/bad.cu" <<'CU'
extern "C" __global__ void ok(float *a)
{
	a[0] = 1.0f;
}
extern "C" __global__ void broken(float *a)
{
	a[0] = undeclared_thing;
}
CU
if sim/bin/simcc "$tmp/bad.cu" -o "$tmp/bad.so" 2>"$tmp/err"; then
	fail "simcc accepted a source with an undeclared identifier"
fi
grep -q "bad.cu:7:[0-9]*: error: .undeclared_thing" "$tmp/err" ||
	fail "error not reported at bad.cu:7: $(cat "$tmp/err")"
[ ! -e "$tmp/bad.so" ] || fail "a module was written despite the error"

cat >"$tmp/tmpl.cu" <<'CU'
template <int N> __global__ void unrolled(float *a)
{
	a[0] = N;
}
CU
if sim/bin/simcc "$tmp/tmpl.cu" -o "$tmp/t.so" 2>"$tmp/err"; then
	fail "simcc accepted a template kernel"
fi
grep -q "tmpl.cu:2: template kernel 'unrolled' is not supported" "$tmp/err" ||
	fail "unexpected message: $(cat "$tmp/err")"

# Host code in the same file: launches, the runtime API, main.
cat >"$tmp/whole.cu" <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void fill(float *a, float v)
{
	a[threadIdx.x] = v;
}
static void launch(float *a, cudaStream_t s)
{
	dim3 grid(1), block(32);
	fill<<<grid, block, 0, s>>>(a, 2.0f);
}
int main()
{
	float *a;
	cudaMalloc(&a, 32 * sizeof(float));
	launch(a, 0);
	std::printf("%d\n", (int)cudaDeviceSynchronize());
	return 0;
}
CU
sim/bin/simcc -Werror "$tmp/whole.cu" -o "$tmp/whole.so" 2>"$tmp/err" || fail "host code: $(cat "$tmp/err")"
strings "$tmp/whole.so" | grep -qx _Z4fillPff || fail "fill is not registered as _Z4fillPff"
nm -D --undefined-only "$tmp/whole.so" | grep -q cudaMalloc && fail "the module imports the host code's cudaMalloc"

if sim/bin/simcc "$tmp/nonexistent.cu" -o "$tmp/n.so" 2>"$tmp/err"; then
	fail "simcc accepted a missing file"
fi
grep -q "simcc: cannot read" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"

# From another directory, with a relative output path.
mkdir "$tmp/sub"
cat >"$tmp/sub/fine.cu" <<'CU'
extern "C" __global__ void fine(int *a) { a[threadIdx.x] = 1; }
CU
root=$(pwd)
(cd "$tmp/sub" && "$root/sim/bin/simcc" fine.cu -o out/fine.so) || fail "simcc failed from another cwd"
nm -D --defined-only "$tmp/sub/out/fine.so" | grep -q " simcuda_module$" || fail "no simcuda_module"
echo "simcc errors: ok"
