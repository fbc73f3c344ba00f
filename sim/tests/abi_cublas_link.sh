#!/bin/sh
# abi_cublas_link.sh — cublas_test.c built with the system compiler against
# the REAL libcublas.so.13 and libcudart.so.13 of the toolkit, its cuBLAS
# references bound to the real version node, runs its checks on the
# simulated libraries (LD_LIBRARY_PATH): a binary made for NVIDIA's cuBLAS
# works on ours unchanged.  Ours, like the real one, reaches the driver
# only through dlopen: no link to libcuda and no driver imports.
set -eu
cuda=${CUDA_HOME:-/usr/local/cuda}
sim=${BUILD:-build}/simcuda
out=$sim/tests/abi_cublas_program
fail() {
	echo "abi_cublas_link: $*"
	exit 1
}
for f in "$sim/libcublas.so.13" "$sim/libcudart.so.13" "$sim/libcuda.so.1"; do
	[ -r "$f" ] || fail "$f is not built (run make all)"
done
[ -e "$cuda/lib64/libcublas.so" ] || fail "the real libcublas.so is not under $cuda/lib64"
readelf -d "$sim/libcublas.so.13" | grep -q 'NEEDED.*libcuda\.so' && fail "libcublas.so.13 links libcuda"
nm -D --undefined-only "$sim/libcublas.so.13" | grep -q ' cu[A-Z]' && fail "libcublas.so.13 imports driver symbols"

mkdir -p "$(dirname "$out")"
# -rpath-link: the real libcublas needs libcublasLt at link time.
${CC:-cc} -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -I"$cuda/include" \
	sim/tests/cublas_test.c -o "$out" -L"$cuda/lib64" -Wl,-rpath-link,"$cuda/lib64" \
	-Wl,--no-as-needed -lcublas -lcudart -lcmocka -lm

objdump -T "$out" | awk '
	NF < 2 { next }
	{ ver = $(NF-1); gsub(/[()]/, "", ver) }
	$NF ~ /^cublas/ { n++; if (ver != "libcublas.so.13") { print "unversioned or wrong: " $0; bad++ } }
	END { if (bad || n < 10) { print "abi_cublas_link: " bad+0 " bad of " n+0 " references"; exit 1 }
	      print "abi_cublas_link: " n " references bound to libcublas.so.13" }'
LD_LIBRARY_PATH=$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$out"
