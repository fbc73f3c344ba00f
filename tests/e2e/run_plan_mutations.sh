#!/bin/sh
# The sweep of tests/e2e/mutations_lib.sh (every single-token edit of a
# cached plan: the job runs it to the plain run's output, or refuses it in
# one message and still ends with that output) on a plan that rebuilds by
# replay around a stash (batch norm's running statistics).
# SWEEP_STRIDE=K tries every K-th edit (make test: 4; make check-faults:
# every one).
. tests/e2e/mutations_lib.sh
STRIDE=${SWEEP_STRIDE:-4}
# Iterations enough for the trace to be written (a thread) and the cache
# read before the job ends, on a loaded machine too.
T="$TR/mlp --layers 1 --hidden 128 --batch 128 --iters 24"
BUDGET=75%
# Recompute only: the plan that offloads has a sweep of its own
# (run_plan_mutations_offload.sh); this one must keep its stash.
MUT_ENV=REMAT_OFFLOAD=0
MUST=stash
mutation_sweep
echo "run_plan_mutations: ok ($ran edits still valid plans, $refused refused in one message" \
	"($sealed_here sealed here: remat-plan's reader refuses them), 4 with their old checksum refused)"
