#!/bin/sh
# Run mode on mlp (two sizes) at 75%, 50% and the smallest budget the planner
# accepts: losses and checksum byte-identical to the run without libremat,
# the physical peak of the replay iterations within the budget.  Seven
# iterations, as run_budget_gpt: a plan that comes an iteration late on a
# loaded machine still has an iteration to apply in.
. tests/e2e/run_lib.sh
three_budgets mlp "$TR/mlp" --iters 7
three_budgets mlp-wide "$TR/mlp" --iters 7 --hidden 384 --layers 3
echo "run_budget_mlp: ok"
