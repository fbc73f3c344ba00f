#!/bin/sh
# The cap is real: with a plan that evicts nothing (a valid plan file edited
# to drop its evictions, its predicted peak left at the budget), the replay
# iteration asks for more than REMAT_BUDGET.  libremat waits for nothing
# that could free memory, then refuses with one line saying by how much, and
# the program gets the out-of-memory error a real device would give.
. tests/e2e/run_lib.sh
read -r c p m <<EOT
$(budgets mlp "$TR/mlp" --iters 7)
EOT
prefill refuse "$tmp/mlp-trace.d" "$m"
python3 - "$tmp"/refuse.cache/*.plan.json <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
plan["ops"] = []
json.dump(plan, open(sys.argv[1], "w"))
PY
# an edit on purpose: give it the checksum of its new content
"$PLAN" --rehash "$tmp"/refuse.cache/*.plan.json >/dev/null || fail "remat-plan --rehash failed"
if env SIMCUDA_GRANULARITY=64K REMAT_BUDGET="$m" "REMAT_TRACE_DIR=$tmp/r.d" \
	"REMAT_CACHE_DIR=$tmp/refuse.cache" LD_PRELOAD="$PRELOAD" "$SIMRUN" "$TR/mlp" --iters 7 \
	>"$tmp/refuse.out" 2>"$tmp/refuse.err"; then
	fail "mlp ran although nothing was evicted under a budget of $m"
fi
grep -q "^libremat: allocation of [0-9]* bytes exceeds REMAT_BUDGET=$m by [0-9]* bytes" \
	"$tmp/refuse.err" || fail "no refusal line: $(cat "$tmp/refuse.err")"
[ "$(grep -c "^libremat: " "$tmp/refuse.err")" = 1 ] || fail "more than one line: $(cat "$tmp/refuse.err")"
grep -q "out of device memory" "$tmp/refuse.err" || fail "the program did not see out of memory"
no_fault
echo "run_budget_refusal: ok ($(grep "^libremat: " "$tmp/refuse.err"))"
