#!/bin/sh
# --blas-workspace: the trainers give cuBLAS a workspace from their own
# allocator, and the simulated cuBLAS runs GEMMs tall in k as split-K (a
# cuMemsetD32Async of the workspace's counter, then one
# cublas_sgemm_splitk_kernel whose splits meet through it).  0 changes
# nothing; with a workspace each run prints the same bytes, also under
# libremat in trace mode (REMAT_WRITE_PROOF=0, the default: no kernel is
# relaunched), and the trace holds a counter memset right before every
# split-K launch: mlp's four weight gradients and its head's at --batch 1024.
. tests/e2e/trace_lib.sh

WS=4194304
MLP="--alloc caching --blas-workspace $WS --layers 4 --batch 1024"
# shellcheck disable=SC2086
run mlp3 -- "$TR/mlp" $MLP --iters 3
# shellcheck disable=SC2086
run mlp3.again -- "$TR/mlp" $MLP --iters 3
same mlp3 mlp3.again
# shellcheck disable=SC2086
run mlp3.traced LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_WRITE_PROOF=0 \
	REMAT_TRACE_DIR="$tmp/mlp3.d" -- "$TR/mlp" $MLP --iters 3
same mlp3 mlp3.traced
# Without a workspace (or with 0 bytes) every gemm is the plain kernel: the
# same bytes as each other, other last bits than split-K's sums.
run mlp3.none -- "$TR/mlp" --alloc caching --layers 4 --batch 1024 --iters 3
run mlp3.zero -- "$TR/mlp" --alloc caching --layers 4 --batch 1024 --iters 3 --blas-workspace 0
same mlp3.none mlp3.zero
! cmp -s "$tmp/mlp3.out" "$tmp/mlp3.none.out" || fail "mlp: the workspace changed no result"

# A trace needs a steady iteration: the caching pool's takes more than 3.
# checktrace DIR SPLITK: SPLITK split-K gemms an iteration, each right
# after its counter's memset on the same stream and into the same buffer.
checktrace() {
	check_trace "$1"
	python3 - "$1/trace.json" "$2" <<'PY' || fail "$1: split-K ops"
import json, sys
t = json.load(open(sys.argv[1]))
ops, want = t["ops"], int(sys.argv[2])
sk = [o for o in ops if o.get("name") == "cublas_sgemm_splitk_kernel"]
assert len(sk) == want, f"{len(sk)} split-K launches, not {want}"
for o in sk:
    assert o["grid"][2] == 4 and o["via"] == "cuGetProcAddress:cuLaunchKernel", o
    m = ops[o["i"] - 1]
    assert m["kind"] == "memset" and m["via"] == "cuGetProcAddress:cuMemsetD32Async", m
    assert m["bytes"] == 4 and m["value"] == 0 and m["stream"] == o["stream"], m
    counter = m["writes"][0]
    assert counter in o["reads"] and counter in o["writes"], (m, o)
memsets = [o for o in ops if o.get("via") == "cuGetProcAddress:cuMemsetD32Async"]
assert len(memsets) == want, f"{len(memsets)} counter memsets for {want} split-K launches"
PY
}
# shellcheck disable=SC2086
run mlp8 -- "$TR/mlp" $MLP --iters 8
# shellcheck disable=SC2086
run mlp8.traced LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR="$tmp/mlp8.d" \
	-- "$TR/mlp" $MLP --iters 8
same mlp8 mlp8.traced
checktrace "$tmp/mlp8.d" 5

# gpt: the weight gradients of each block's output projection and of the
# LM head (64 x 64, k = batch x seq = 256) are split-K; the others have a
# side of 192 or 256, more than k / 4.
run gpt8 -- "$TR/gpt" --alloc caching --blas-workspace $WS --iters 8
run gpt8.traced LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR="$tmp/gpt8.d" \
	-- "$TR/gpt" --alloc caching --blas-workspace $WS --iters 8
same gpt8 gpt8.traced
checktrace "$tmp/gpt8.d" 3
echo "trainer --blas-workspace: split-K gemms, identical under libremat, traced"
