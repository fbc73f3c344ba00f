#!/bin/sh
# Write sets on the simulated device are found with libremat's hashing
# kernel, as on a GPU (the module built for the simulated device, embedded
# beside the PTX), on libremat's own stream: the trace says so, CUPTI's
# kernel count matches the launches (the hashing kernels are not counted as
# the program's), every kernel has its duration, and the output is the
# plain run's.
. tests/e2e/trace_lib.sh
run plain -- "$TR/gpt" --iters 6
run traced REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/t.d" REMAT_LOG=1 LD_PRELOAD="$PRELOAD" \
	-- "$TR/gpt" --iters 6
same plain traced
grep -q "write sets: hashing on the device (embedded module of the simulated device)" \
	"$tmp/traced.err" || fail "not hashing on the device: $(grep 'write sets' "$tmp/traced.err")"
python3 - "$tmp/t.d/trace.json" <<'PY' || fail "trace"
import json, sys
t = json.load(open(sys.argv[1]))
c = t["cupti"]
assert c["available"] and c["mismatch"] == 0 and c["kernels"] == c["launches"] > 0, c
k = [o for o in t["ops"] if o["kind"] == "kernel"]
assert all(o["duration_ns"] > 0 for o in k), [o["name"] for o in k if o["duration_ns"] <= 0]
assert sum(1 for o in k if o["writes"]) > len(k) // 2, "few writes found"
PY
echo "trace_hashing: ok"
