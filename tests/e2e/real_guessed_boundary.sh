#!/bin/sh
# A boundary guessed while run mode looks for the iteration again must not
# unmap anything before op 0 confirms it (issue 31: darknet's fills, issued
# all over its step, faulted axpy at 70% with 4 KiB chunks).  In
# tests/e2e/progs/real/guess.cu the step's last op, a read-back of the
# weights, is issued twice in its middle too, between the kernel that
# writes activation d and the one that reads it; the plan keeps d unmapped
# across the boundary; step 12 allocates a temporary first and diverges.
# Before the fix each middle read-back was taken for the iteration's end,
# d was unmapped, and use_d faulted.  Now the run ends with the plain
# run's output, no fault, and the plan applies again after step 12.
. tests/e2e/run_lib.sh
real_trace guess
python3 - "$tmp/t.d/trace.json" <<'PY' || fail "the trace is not the iteration the test is about"
import json, sys
t = json.load(open(sys.argv[1]))
ops = t["ops"]
last = ops[-1]
assert last["kind"] == "memcpy" and sum(o["kind"] == "memcpy" for o in ops) == 3, \
    [o["name"] for o in ops]
assert sum(1 for b in t["buffers"] if b.get("dead_across_boundary")) >= 2, t["buffers"]
PY
bud=$(peak_share 70)
prefill b70 "$tmp/t.d" "$bud" --plan-version 2
grep -q '"unmapped_at_boundary"' "$tmp/b70.cache/"*.plan.json ||
	fail "the plan keeps nothing unmapped across the boundary"
run b70 "REMAT_BUDGET=$bud" REMAT_LOG=2 "REMAT_TRACE_DIR=$tmp/b70.d" "REMAT_CACHE_DIR=$tmp/b70.cache" \
	LD_PRELOAD="$PRELOAD" -- "$P/guess"
same base b70
no_fault
grep -q "iteration 12 diverges from the profile at op 0 (an extra allocation)" "$tmp/b70.err" ||
	fail "step 12 did not diverge: $(grep diverges "$tmp/b70.err")"
grep -q "iteration 1[5-7] replayed" "$tmp/b70.err" ||
	fail "the plan did not apply again after step 12: $(grep 'replayed' "$tmp/b70.err" | tail -n 2)"
echo "real_guessed_boundary: ok"
