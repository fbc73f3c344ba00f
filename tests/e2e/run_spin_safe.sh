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
# the H100 hung on a cuBLASLt GEMM; the process dies inside the second
# launch, and the next run of the program leaves the proofs off (unless
# REMAT_WRITE_PROOF is set), saying so once.  By default only words that held data
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
env REMAT_MODE=trace REMAT_WRITE_PROOF=1 "REMAT_TRACE_DIR=$tmp/all.d" \
	"REMAT_CACHE_DIR=$tmp/hung.cache" LD_PRELOAD="$PRELOAD" \
	"$SIMRUN" "$@" >"$tmp/all.out" 2>"$tmp/all.err" || rc=$?
[ "$rc" != 0 ] && grep -q "cublas_sgemm_splitk_kernel.*would spin forever" "$tmp/all.err" ||
	fail "REMAT_WRITE_PROOF=1 did not spin the split-K GEMM (exit $rc): $(tail -n 2 "$tmp/all.err")"
# The process died inside a second launch: its marker names the launch,
# and the next run of the program leaves the proofs off unless told
# otherwise (profiler/proof_guard.c).
set -- "$tmp"/hung.cache/proof-launch-*
[ $# = 1 ] && [ -f "$1" ] || fail "no marker of the hung launch in $tmp/hung.cache: $*"
grep -q "^op [0-9]*, kernel cublas_sgemm_splitk_kernel$" "$1" || fail "the marker says: $(cat "$1")"
marker=$1
set -- "$TR/mlp" --alloc caching --blas-workspace 4194304 --layers 4 --batch 1024 --iters 12
run after REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/after.d" "REMAT_CACHE_DIR=$tmp/hung.cache" \
	LD_PRELOAD="$PRELOAD" -- "$@"
same base after
grep -q "ended inside a proof's second launch (op [0-9]*, kernel cublas_sgemm_splitk_kernel): the proofs stay off" \
	"$tmp/after.err" || fail "the run after the hang did not say the proofs stay off: $(tail -n 2 "$tmp/after.err")"
[ "$(grep -c libremat "$tmp/after.err")" = 1 ] || fail "more than one message: $(cat "$tmp/after.err")"
[ -f "$marker" ] || fail "the marker went away"
# Told to, it proves again (data words: no spin), and leaves no marker of
# its own.
run told REMAT_MODE=trace REMAT_WRITE_PROOF=data "REMAT_TRACE_DIR=$tmp/told.d" \
	"REMAT_CACHE_DIR=$tmp/hung.cache" LD_PRELOAD="$PRELOAD" -- "$@"
same base told
! grep -q libremat "$tmp/told.err" || fail "REMAT_WRITE_PROOF=data said: $(cat "$tmp/told.err")"
[ "$(ls "$tmp/hung.cache" | grep -c proof-launch)" = 1 ] || fail "markers left: $(ls "$tmp/hung.cache")"
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
