#!/bin/sh
# The trainers are linked like real CUDA programs (NEEDED libcublas.so.13,
# libcudart.so.13, libnccl.so.2 and, through the driver stub, libcuda.so.1); every kernel
# module exports only simcuda_module; bad flags give one clear message.
# The VMM functions of --alloc vmm are not linked by name: the trainers ask
# the runtime for them (cudaGetDriverEntryPointByVersion), as PyTorch does.
. tests/e2e/trainer_lib.sh
for t in mlp gpt; do
	needed=$(readelf -d "$TR/$t" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	echo "$needed" | grep -qx libcuda.so.1 || fail "$t: no NEEDED libcuda.so.1"
	echo "$needed" | grep -qx libcudart.so.13 || fail "$t: no NEEDED libcudart.so.13"
	echo "$needed" | grep -qx libcublas.so.13 || fail "$t: no NEEDED libcublas.so.13"
	undef=$(nm -D --undefined-only "$TR/$t" | awk '{ print $2 }')
	echo "$undef" | grep -q '^cudaGetDriverEntryPointByVersion@' ||
		fail "$t: does not ask the runtime for driver entry points"
	! echo "$undef" | grep -q '^cuMem\(Create\|Map\|AddressReserve\|SetAccess\)' ||
		fail "$t: links VMM functions by name: $(echo "$undef" | grep '^cuMem')"
	echo "$needed" | grep -qx libnccl.so.2 || fail "$t: no NEEDED libnccl.so.2"
done
for m in "$BUILD"/kernels/*.so; do
	[ "$(nm -D --defined-only "$m" | awk '{ print $3 }')" = simcuda_module ] ||
		fail "$m exports more than simcuda_module"
done
set +e
"$SIMRUN" "$TR/mlp" --batch x >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "^mlp: invalid value 'x' for --batch" "$tmp/err" || fail "bad --batch: $rc $(cat "$tmp/err")"
set +e
"$SIMRUN" "$TR/gpt" --kernels "$tmp/none" >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "^gpt: no kernel module $tmp/none/elementwise.so" "$tmp/err" || fail "bad --kernels: $rc $(cat "$tmp/err")"
"$SIMRUN" "$TR/gpt" --help | grep -q -- "--bwd-thread" || fail "gpt --help"
echo "trainer binaries: ok"
