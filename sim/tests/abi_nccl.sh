#!/bin/sh
# abi_nccl.sh — the simulated libnccl.so.2 against the real one: every name
# the real library exports, unversioned, with the same binding (the nccl*
# names weak, the pnccl* ones global); no link to libcuda and no driver
# imports (it reaches the driver through dlopen, as NCCL does); and
# nccl_test.c built with the system compiler against the REAL
# libnccl.so.2 of the toolkit runs its checks on the simulated one.
set -eu
cuda=${CUDA_HOME:-/usr/local/cuda}
sim=${BUILD:-build}/simcuda
lib=$sim/libnccl.so.2
out=$sim/tests/abi_nccl_program
list=sim/symbols/libnccl.syms
fail() {
	echo "abi_nccl: $*"
	exit 1
}
[ -r "$lib" ] || fail "$lib is not built (run make all)"
sh sim/symbols/check-exports.sh "$lib" - "$list"
readelf --dyn-syms -W "$lib" | awk '
	FILENAME == ARGV[1] { if (!/^#/ && NF >= 2) want[$1] = ($2 == "W") ? "WEAK" : "GLOBAL"; next }
	$7 != "UND" && ($8 in want) { n++; if ($5 != want[$8]) { print "binding of " $8 ": " $5 ", want " want[$8]; bad++ } }
	END { if (bad || n < 100) { print "abi_nccl: " bad+0 " of " n+0 " bindings wrong"; exit 1 } }
' "$list" - || exit 1
readelf -d "$lib" | grep -q 'NEEDED.*libcuda\.so' && fail "libnccl.so.2 links libcuda"
nm -D --undefined-only "$lib" | grep -q ' cu[A-Z]' && fail "libnccl.so.2 imports driver symbols"

real=""
for d in "$cuda/lib64" "$cuda/lib"; do
	[ -e "$d/libnccl.so" ] && real=$d
done
[ -n "$real" ] || fail "the real libnccl.so is not under $cuda/lib64 or $cuda/lib"
mkdir -p "$(dirname "$out")"
${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -I"$cuda/include" \
	sim/tests/nccl_test.c -o "$out" -L"$real" -L"$cuda/lib64" \
	-Wl,--no-as-needed -lnccl -lcudart -lcmocka
LD_LIBRARY_PATH=$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$out"
echo "abi_nccl: ok"
