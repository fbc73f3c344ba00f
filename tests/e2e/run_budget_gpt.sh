#!/bin/sh
# Run mode on gpt (two sizes) at 75%, 50% and the smallest budget the planner
# accepts: losses and checksum byte-identical, peak within the budget.
. tests/e2e/run_lib.sh
three_budgets gpt "$TR/gpt" --iters 6
three_budgets gpt-deep "$TR/gpt" --iters 6 --layers 3 --seq 48
echo "run_budget_gpt: ok"
