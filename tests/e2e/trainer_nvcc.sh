#!/bin/sh
# The kernel sources are real CUDA: nvcc compiled each of them for sm_90, and
# every kernel the simulated module registers is a global function of the
# cubin under the same (extern "C") name.  Listed only when nvcc exists.
. tests/e2e/trainer_lib.sh
for m in "$BUILD"/kernels/*.so; do
	name=$(basename "$m" .so)
	cubin=$BUILD/kernels/sm_90/$name.cubin
	[ -s "$cubin" ] || fail "no $cubin"
	readelf -h "$cubin" | grep -q 'Machine:.*NVIDIA CUDA' || fail "$cubin is not a CUDA ELF"
	syms=$(readelf -sW "$cubin" | awk '$4 == "FUNC" && $5 == "GLOBAL" { print $NF }')
	for k in $(python3 sim/tests/simcc/module_names.py "$m"); do
		echo "$syms" | grep -qx "$k" || fail "$cubin has no global function $k"
	done
done
# The simulated driver refuses a cubin as a real one refuses our .so, and
# the trainers say so.
set +e
"$SIMRUN" "$TR/mlp" --kernel-format cubin >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "^mlp: the driver refused kernel module .*/sm_90/elementwise.cubin" "$tmp/err" ||
	fail "--kernel-format cubin on the simulator: exit $rc: $(cat "$tmp/err")"
echo "trainer kernels built by nvcc: ok"
