#!/bin/sh
# The proofs' second launches cannot hang a kernel that synchronizes its
# blocks through memory (REMAT_WRITE_PROOF, profiler/delta.c).  mlp
# --blas-workspace gives cuBLAS a workspace from the program's own pool,
# and the simulated cuBLAS runs its weight gradients as split-K GEMMs: a
# memset zeroes a counter in the workspace, and the reducing split waits
# until the other splits have counted themselves in (the simulator aborts
# where a GPU would spin forever).  With REMAT_WRITE_PROOF=1, which
# perturbs every tested byte, the profile sets the counter to its
# complement and relaunches the kernel: the simulator reports the spin, as
# the H100 hung on a cuBLASLt GEMM.  By default only words that held data
# are perturbed: the trace is written, regions of the pool are proven
# dead across the boundary, and run mode at the smallest budget remat-plan
# reaches (version 2) is identical to the run without libremat, with
# evictions, its rebuilds verified bit-identical and the physical peak
# of its replay iterations within the budget.
. tests/e2e/run_lib.sh
set -- "$TR/mlp" --alloc caching --blas-workspace 4194304 --layers 4 --batch 1024 --iters 12
run base -- "$@"
grep -q "would spin forever" "$tmp/base.err" && fail "the plain run spun"
rc=0
env REMAT_MODE=trace REMAT_WRITE_PROOF=1 "REMAT_TRACE_DIR=$tmp/all.d" LD_PRELOAD="$PRELOAD" \
	"$SIMRUN" "$@" >"$tmp/all.out" 2>"$tmp/all.err" || rc=$?
[ "$rc" != 0 ] && grep -q "cublas_sgemm_splitk_kernel.*would spin forever" "$tmp/all.err" ||
	fail "REMAT_WRITE_PROOF=1 did not spin the split-K GEMM (exit $rc): $(tail -n 2 "$tmp/all.err")"
read -r c p m <<EOT
$(budgets mlp "$@")
EOT
same base mlp-trace
check_trace "$tmp/mlp-trace.d"
python3 - "$tmp/mlp-trace.d/trace.json" <<'PY' || fail "the trace"
import json, sys
t = json.load(open(sys.argv[1]))
assert any(o["name"] == "cublas_sgemm_splitk_kernel" for o in t["ops"]), "no split-K GEMM"
dead = [b for b in t["buffers"] if b.get("region") and b.get("dead_across_boundary")]
assert len(dead) >= 8, f"{len(dead)} regions dead across the boundary"
PY
"$PLAN" "$tmp/mlp-trace.d" --budget 1 --plan-version 2 >"$tmp/min2.txt" 2>&1 || true
m=$(sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p' "$tmp/min2.txt")
[ -n "$m" ] || fail "remat-plan gave no smallest peak: $(tail -n 2 "$tmp/min2.txt")"
[ "$m" -lt $((p * 80 / 100)) ] || fail "the smallest peak $m is not below 80% of $p"
prefill run "$tmp/mlp-trace.d" "$m" --plan-version 2
RUN_ENV=REMAT_VERIFY=1
run_budget run base "$m" "$@"
[ "$_ev" != "${_ev#0 }" ] && fail "no evictions ($_ev)"
verified run
echo "run_spin_safe: ok (REMAT_WRITE_PROOF=1 spins; by default peak $p -> budget $m)"
