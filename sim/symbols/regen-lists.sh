#!/bin/sh
# regen-lists.sh [--check] [CUDA_HOME] — rewrites the committed lists of
# names the real NVIDIA libraries export (libcudart.syms, libcupti.syms,
# libcuda.syms, libcublas.syms, libnccl.syms) from the installed toolkit.
# Run by hand when the toolkit changes.  --check writes nothing: it lists
# the names again into a scratch directory and fails, naming each list
# that differs, when a committed one is stale; the build runs it
# (sim/sim.mk) before it makes a library from the lists.
#
# Each list line is "NAME TYPE" (nm's type letter: T for code), followed by
# the size in bytes for data symbols (D, B, R, V), which gen-stubs.sh needs
# to reserve storage.  Version-node definitions (type A) are left out: the
# version scripts recreate them.
set -eu
check=0
if [ "${1:-}" = "--check" ]; then
	check=1
	shift
fi
cuda=${1:-${CUDA_HOME:-/usr/local/cuda}}
here=$(cd "$(dirname "$0")" && pwd)
out=$here
if [ $check = 1 ]; then
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi

find_lib() {
	for p in "$@"; do
		if [ -e "$cuda/$p" ]; then
			echo "$cuda/$p"
			return 0
		fi
	done
	echo "regen-lists.sh: none of $* found under $cuda" >&2
	return 1
}

# nm prints versioned names as NAME@@NODE; the node is recorded separately
# in the version scripts, so only the bare name is kept.  With a third
# argument "weak", weak definitions keep their type W (libnccl's nccl*
# names are weak aliases of its pnccl* ones, for profilers to interpose).
write_list() {
	lib=$1 list=$out/$2 weak=${3:-}
	[ -n "$lib" ] || exit 1 # find_lib said why
	tmp="$list.tmp"
	{
		echo "# Exported by $(basename "$lib") of CUDA $(basename "$(readlink -f "$cuda")")."
		echo "# Regenerate with sim/symbols/regen-lists.sh; do not edit."
		nm -D --defined-only -S --format=posix "$lib" | awk -v weak="$weak" '
			# mawk has no strtonum: nm prints sizes in hex.
			function hex(s,  i, n) {
				n = 0
				for (i = 1; i <= length(s); i++)
					n = n * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
				return n
			}
			{ name = $1; sub(/@.*/, "", name); type = $2 }
			type == "A" { next }
			weak != "" && type ~ /^[Ww]$/ { print name, "W"; next }
			type ~ /^[TtWwi]$/ { print name, "T"; next }
			{ size = ($4 == "") ? "8" : hex($4); print name, type, size }
		' | LC_ALL=C sort -u
	} >"$tmp"
	mv "$tmp" "$list"
	[ $check = 1 ] || echo "$list: $(grep -vc '^#' "$list") names"
}

write_list "$(find_lib lib64/libcudart.so.13 lib/libcudart.so.13)" libcudart.syms
write_list "$(find_lib lib64/libcupti.so.13 lib/libcupti.so.13 extras/CUPTI/lib64/libcupti.so.13)" libcupti.syms
write_list "$(find_lib lib64/stubs/libcuda.so lib/stubs/libcuda.so)" libcuda.syms
write_list "$(find_lib lib64/libcublas.so.13 lib/libcublas.so.13)" libcublas.syms
write_list "$(find_lib lib/libnccl.so.2 lib64/libnccl.so.2)" libnccl.syms weak
[ $check = 1 ] || exit 0

# The names and types, not the header line (it names the toolkit's folder).
stale=""
for f in "$out"/*.syms; do
	grep -v '^#' "$here/${f##*/}" >"$out/committed" || true
	grep -v '^#' "$f" | cmp -s - "$out/committed" || stale="$stale ${f##*/}"
done
[ -z "$stale" ] && exit 0
echo "sim/symbols:$stale: stale, not what $cuda's libraries export; run sh sim/symbols/regen-lists.sh $cuda and commit the lists" >&2
exit 1
