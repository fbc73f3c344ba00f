#!/bin/sh
# simcc's test kernels are real CUDA: nvcc built each file for sm_90, and
# every kernel the simcc module registers is a function of that cubin under
# the same name (extern "C" plain, C++ mangled, a static kernel local).
# Listed only when nvcc exists.
set -eu
BUILD=${BUILD:-build}
fail() {
	echo "FAIL: $*"
	exit 1
}
for src in sim/tests/simcc/*.cu; do
	name=$(basename "$src" .cu)
	module=$BUILD/simcc/$name.so cubin=$BUILD/simcc/sm_90/$name.cubin
	[ -s "$module" ] && [ -s "$cubin" ] || fail "$module or $cubin is not built"
	funcs=$(readelf -sW "$cubin" | awk '$4 == "FUNC" { print $NF }')
	names=$(python3 sim/tests/simcc/module_names.py "$module")
	[ -n "$names" ] || fail "$module registers no kernel"
	for k in $names; do
		echo "$funcs" | grep -qx "$k" || fail "$cubin has no function $k (registered by $module)"
	done
	echo "$name: $(echo "$names" | wc -l) kernels, names as nvcc's"
done
