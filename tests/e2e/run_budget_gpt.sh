#!/bin/sh
# Run mode on gpt (two sizes) at 75%, 50% and the smallest budget the planner
# accepts: losses and checksum byte-identical, peak within the budget.
# Seven iterations: profiled at 2, the plan verifies at 4 and applies at 5;
# the last one leaves the profile's path part-way.  A plan that comes an
# iteration late (the trace is written beside the training; a loaded
# machine) still has an iteration to apply in.
. tests/e2e/run_lib.sh
three_budgets gpt "$TR/gpt" --iters 7
three_budgets gpt-deep "$TR/gpt" --iters 7 --layers 3 --seq 48
echo "run_budget_gpt: ok"
