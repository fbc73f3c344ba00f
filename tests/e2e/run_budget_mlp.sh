#!/bin/sh
# Run mode on mlp (two sizes) at 75%, 50% and the smallest budget the planner
# accepts: losses and checksum byte-identical to the run without libremat,
# the physical peak of the replay iterations within the budget.
. tests/e2e/run_lib.sh
three_budgets mlp "$TR/mlp" --iters 6
three_budgets mlp-wide "$TR/mlp" --iters 6 --hidden 384 --layers 3
echo "run_budget_mlp: ok"
