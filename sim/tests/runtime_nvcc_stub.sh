#!/bin/sh
# runtime_nvcc_stub.sh — a program built by plain nvcc against the real
# shared cudart (<<<>>> launch, fat binary registration, no simcc module)
# runs on the simulated runtime: registration works, the launch answers
# cudaErrorNoKernelImageForDevice, the rest of the program is unaffected.
# Listed only when nvcc exists.
set -eu
cuda=${CUDA_HOME:-/usr/local/cuda}
sim=${BUILD:-build}/simcuda
out=$sim/tests/runtime_nvcc_stub
nvcc=${NVCC:-$cuda/bin/nvcc}
[ -x "$nvcc" ] || {
	echo "runtime_nvcc_stub: no nvcc at $nvcc"
	exit 1
}
for f in "$sim/libcudart.so.13" "$sim/libcuda.so.1"; do
	[ -r "$f" ] || {
		echo "runtime_nvcc_stub: $f is not built (run make all)"
		exit 1
	}
done
mkdir -p "$(dirname "$out")"
"$nvcc" -cudart shared -o "$out" sim/tests/runtime_nvcc_stub.cu
# The binary asks for the real library; LD_LIBRARY_PATH hands it ours.
objdump -T "$out" | grep -q 'libcudart\.so\.13.*__cudaRegisterFatBinary' || {
	echo "runtime_nvcc_stub: $out does not import __cudaRegisterFatBinary from libcudart.so.13"
	exit 1
}
LD_LIBRARY_PATH=$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$out"
