#!/bin/sh
# A slice of an activation arena refilled between two kernels that point
# into the arena (tests/e2e/progs/real/refill.cu: mix, then cudaMemset of
# d, then scale, whose pointers reach d).  The profiler takes a kernel's
# content before it from the copies after the kernel just before (issue
# 31: a profile of llm.c copied its activation arena twice per kernel),
# never across another op: scale must not be charged with the memset's
# zeros.  The traced run prints the plain run's output, the log says how
# many second launches the proofs made, and in the trace scale writes no
# region the memset writes; then the plan at 80% (its smallest reachable
# peak is 75%) applies with the plain run's output.
. tests/e2e/run_lib.sh
real_trace refill
no_fault
grep -q "write sets: [0-9]* host copies .*; [1-9][0-9]* second launches" "$tmp/traced.err" ||
	fail "no second launches reported: $(grep 'write sets' "$tmp/traced.err")"
python3 - "$tmp/t.d/trace.json" <<'PY' || fail "scale's writes in the trace are not its own"
import json, sys
t = json.load(open(sys.argv[1]))
ops = t["ops"]
sets = [o for o in ops if o["kind"] == "memset"]
scale = [o for o in ops if "scale" in o["name"]]
assert len(sets) == 1 and len(scale) == 1, [o["name"] for o in ops]
zeroed = set(sets[0]["writes"])
assert zeroed, sets[0]
assert scale[0]["writes"] and not zeroed & set(scale[0]["writes"]), (scale[0], sets[0])
PY
# The plan from the trace, in the cache before the run (the job is shorter
# than planning on a loaded machine).
bud=$(peak_share 80)
prefill b80 "$tmp/t.d" "$bud" --plan-version 2
run b80 "REMAT_BUDGET=$bud" REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/b80.d" "REMAT_CACHE_DIR=$tmp/b80.cache" \
	LD_PRELOAD="$PRELOAD" -- "$P/refill"
same base b80
no_fault
grep -q "applied from iteration" "$tmp/b80.err" || fail "80%: no plan applied: $(cat "$tmp/b80.err")"
echo "real_refill: ok"
