#!/bin/sh
# The fault sweep (tests/e2e/fault_lib.sh) on mlp.
. tests/e2e/fault_lib.sh
sweep "$TR/mlp" --layers 2 --hidden 64 --batch 64 --iters 7
echo "fault_mlp: ok"
