#!/bin/sh
# abi_real_link.sh — builds abi_program.c with the system compiler against
# the REAL libcudart.so.13 and libcupti.so.13 of the toolkit, checks that
# its references are bound to the real version nodes, then runs it with
# LD_LIBRARY_PATH pointing at the simulated libraries: a binary made for
# NVIDIA's libraries must load and work on ours unchanged.
set -eu
cuda=${CUDA_HOME:-/usr/local/cuda}
sim=${BUILD:-build}/simcuda
out=$sim/tests/abi_program
module=$sim/tests/modules/rt_kernels.so
for f in "$sim/libcudart.so.13" "$sim/libcupti.so.13" "$sim/libcuda.so.1" "$module"; do
	[ -r "$f" ] || {
		echo "abi_real_link: $f is not built (run make all)"
		exit 1
	}
done
cupti_dir=
for d in "$cuda/lib64" "$cuda/lib" "$cuda/extras/CUPTI/lib64"; do
	[ -e "$d/libcupti.so" ] && {
		cupti_dir=$d
		break
	}
done
if [ ! -e "$cuda/lib64/libcudart.so" ] || [ -z "$cupti_dir" ]; then
	echo "abi_real_link: the real libcudart.so / libcupti.so are not under $cuda"
	exit 1
fi
mkdir -p "$(dirname "$out")"
${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -I"$cuda/include" \
	sim/tests/abi_program.c -o "$out" \
	-L"$cuda/lib64" -L"$cupti_dir" -Wl,--no-as-needed -lcudart -lcupti -ldl

# Every runtime and CUPTI reference carries the real version node.
# objdump -T prints a needed version as "(libcudart.so.13)".
objdump -T "$out" | awk '
	NF < 2 { next }
	{ ver = $(NF-1); gsub(/[()]/, "", ver) }
	$NF ~ /^cuda/  { n++; if (ver != "libcudart.so.13") { print "unversioned or wrong: " $0; bad++ } }
	$NF ~ /^cupti/ { n++; if (ver != "libcupti.so.13") { print "unversioned or wrong: " $0; bad++ } }
	END { if (bad || n < 10) { print "abi_real_link: " bad+0 " bad of " n+0 " references"; exit 1 }
	      print "abi_real_link: " n " references bound to libcudart.so.13 / libcupti.so.13" }'

LD_LIBRARY_PATH=$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$out" "$module" "$sim"
