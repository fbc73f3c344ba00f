#!/bin/sh
# A launch that fails inside a replay iteration (SIMCUDA_FAIL_LAUNCH=N, N
# swept over one such iteration, libremat's own rebuild launches counted):
# the job either ends with the device error, never having printed a loss
# the plain run does not print, or, where the fault hit libremat's rebuild
# and it could do it again (a launch refused for memory, not a kernel
# fault, which poisons the context), ends with output identical to the
# plain run and one message.
. tests/e2e/run_lib.sh
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

# sweep KIND ERRORS [STRIDE]: SIMCUDA_FAIL_LAUNCH_ERROR=KIND at every
# (STRIDE-th) N through the replay iterations; a job that fails must name
# one of ERRORS (grep -E).
sweep() {
	recovered=0 ended=0
	for n in $(seq "$first" "${3:-1}" "$last"); do
		rc=0
		env SIMCUDA_FAIL_LAUNCH=$n SIMCUDA_FAIL_LAUNCH_ERROR=$1 REMAT_BUDGET=80% \
			"REMAT_TRACE_DIR=$tmp/t$n.d" "REMAT_CACHE_DIR=$tmp/cache" \
			"SIMCUDA_REPORT_FILE=$tmp/f.sim" LD_PRELOAD="$PRELOAD" "$SIMRUN" "$TR/mlp" --iters 8 \
			>"$tmp/f.out" 2>"$tmp/f.err" || rc=$?
		grep -q "faults_injected=1" "$tmp/f.sim" || fail "$1 N=$n: no fault fired"
		if [ $rc = 0 ]; then
			cmp -s "$tmp/plain.out" "$tmp/f.out" ||
				fail "$1 N=$n: exit 0 with other output: $(diff "$tmp/plain.out" "$tmp/f.out" | head -n 4)"
			if grep -q "rebuild before op" "$tmp/f.err"; then
				[ "$(grep -c libremat: "$tmp/f.err")" = 1 ] ||
					fail "$1 N=$n: not one message: $(cat "$tmp/f.err")"
				recovered=$((recovered + 1))
			fi
		else
			grep -Eq "$2" "$tmp/f.err" ||
				fail "$1 N=$n: exit $rc without the device error: $(tail -n 3 "$tmp/f.err")"
			# Every loss printed is the plain run's.
			head -c "$(wc -c <"$tmp/f.out")" "$tmp/plain.out" | cmp -s - "$tmp/f.out" ||
				fail "$1 N=$n: printed a loss the plain run does not: $(diff "$tmp/plain.out" "$tmp/f.out" | head -n 4)"
			ended=$((ended + 1))
		fi
		grep -q "simcuda: fault" "$tmp/f.err" && fail "$1 N=$n: the simulator faulted: $(grep fault "$tmp/f.err")"
	done
	echo "run_replay_errors: $1: $recovered rebuilds done again, $ended jobs ended with the device error"
}

# A kernel fault poisons the context, as on a GPU: nothing can be done
# again, every job ends with the error (cuBLAS reports a failed GEMM as
# EXECUTION_FAILED).  Every N, or every REPLAY_FAULT_STRIDE-th (the
# sanitizer passes: tests/tests.mk).
sweep fault "LAUNCH_FAILED|LaunchFailure|CUBLAS_STATUS_EXECUTION_FAILED" "${REPLAY_FAULT_STRIDE:-1}"
[ $recovered = 0 ] || fail "fault: $recovered rebuilds done again in a poisoned context"
# A launch refused for memory is transient: where it hit libremat's own
# rebuild, the rebuild is done again.
sweep oom "OUT_OF_MEMORY|MemoryAllocation|out of device memory|CUBLAS_STATUS_EXECUTION_FAILED"
[ $recovered -gt 0 ] || fail "no fault hit a rebuild (the sweep missed the replays)"
echo "run_replay_errors: ok"
