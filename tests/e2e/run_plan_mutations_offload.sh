#!/bin/sh
# The sweep of tests/e2e/mutations_lib.sh (every single-token edit of a
# cached plan: the job runs it to the plain run's output, or refuses it in
# one message and still ends with that output) on a plan that offloads
# buffers to pinned host memory (offload, its eviction, prefetch, await:
# plan version 3) beside rebuilds by replay.
# SWEEP_STRIDE=K tries every K-th edit (make test: 4; make check-faults:
# every one).
. tests/e2e/mutations_lib.sh
STRIDE=${SWEEP_STRIDE:-4}
T="$TR/mlp --layers 1 --hidden 128 --batch 128 --iters 24"
BUDGET=75%
MUT_ENV=REMAT_OFFLOAD=1
MUST="offload prefetch await replay"
mutation_sweep
echo "run_plan_mutations_offload: ok ($ran edits still valid plans, $refused refused in one" \
	"message ($sealed_here sealed here: remat-plan's reader refuses them), 4 with their old" \
	"checksum refused)"
