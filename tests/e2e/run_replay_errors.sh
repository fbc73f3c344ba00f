#!/bin/sh
# A launch that fails inside a replay iteration (SIMCUDA_FAIL_LAUNCH=N, N
# swept over one such iteration, libremat's own rebuild launches counted):
# the job either ends with the device error, never having printed a loss
# the plain run does not print, or, where the fault hit libremat's rebuild
# and it could do it again (a launch refused for memory, not a kernel
# fault, which poisons the context), ends with output identical to the
# plain run and one message.  Every N in iteration 6 forked from one run
# (tests/e2e/fault_lib.sh, where its checks are).
. tests/e2e/fault_lib.sh
# Faults in libremat's replays need a plan that replays: recompute only.
export REMAT_OFFLOAD=0
run plain -- "$TR/mlp" --iters 8
run fill REMAT_BUDGET=80% REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/fill.d" "REMAT_CACHE_DIR=$tmp/cache" \
	LD_PRELOAD="$PRELOAD" -- "$TR/mlp" --iters 8
same plain fill
grep -q "applied from iteration" "$tmp/fill.err" || fail "no plan: $(tail -n 3 "$tmp/fill.err")"
# The launches of iteration 6, a replay iteration: those of 6 iterations
# past those of 5, the cached plan applied in both and run mode counting
# one more iteration in the second (the profiled iteration's second
# launches and the warm-up decide where they fall).
for i in 5 6; do
	run cached$i REMAT_BUDGET=80% REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/c$i.d" "REMAT_CACHE_DIR=$tmp/cache" \
		"SIMCUDA_REPORT_FILE=$tmp/c$i.sim" LD_PRELOAD="$PRELOAD" -- "$TR/mlp" --iters $i
done
first=$(($(sed -n 's/.* kernels=\([0-9]*\).*/\1/p' "$tmp/c5.sim") + 1))
last=$(sed -n 's/.* kernels=\([0-9]*\).*/\1/p' "$tmp/c6.sim")
[ "$last" -gt "$first" ] || fail "no launches in iteration 6: $first..$last"
replays() { sed -n 's/.*run mode: \([0-9]*\) iterations,.*/\1/p' "$tmp/$1.err"; }
[ "$(replays cached6)" = $(($(replays cached5) + 1)) ] ||
	fail "iteration 6 is not a replay iteration: $(grep 'run mode:' "$tmp/cached6.err")"

# replay_sweep KIND ERRORS [STRIDE]: SIMCUDA_FAIL_LAUNCH_ERROR=KIND at every N
# through the replay iteration (STRIDE: also every STRIDE-th N in a process
# of its own; with SWEEP_FORK=0 only those); a job that fails must name one
# of ERRORS (grep -E).  Sets recovered: the jobs that ended as the plain
# run did after a rebuild was done again (one message).
replay_sweep() {
	SWEEP_TRAINER="$(pwd)/$TR/mlp --iters 8"
	sweep_runs "$tmp/$1" "$first" "$last" "${3:-0}" SIMCUDA_FAIL_LAUNCH=N "SIMCUDA_FAIL_LAUNCH_ERROR=$1" \
		REMAT_BUDGET=80% "REMAT_CACHE_DIR=$tmp/cache" LD_PRELOAD="$PRELOAD"
	sweep_check "$tmp/$1" "run_replay_errors: $1" --errors "$2" --first "$first" --last "$last" \
		--tag "rebuild before op" --summary "$tmp/$1.line"
	recovered=$(sed -n 's/.*, \([0-9]*\) of the clean ones tagged.*/\1/p' "$tmp/$1.line")
}

# A kernel fault poisons the context, as on a GPU: nothing can be done
# again, every job ends with the error (cuBLAS reports a failed GEMM as
# EXECUTION_FAILED).  REPLAY_FAULT_STRIDE: the sanitizer passes' stride
# (tests/tests.mk).
replay_sweep fault "LAUNCH_FAILED|LaunchFailure|CUBLAS_STATUS_EXECUTION_FAILED" "${REPLAY_FAULT_STRIDE:-0}"
[ $recovered = 0 ] || fail "fault: $recovered rebuilds done again in a poisoned context"
# A launch refused for memory is transient: where it hit libremat's own
# rebuild, the rebuild is done again.
replay_sweep oom "OUT_OF_MEMORY|MemoryAllocation|out of device memory|CUBLAS_STATUS_EXECUTION_FAILED"
[ $recovered -gt 0 ] || fail "no fault hit a rebuild (the sweep missed the replays)"
echo "run_replay_errors: ok"
