#!/bin/sh
# abi_exports.sh — the simulated libraries export what the real ones do:
# every name of the committed lists under the real version node (cudart,
# CUPTI, cuBLAS) or unversioned (driver), the real SONAMEs, and nothing
# else but the simulator's documented additions (driver/extra.syms).
set -u
lib=${BUILD:-build}/simcuda
syms=sim/symbols
fail=0

check() { # LIB NODE LIST SONAME EXTRA...
	so=$1 node=$2 list=$3 soname=$4
	shift 4
	if [ ! -r "$so" ]; then
		echo "FAIL: $so not built"
		fail=1
		return
	fi
	sh $syms/check-exports.sh "$so" "$node" "$list" || fail=1
	got=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
	if [ "$got" != "$soname" ]; then
		echo "FAIL: $so has SONAME '$got', want $soname"
		fail=1
	fi
	# Internal helpers stay hidden: no export outside the lists.
	extra=$(nm -D --defined-only --format=posix "$so" | awk '$2 != "A" { sub(/@.*/, "", $1); print $1 }' |
		sort -u | comm -23 - "$(mktemp_list "$list" "$@")")
	if [ -n "$extra" ]; then
		echo "FAIL: $so exports names the real library does not:" $extra
		fail=1
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
mktemp_list() {
	n=$((n + 1))
	cat "$@" | awk '!/^#/ && NF { print $1 }' | sort -u >"$tmp/list$n"
	echo "$tmp/list$n"
}

check "$lib/libcudart.so.13" libcudart.so.13 $syms/libcudart.syms libcudart.so.13
check "$lib/libcupti.so.13" libcupti.so.13 $syms/libcupti.syms libcupti.so.13
check "$lib/libcublas.so.13" libcublas.so.13 $syms/libcublas.syms libcublas.so.13
driver_extra=sim/driver/extra.syms
[ -r $driver_extra ] || driver_extra=/dev/null
check "$lib/libcuda.so.1" - $syms/libcuda.syms libcuda.so.1 $driver_extra
[ $fail -eq 0 ] && echo "abi_exports: ok"
exit $fail
