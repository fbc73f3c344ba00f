#!/bin/sh
# runtime_nvcc_host.sh — a program whose host code nvcc compiles (<<<>>>
# launches, C++ kernel names: mangled, static, in an unnamed and a named
# namespace) built by sim/bin/simnvcc from two .cu files, one compiled
# separately with -c, runs its kernels on the simulated device; the
# objects carry one simcc module per file.  Listed only when nvcc exists.
set -eu
sim=${BUILD:-build}/simcuda
dir=$sim/tests/nvcc_host
fail() {
	echo "runtime_nvcc_host: $*"
	exit 1
}
for f in "$sim/libcudart.so.13" "$sim/libcuda.so.1" "$sim/libsimcuda_kernel.so"; do
	[ -r "$f" ] || fail "$f is not built (run make all)"
done
mkdir -p "$dir"
sim/bin/simnvcc -c sim/tests/runtime_nvcc_host_lib.cu -o "$dir/lib.o"
sim/bin/simnvcc -O2 sim/tests/runtime_nvcc_host.cu "$dir/lib.o" -o "$dir/program"
[ "$(readelf -nW "$dir/lib.o" | grep -c '^ *simcuda ')" = 1 ] || fail "lib.o carries no simcc module"
[ "$(readelf -nW "$dir/program" | grep -c '^ *simcuda ')" = 2 ] || fail "the program does not carry two modules"
# Linked like any CUDA program: the shared runtime, which simrun swaps.
readelf -d "$dir/program" | grep -q 'NEEDED.*libcudart\.so\.13' || fail "no NEEDED libcudart.so.13"
SIMCUDA_DIR=$sim sim/bin/simrun "$dir/program"
