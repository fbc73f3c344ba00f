#!/bin/sh
# Write sets come from host copies before and after each kernel and graph
# launch, on a stream of libremat's own (no hashing kernel: libremat.so
# carries no device code): the log says so, CUPTI's kernel count matches
# the launches (the proofs' second launches are not counted as the
# program's), every kernel has its duration, most kernels write, and the
# output is the plain run's.  With --graphs the two graph launches write
# what their nodes write, and their durations leave out the copies around
# them (reported under the graph's runtime call): together the graphs
# take what the same kernels take launched one by one.
. tests/e2e/trace_lib.sh
run plain -- "$TR/gpt" --iters 6
run traced REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/t.d" REMAT_LOG=1 LD_PRELOAD="$PRELOAD" \
	-- "$TR/gpt" --iters 6
same plain traced
grep -q "write sets: host copies on a stream of libremat's own" "$tmp/traced.err" ||
	fail "no host copies on a stream of libremat's own: $(grep 'write sets' "$tmp/traced.err")"
run graphs REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/g.d" LD_PRELOAD="$PRELOAD" \
	-- "$TR/gpt" --iters 6 --graphs
same plain graphs
check_trace "$tmp/g.d"
python3 - "$tmp/t.d/trace.json" "$tmp/g.d/trace.json" <<'PY' || fail "trace"
import json, sys
t = json.load(open(sys.argv[1]))
c = t["cupti"]
assert c["available"] and c["mismatch"] == 0 and c["kernels"] == c["launches"] > 0, c
k = [o for o in t["ops"] if o["kind"] == "kernel"]
assert all(o["duration_ns"] > 0 for o in k), [o["name"] for o in k if o["duration_ns"] <= 0]
assert sum(1 for o in k if o["writes"]) > len(k) // 2, "few writes found"
g = json.load(open(sys.argv[2]))
graphs = [o for o in g["ops"] if o["kind"] == "graph"]
assert len(graphs) == 2 and len(graphs[1]["writes"]) >= 20, [len(o["writes"]) for o in graphs]
eager = sum(o["duration_ns"] for o in k)
both = sum(o["duration_ns"] for o in g["ops"] if o["kind"] in ("kernel", "graph"))
assert abs(both - eager) <= eager // 100, f"kernels and graphs {both} ns, kernels alone {eager} ns"
PY
echo "trace_host_copies: ok"
