#!/bin/sh
# simcc reports bad input clearly: a compiler error points at the .cu file
# and line; a kernel without extern "C" and a missing file are refused.
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
if tools/simcc "$tmp/bad.cu" -o "$tmp/bad.so" 2>"$tmp/err"; then
	fail "simcc accepted a source with an undeclared identifier"
fi
grep -q "bad.cu:7:[0-9]*: error: .undeclared_thing" "$tmp/err" ||
	fail "error not reported at bad.cu:7: $(cat "$tmp/err")"
[ ! -e "$tmp/bad.so" ] || fail "a module was written despite the error"

cat >"$tmp/mangled.cu" <<'CU'
__global__ void not_extern_c(float *a)
{
	a[0] = 1.0f;
}
CU
if tools/simcc "$tmp/mangled.cu" -o "$tmp/m.so" 2>"$tmp/err"; then
	fail "simcc accepted a kernel without extern \"C\""
fi
grep -q "kernel 'not_extern_c' must be declared extern \"C\"" "$tmp/err" ||
	fail "unexpected message: $(cat "$tmp/err")"

if tools/simcc "$tmp/nonexistent.cu" -o "$tmp/n.so" 2>"$tmp/err"; then
	fail "simcc accepted a missing file"
fi
grep -q "simcc: cannot read" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"

# From another directory, with a relative output path.
mkdir "$tmp/sub"
cat >"$tmp/sub/fine.cu" <<'CU'
extern "C" __global__ void fine(int *a) { a[threadIdx.x] = 1; }
CU
root=$(pwd)
(cd "$tmp/sub" && "$root/tools/simcc" fine.cu -o out/fine.so) || fail "simcc failed from another cwd"
nm -D --defined-only "$tmp/sub/out/fine.so" | grep -q " simcuda_module$" || fail "no simcuda_module"
echo "simcc errors: ok"
