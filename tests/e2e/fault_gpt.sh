#!/bin/sh
# The fault sweep (tests/e2e/fault_lib.sh) on gpt.
SWEEP_BUDGET=85%
. tests/e2e/fault_lib.sh
sweep "$TR/gpt" --layers 1 --hidden 32 --seq 16 --batch 4 --iters 7
echo "fault_gpt: ok"
