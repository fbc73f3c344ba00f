#!/bin/sh
# regen-lists.sh [CUDA_HOME] — rewrites the committed lists of names the
# real NVIDIA libraries export (libcudart.syms, libcupti.syms, libcuda.syms,
# libcublas.syms, libnccl.syms) from the installed toolkit.  Run by hand when the toolkit changes; the
# build only reads the committed lists, so it works without the toolkit's
# shared libraries.
#
# Each list line is "NAME TYPE" (nm's type letter: T for code), followed by
# the size in bytes for data symbols (D, B, R, V), which gen-stubs.sh needs
# to reserve storage.  Version-node definitions (type A) are left out: the
# version scripts recreate them.
set -eu
cuda=${1:-${CUDA_HOME:-/usr/local/cuda}}
here=$(cd "$(dirname "$0")" && pwd)

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
	lib=$1 out=$2 weak=${3:-}
	tmp="$out.tmp"
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
	mv "$tmp" "$out"
	echo "$out: $(grep -vc '^#' "$out") names"
}

write_list "$(find_lib lib64/libcudart.so.13 lib/libcudart.so.13)" "$here/libcudart.syms"
write_list "$(find_lib lib64/libcupti.so.13 lib/libcupti.so.13 extras/CUPTI/lib64/libcupti.so.13)" "$here/libcupti.syms"
write_list "$(find_lib lib64/stubs/libcuda.so lib/stubs/libcuda.so)" "$here/libcuda.syms"
write_list "$(find_lib lib64/libcublas.so.13 lib/libcublas.so.13)" "$here/libcublas.syms"
write_list "$(find_lib lib/libnccl.so.2 lib64/libnccl.so.2)" "$here/libnccl.syms" weak
