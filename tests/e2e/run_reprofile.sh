#!/bin/sh
# The program changes for good in the middle of training (chain --switch-at:
# other launch shapes from iteration 10 on).  Run mode stops applying the old
# plan, finds no iteration like the profiled one, profiles the new one,
# plans it and applies the new plan: outputs byte-identical, the budget kept
# in both planned phases.  150 iterations: the second plan must arrive
# before the job ends on a loaded machine too (at 30 it sometimes did not).
. tests/e2e/run_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
run base -- "$P/chain" "$P/chain.so" 150 --switch-at 10
read -r c p m <<EOT
$(budgets chain "$P/chain" "$P/chain.so" 150 --switch-at 10)
EOT
run_budget switch base "$m" "$P/chain" "$P/chain.so" 150 --switch-at 10
grep -q "profiling again" "$tmp/switch.err" || fail "no new profile"
[ "$(grep -c "applied from iteration" "$tmp/switch.err")" = 2 ] ||
	fail "the new graph's plan was not applied: $(grep libremat "$tmp/switch.err" | tail -n 4)"
[ "$(grep -o "plan for graph 0x[0-9a-f]*" "$tmp/switch.err" | sort -u | wc -l)" = 2 ] ||
	fail "both plans are for the same graph"
echo "run_reprofile: ok"
