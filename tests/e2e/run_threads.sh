#!/bin/sh
# Run mode with backward issued from a second host thread (--bwd-thread) and
# with inputs staged from pinned memory (--pinned; the input copies run on a
# second stream in every trainer): identical outputs within the budget.
. tests/e2e/run_lib.sh
for t in mlp gpt; do
	run "$t-base" -- "$TR/$t" --iters 7 --bwd-thread
	read -r c p m <<EOT
$(budgets "$t" "$TR/$t" --iters 7 --bwd-thread)
EOT
	prefill "$t-bwd" "$tmp/$t-trace.d" "$m"
	run_budget "$t-bwd" "$t-base" "$m" "$TR/$t" --iters 7 --bwd-thread
done
run "mlp-pin-base" -- "$TR/mlp" --iters 7 --pinned
read -r c p m <<EOT
$(budgets mlp-pin "$TR/mlp" --iters 7 --pinned)
EOT
prefill mlp-pin "$tmp/mlp-pin-trace.d" "$(frac "$c" "$p" "$m" 0.5)"
run_budget "mlp-pin" "mlp-pin-base" "$(frac "$c" "$p" "$m" 0.5)" "$TR/mlp" --iters 7 --pinned
echo "run_threads: ok"
