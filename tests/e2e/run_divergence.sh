#!/bin/sh
# Run mode meets an iteration unlike the profiled one: a short last batch
# (--short-last).  Everything evicted is rebuilt, the rest of the iteration
# passes through; outputs stay byte-identical.  The divergent part runs
# unmodified and uncapped; the budget holds while the plan is applied.
. tests/e2e/run_lib.sh
run base -- "$TR/mlp" --iters 7 --short-last 100
read -r c p m <<EOT
$(budgets mlp "$TR/mlp" --iters 7 --short-last 100)
EOT
prefill short "$tmp/mlp-trace.d" "$m"
run_budget short base "$m" "$TR/mlp" --iters 7 --short-last 100
grep -q "diverges from the profile" "$tmp/short.err" || fail "the short batch was not seen as a divergence"
run gbase -- "$TR/gpt" --iters 7 --short-last 3
read -r c p m <<EOT
$(budgets gpt "$TR/gpt" --iters 7 --short-last 3)
EOT
prefill gshort "$tmp/gpt-trace.d" "$m"
run_budget gshort gbase "$m" "$TR/gpt" --iters 7 --short-last 3
grep -q "diverges from the profile" "$tmp/gshort.err" || fail "gpt: no divergence seen"
echo "run_divergence: ok"
