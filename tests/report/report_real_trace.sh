#!/bin/sh
# remat-report on a trace libremat really wrote: the mlp trainer on the
# simulated device in trace mode, then a plan from remat-plan.  The
# figures are checked against trace.json itself, recomputed here from the
# raw buffer list (independently of the planner library the report uses).
. tests/report/lib.sh
for bin in "$B/libremat.so" "$B/trainers/mlp" "$B/remat-plan" "$B/simcuda/libcuda.so.1"; do
	[ -e "$bin" ] || fail "$bin is missing: run 'make all' first"
done
export SIMCUDA_GRANULARITY=64K
LD_PRELOAD="${TEST_SAN_RUNTIME:+$TEST_SAN_RUNTIME:}$B/libremat.so" REMAT_MODE=trace REMAT_TRACE_DIR=$TMP/trace \
	sim/bin/simrun "$B/trainers/mlp" >"$TMP/train.log" 2>&1 || {
	cat "$TMP/train.log" >&2
	fail "the traced mlp run failed"
}
[ -s "$TMP/trace/trace.json" ] || fail "no trace written"

"$REPORT" --html "$TMP/page.html" "$TMP/trace" >"$TMP/out" || fail "remat-report exited $?"
python3 - "$TMP/trace/trace.json" "$TMP/out" <<'PY' || fail "report and trace.json disagree"
import json, re, sys
t = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
ops, bufs = t["ops"], t["buffers"]

def mib(v):
    units = ["B", "KiB", "MiB", "GiB"]
    u = 0
    while v >= 1024 and u < 3:
        v /= 1024
        u += 1
    return "%.1f %s" % (v, units[u]) if u else "%d B" % v

def want(pattern):
    if not re.search(pattern, out, re.M):
        sys.exit("no match for %r" % pattern)

want(r"^  period +%d ops per iteration" % len(ops))
kinds = {k: sum(o["kind"] == k for o in ops) for k in ("kernel", "memcpy", "memset", "host_func")}
want(r"^  kernels +%d " % kinds["kernel"])
want(r"^  copies +%d\b" % kinds["memcpy"])
want(r"^  memsets +%d\b" % kinds["memset"])
# baseline curve straight from the buffer list: persistent chunks + the
# small pool + the chunks of split allocations no region holds whole +
# the per-iteration buffers live over [alloc_at, free_at)
pers = (sum(b["rounded"] for b in bufs if b["persistent"]) + t["memory"]["small_pool_bytes"]
        + t["memory"].get("edge_bytes", 0))
def live(i):
    return sum(b["rounded"] for b in bufs if not b["persistent"]
               and (b["alloc_at"] < 0 or b["alloc_at"] <= i)
               and (b["free_at"] < 0 or i < b["free_at"]))
curve = [pers + live(i) for i in range(len(ops))]
peak = max(curve)
want(r"^MEMORY \(baseline peak %s, first reached at op %d\)$" % (re.escape(mib(peak)), curve.index(peak)))
want(r"^  persistent +%s " % re.escape(mib(pers)))
want(r"^  peak +%s$" % re.escape(mib(peak)))
# the top kernel by summed duration
tot = {}
for o in ops:
    if o["kind"] == "kernel":
        tot[o["name"]] = tot.get(o["name"], 0) + max(o["duration_ns"], 0)
top = sorted(tot, key=lambda k: (-tot[k], k))[0]
first = out.split("TOP KERNELS BY TOTAL TIME\n")[1].splitlines()[1]
if not first.startswith("  " + top[:30]):
    sys.exit("top kernel row %r, want %s" % (first, top))
c = t["cupti"]
want(r"^  %d kernels seen by CUPTI, %d launches intercepted" % (c["kernels"], c["launches"]))
PY
python3 tests/report/check_html.py "$TMP/page.html" \
	"$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["buffers"]))' "$TMP/trace/trace.json")"

# a plan from the real planner at 80 % of the baseline peak
"$B/remat-plan" "$TMP/trace" --budget 80% -o "$TMP/plan.json" >"$TMP/plan.log" 2>&1 || {
	cat "$TMP/plan.log" >&2
	fail "remat-plan failed"
}
"$REPORT" --plan "$TMP/plan.json" "$TMP/trace" >"$TMP/pout" || fail "--plan exited $?"
expect_line "$TMP/pout" '^  planner +(ilp|greedy|dtr|chain)(:[a-z]+)?$'
expect_line "$TMP/pout" 'with the plan \(fits the budget\)$'
echo "ok"
