#!/bin/sh
# What the trace says about known kernels: every launch path is there (via),
# CUPTI saw exactly the intercepted launches, and write sets are right:
# in-place ReLU writes its input, a matmul writes only its output, batch
# norm writes its output, its running statistics and its saved statistics;
# the cost of a device copy is measured as the simulated device takes it.
. tests/e2e/trace_lib.sh
run mlp LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/mlp -- $TR/mlp --iters 6
check_trace "$tmp/mlp"
python3 - "$tmp/mlp/trace.json" <<'PY' || fail "mlp trace contents"
import json, sys
t = json.load(open(sys.argv[1]))
ops = t["ops"]
def by(name): return [o for o in ops if o.get("name") == name]
def param_buf(o, off):
    hits = [r[0] for r in o["refs"] if r[2] == off]
    assert hits, f"{o['name']}: no buffer at parameter offset {off}"
    return hits[0]
vias = {o["via"] for o in ops}
for want in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx",
             "cuGetProcAddress:cuLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync"):
    assert want in vias, f"no op via {want}: {sorted(vias)}"
cu = t["cupti"]
assert cu["available"] and cu["mismatch"] == 0, cu
assert cu["kernels"] == sum(o["kind"] == "kernel" for o in ops) == cu["launches"], cu
assert all(o["duration_ns"] > 0 for o in ops if o["kind"] == "kernel"), "kernel without duration"
assert all(o["duration_ns"] >= 0 for o in ops), "op without duration"
assert t["iteration"]["duration_ns"] > 0
# A copy inside device memory, timed at the profile's end: the simulated
# device takes 1000 ns + bytes / 20 per ns (sim/driver/clock.c).
dc = t["device_copy"]
assert abs(dc["fixed_ns"] - 1000) <= 2 and abs(dc["bytes_per_us"] - 20000) <= 20, dc
relu = by("relu_inplace")
assert relu
for o in relu:
    x = param_buf(o, 0)
    assert o["writes"] == [x] and x in o["reads"], o
gemm = by("cublas_sgemm_kernel")
assert gemm
for o in gemm:
    c = param_buf(o, 80)          # C, after 13 parameters (CUDA ABI offsets)
    assert o["writes"] == [c], o
    assert param_buf(o, 24) in o["reads"] and param_buf(o, 48) in o["reads"]
bn = by("batchnorm_fwd")
assert bn
bufs = t["buffers"]
for o in bn:
    x, y, gamma, beta = (param_buf(o, k) for k in (0, 8, 16, 24))
    rm, rv, sm, si = (param_buf(o, k) for k in (32, 40, 48, 56))
    assert sorted(o["writes"]) == sorted([y, rm, rv, sm, si]), o
    assert bufs[rm]["persistent"] and bufs[rv]["persistent"], "running stats persistent"
    assert not bufs[y]["persistent"], "activation not persistent"
# Activations come and go inside the iteration; parameters stay.
assert any(b["alloc_at"] >= 0 and b["free_at"] >= 0 for b in bufs)
assert t["memory"]["persistent_bytes"] > 0 and t["memory"]["peak_bytes"] > 0
assert all(b["site"] for b in bufs), "a buffer without allocation site"
assert any("mlp" in f for b in bufs for f in b["site"]), "sites do not name the program"
assert not any("libremat" in f for b in bufs for f in b["site"]), "libremat frames in sites"
# Kernels launched with a known layout are replayable; host copies are not.
for o in ops:
    if o["kind"] == "memcpy" and o["copy"] in ("HtoD", "DtoH"):
        assert not o["replayable"] and o["why_not"], o
    if o["kind"] == "kernel":
        assert o["replayable"], o
print("ok")
PY
# Profiling a later iteration (more warm-up) gives the same graph hash and
# the same address for the n-th allocation of the iteration (relative to the
# process's lowest buffer: under a sanitizer the simulated device's range
# itself moves between processes): what lets run mode replay recorded
# parameters.
run gpt1 LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/gpt1 -- $TR/gpt --iters 6
run gpt2 LD_PRELOAD="$PRELOAD" REMAT_WARMUP=4 REMAT_TRACE_DIR=$tmp/gpt2 -- $TR/gpt --iters 7
run mlp2 LD_PRELOAD="$PRELOAD" REMAT_WARMUP=5 REMAT_TRACE_DIR=$tmp/mlp2 -- $TR/mlp --iters 8
check_trace "$tmp/gpt1"
for pair in "gpt1 gpt2" "mlp mlp2"; do
	set -- $pair
	python3 - "$tmp/$1/trace.json" "$tmp/$2/trace.json" <<'PY' || fail "$1 vs $2: not the same iteration"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["iteration"]["profiled"] < b["iteration"]["profiled"], "same iteration profiled"
assert a["graph_hash"] == b["graph_hash"], (a["graph_hash"], b["graph_hash"])
def inside(t):
    base = min(int(x["addr"], 16) for x in t["buffers"])
    bufs = sorted((x for x in t["buffers"] if x["alloc_seq"] >= 0), key=lambda x: x["alloc_seq"])
    return [(int(x["addr"], 16) - base, x["size"]) for x in bufs]
assert inside(a) and inside(a) == inside(b), "addresses of the iteration's allocations differ"
PY
done
# Without the simulated CUPTI (a library directory holding only the driver,
# the runtime, cuBLAS and the kernel support): no durations, and the trace says why.
mkdir "$tmp/nocupti"
for f in libcuda.so.1 libcudart.so.13 libcublas.so.13 libsimcuda_kernel.so; do
	ln -s "$(pwd)/$BUILD/simcuda/$f" "$tmp/nocupti/$f"
done
LD_PRELOAD="$PRELOAD" REMAT_TRACE_DIR=$tmp/nc REMAT_LOG=1 REMAT_LOG_FILE=$tmp/nc.log \
	SIMCUDA_DIR=$tmp/nocupti "$SIMRUN" $TR/mlp --iters 6 >"$tmp/nc.out" 2>"$tmp/nc.err" ||
	fail "mlp without CUPTI exited $?: $(tail -n 3 "$tmp/nc.err")"
check_trace "$tmp/nc"
python3 - "$tmp/nc/trace.json" <<'PY' || fail "trace without CUPTI"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["cupti"]["available"] is False and t["cupti"]["note"], t["cupti"]
assert all(o["duration_ns"] == -1 for o in t["ops"])
assert t["iteration"]["duration_ns"] == -1
PY
# REMAT_LOG_FILE gets the log, stderr nothing.
grep -q "^libremat: trace written to" "$tmp/nc.log" || fail "log file: $(cat "$tmp/nc.log")"
grep -q "^libremat: no kernel durations: " "$tmp/nc.log" || fail "no CUPTI message: $(cat "$tmp/nc.log")"
[ ! -s "$tmp/nc.err" ] || fail "stderr with REMAT_LOG_FILE: $(cat "$tmp/nc.err")"
echo "PASS: launch paths, CUPTI cross-check, write sets, buffers, graph hash, stable addresses"
