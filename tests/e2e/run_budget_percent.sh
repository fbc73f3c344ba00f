#!/bin/sh
# REMAT_BUDGET as a percentage: of the baseline peak, the same bytes as
# remat-plan --budget gives on the job's own trace (one grammar, one
# meaning), printed at REMAT_LOG=1; output identical, peak within those
# bytes.  A percentage that rounds to nothing is one message and an
# unmodified job.
. tests/e2e/run_lib.sh
run plain -- "$TR/gpt" --iters 10
run pct REMAT_BUDGET=70% REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/pct.d" "REMAT_CACHE_DIR=$tmp/pct.c" \
	LD_PRELOAD="$PRELOAD" -- "$TR/gpt" --iters 10
same plain pct
line=$(grep "libremat: budget: " "$tmp/pct.err") || fail "no budget line: $(cat "$tmp/pct.err")"
bytes=$(echo "$line" | sed -n 's/.*budget: \([0-9]*\) bytes (REMAT_BUDGET=70% of the baseline peak, \([0-9]*\) bytes).*/\1/p')
[ -n "$bytes" ] || fail "budget line not understood: $line"
"$PLAN" "$tmp/pct.d" --budget 70% -o "$tmp/p.json" >"$tmp/plan.txt" 2>&1 || true
want=$(sed -n 's/^budget: .*(\([0-9]*\) bytes)$/\1/p' "$tmp/plan.txt")
[ "$bytes" = "$want" ] || fail "REMAT_BUDGET=70% is $bytes bytes, remat-plan --budget 70% $want"
grep -q "applied from iteration" "$tmp/pct.err" || fail "no plan applied: $(tail -n 3 "$tmp/pct.err")"
peak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' "$tmp/pct.err")
[ -n "$peak" ] && [ "$peak" -le "$bytes" ] || fail "replay peak '$peak' over the budget $bytes"

run tiny REMAT_BUDGET=0.00001% "REMAT_TRACE_DIR=$tmp/tiny.d" "REMAT_CACHE_DIR=$tmp/tiny.c" \
	LD_PRELOAD="$PRELOAD" -- "$TR/gpt" --iters 10
same plain tiny
[ "$(grep -c "libremat:" "$tmp/tiny.err")" = 1 ] || fail "tiny: not one message: $(cat "$tmp/tiny.err")"
grep -q "REMAT_BUDGET: budget .*% of a baseline peak of [0-9]* bytes rounds to 0 bytes" \
	"$tmp/tiny.err" || fail "tiny: $(cat "$tmp/tiny.err")"
no_fault
echo "run_budget_percent: ok ($bytes bytes, replay peak $peak)"
