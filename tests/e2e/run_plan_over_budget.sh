#!/bin/sh
# A cached plan that would not keep the job within its budget (a valid plan
# file edited to drop its evictions, its predicted peak left at the
# budget, and given the checksum of its new content as an edit on purpose
# is) is refused before it applies: one message saying where the plan goes
# over the budget, the entry set aside as ENTRY.rejected, the job planned
# again, and the job's output identical to the plain run.  (The allocator's own cap, the
# second line of defence, refuses an allocation over the budget with the
# device's out-of-memory error: tests/alloc/test_alloc.)
. tests/e2e/run_lib.sh
read -r c p m <<EOT
$(budgets mlp "$TR/mlp" --iters 7)
EOT
run plain -- "$TR/mlp" --iters 7
prefill over "$tmp/mlp-trace.d" "$m"
python3 - "$tmp"/over.cache/*.plan.json <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["ops"] = []
json.dump(plan, open(sys.argv[1], "w"))
PY
entry=$(ls "$tmp"/over.cache/*.plan.json)
"$PLAN" --rehash "$entry" >/dev/null || fail "remat-plan --rehash failed"
cp "$entry" "$tmp/over.edited"
run over SIMCUDA_GRANULARITY=64K REMAT_BUDGET="$m" "REMAT_TRACE_DIR=$tmp/r.d" \
	"REMAT_CACHE_DIR=$tmp/over.cache" LD_PRELOAD="$PRELOAD" -- "$TR/mlp" --iters 7
same plain over
grep -q "^libremat: cached plan $entry rejected: at op [0-9]* the plan needs [0-9]* bytes, over the budget of $m; moved it to $entry.rejected and planning again" \
	"$tmp/over.err" || fail "no rejection line: $(cat "$tmp/over.err")"
cmp -s "$tmp/over.edited" "$entry.rejected" || fail "the refused plan was not kept aside"
[ "$(grep -c "^libremat: " "$tmp/over.err")" = 1 ] || fail "more than one line: $(cat "$tmp/over.err")"
no_fault
echo "run_plan_over_budget: ok ($(grep "^libremat: " "$tmp/over.err"))"
