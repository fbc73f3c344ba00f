# Sourced by tests/e2e/fault_*.sh: a fault sweep in the style of SQLite's
# fault-injection tests.  For one trainer, in trace and in run mode, the
# N-th device allocation (SIMCUDA_FAIL_ALLOC) and the N-th kernel launch
# (SIMCUDA_FAIL_LAUNCH, a sticky kernel fault) fail, for N from 1 upward
# until a run ends without the fault firing (the simulator's
# faults_injected=0).  libremat's own allocations and launches count toward
# N, so each run is judged by its class of outcome, never against the plain
# run at the same N:
#   - exit 0: the output is the plain run's without a fault, byte for byte;
#   - otherwise the program reports the device error itself, and every loss
#     it printed is the plain run's;
# and always: at most one libremat message, no simulator fault (unmapped
# memory touched), no signal, and a trace written is a whole one.
#
# SWEEP_STRIDE=K tries every K-th N only (make test: 7; make check-faults:
# every N).
. tests/e2e/run_lib.sh
export SIMCUDA_GRANULARITY=4K SIMCUDA_MEMORY=256M
STRIDE=${SWEEP_STRIDE:-7}
SWEEP_BUDGET=${SWEEP_BUDGET:-80%}
DEVICE_ERROR="LAUNCH_FAILED|LaunchFailure|CUBLAS_STATUS_EXECUTION_FAILED|out of device memory|OUT_OF_MEMORY|MemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED"

# sweep_one LABEL ENV...: runs the trainer ($SWEEP_TRAINER) with ENV for
# N = 1, 1+STRIDE, ... until no fault fires; NAME=N in ENV is replaced.
# Prints "LABEL: R runs, C clean, E ended with the device error".
sweep_one() {
	_label=$1
	shift
	_n=1 _runs=0 _clean=0 _ended=0
	while :; do
		_rc=0
		rm -rf "$tmp/s.d" "$tmp/s.sim" "$tmp/s.cache"
		# A copy of the cache each time: a run must not change what the
		# next one starts from.
		cp -r "$tmp/cache" "$tmp/s.cache"
		# shellcheck disable=SC2046
		env $(echo "$@" | sed "s/=N\b/=$_n/g") "REMAT_TRACE_DIR=$tmp/s.d" \
			"SIMCUDA_REPORT_FILE=$tmp/s.sim" "$SIMRUN" $SWEEP_TRAINER \
			>"$tmp/s.out" 2>"$tmp/s.err" || _rc=$?
		_runs=$((_runs + 1))
		_at="$_label N=$_n"
		[ -s "$tmp/s.sim" ] || fail "$_at: exit $_rc without the simulator's report: $(tail -n 3 "$tmp/s.err")"
		! grep -q "simcuda: fault" "$tmp/s.err" || fail "$_at: the simulator faulted: $(grep fault "$tmp/s.err")"
		[ "$(grep -c '^libremat:' "$tmp/s.err")" -le 1 ] ||
			fail "$_at: more than one message: $(grep '^libremat:' "$tmp/s.err" | head -n 4)"
		if [ -e "$tmp/s.d/trace.json" ]; then
			check_trace "$tmp/s.d"
		fi
		if grep -q "faults_injected=0" "$tmp/s.sim"; then
			[ $_rc = 0 ] || fail "$_at: no fault fired, yet exit $_rc: $(tail -n 3 "$tmp/s.err")"
			cmp -s "$tmp/plain.out" "$tmp/s.out" || fail "$_at: no fault fired, yet other output"
			break
		fi
		if [ $_rc = 0 ]; then
			cmp -s "$tmp/plain.out" "$tmp/s.out" ||
				fail "$_at: exit 0 with other output: $(diff "$tmp/plain.out" "$tmp/s.out" | head -n 4)"
			_clean=$((_clean + 1))
		else
			[ $_rc -lt 128 ] || fail "$_at: killed by signal $((_rc - 128)): $(tail -n 3 "$tmp/s.err")"
			grep -Eq "$DEVICE_ERROR" "$tmp/s.err" ||
				fail "$_at: exit $_rc without the device error: $(tail -n 3 "$tmp/s.err")"
			head -c "$(wc -c <"$tmp/s.out")" "$tmp/plain.out" | cmp -s - "$tmp/s.out" ||
				fail "$_at: printed a loss the plain run does not: $(diff "$tmp/plain.out" "$tmp/s.out" | head -n 4)"
			_ended=$((_ended + 1))
		fi
		_n=$((_n + STRIDE))
	done
	echo "$_label: $_runs runs up to N=$_n, $_clean clean, $_ended ended with the device error"
}

# sweep TRAINER ARGS...: the four sweeps (trace and run mode, allocation and
# launch faults) on one trainer.
sweep() {
	SWEEP_TRAINER="$*"
	# shellcheck disable=SC2086
	run plain -- $SWEEP_TRAINER
	# Run mode from a cached plan, so that the plan applies within the run.
	# shellcheck disable=SC2086
	run warm REMAT_BUDGET=$SWEEP_BUDGET REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/warm.d" \
		"REMAT_CACHE_DIR=$tmp/cache" LD_PRELOAD="$PRELOAD" -- $SWEEP_TRAINER
	same plain warm
	await_plan warm "$tmp/cache" "$tmp/warm.d"
	# shellcheck disable=SC2086
	run cached REMAT_BUDGET=$SWEEP_BUDGET REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/cached.d" \
		"REMAT_CACHE_DIR=$tmp/cache" LD_PRELOAD="$PRELOAD" -- $SWEEP_TRAINER
	same plain cached
	grep -q "applied from iteration" "$tmp/cached.err" ||
		fail "no plan applied from the cache: $(grep libremat "$tmp/cached.err" | tail -n 3)"
	for kind in ALLOC LAUNCH; do
		sweep_one "trace $kind" SIMCUDA_FAIL_$kind=N REMAT_MODE=trace LD_PRELOAD="$PRELOAD"
		# A planner that fails at once: a run that misses the cache ends
		# with one message, and leaves no planner behind.
		sweep_one "run $kind" SIMCUDA_FAIL_$kind=N REMAT_BUDGET=$SWEEP_BUDGET \
			"REMAT_CACHE_DIR=$tmp/s.cache" REMAT_PLANNER=/bin/false LD_PRELOAD="$PRELOAD"
	done
}
