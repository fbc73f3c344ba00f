# Sourced by tests/e2e/fault_*.sh and run_replay_errors.sh: fault sweeps in
# the style of SQLite's fault-injection tests, every N tried.  For one
# trainer, in trace and in run mode, the N-th device allocation
# (SIMCUDA_FAIL_ALLOC) and the N-th kernel launch (SIMCUDA_FAIL_LAUNCH, a
# sticky kernel fault) fail, for every N up to the run's last such event,
# each N a child forked from one run (sim/README.md, "Fault sweeps"): a
# process per N repeats the run's prefix each time, and the prefix is what
# costs (the profiled iteration is 0.5 s of mlp's 0.6 s in trace mode), so
# such a sweep sampled every 7th N; forked, every N costs about as much.
#
# libremat's own allocations and launches count toward N, so each run is
# judged by its class of outcome, never against the plain run at the same N
# (tests/e2e/fault_check.py judges a sweep's runs in one process):
#   - exit 0: the output is the plain run's without a fault, byte for byte;
#   - otherwise the program reports the device error itself, and every loss
#     it printed is the plain run's;
# and always: at most one libremat message, no simulator fault (unmapped
# memory touched), no signal, and a trace written is a whole one.  A few N
# (SWEEP_SAMPLES, spread over the range) run again in a process of their
# own, which must end as the forked child did: exit status and output
# (stderr may name another call that met the error first: the device's
# progress at the fault differs from run to run, in fresh runs too).  Run
# mode reads a copy of the plan cache, which no run may change.
#
# Measured (CPU seconds, 2 loaded cores): fault_mlp.sh, every 7th N a
# process each, 178 runs, 39 s; every N forked, 1210 runs, 47 s (32 s of it
# run mode's allocation faults, which libremat recovers from: 161 children
# that go on to the end); every N a process each, 170 s more (make
# check-faults; every forked child ended as its fresh process did).
# fault_gpt.sh 93 s -> 99 s (every N: 1946 runs); run_replay_errors.sh,
# already every N a process each, 142 s -> 20 s.
#
# SWEEP_STRIDE=K: every K-th N also in a process of its own (make
# check-faults: every N).  SWEEP_FORK=0: no forked sweep, processes of their
# own at every SWEEP_STRIDE-th N only, until one fires no fault (the
# sanitizer passes: a sanitizer's threads, TSan's, do not survive a fork).
. tests/e2e/run_lib.sh
SWEEP_FORK=${SWEEP_FORK:-1}
SWEEP_SAMPLES=${SWEEP_SAMPLES:-2}
SWEEP_BUDGET=${SWEEP_BUDGET:-80%}
DEVICE_ERROR="LAUNCH_FAILED|LaunchFailure|CUBLAS_STATUS_EXECUTION_FAILED|out of device memory|OUT_OF_MEMORY|MemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED"

# sweep_run DIR VALUE ENV...: the trainer ($SWEEP_TRAINER) with ENV, NAME=N
# in ENV set to VALUE, in DIR (its working directory: its trace goes to
# DIR/s.d); stdout, stderr, report and status there, as a sweep's child
# has them.
sweep_run() {
	_dir=$1 _val=$2
	shift 2
	mkdir -p "$_dir"
	_rc=0
	# shellcheck disable=SC2046,SC2086
	(cd "$_dir" && exec env $(echo "$@" | sed "s/=N\b/=$_val/g") REMAT_TRACE_DIR=s.d \
		SIMCUDA_SWEEP_DIR=. SIMCUDA_REPORT_FILE=report "$SIMRUN" $SWEEP_TRAINER \
		>stdout 2>stderr) || _rc=$?
	echo $_rc >"$_dir/status"
}

# sweep_runs DIR FIRST LAST STRIDE ENV...: the runs of one sweep into DIR,
# for N from FIRST to LAST (empty: to the run's last event): forked, and in
# processes of their own at every STRIDE-th N (0: SWEEP_SAMPLES of them).
# With SWEEP_FORK=0 only the latter (0: every N), up to the first run
# without a fault when LAST is empty.
sweep_runs() {
	_s=$1 _first=$2 _last=$3 _stride=$4
	shift 4
	rm -rf "$_s"
	if [ "$SWEEP_FORK" = 1 ]; then
		sweep_run "$_s" "$_first-$_last" "$@"
		_end=$((_first + $(find "$_s" -mindepth 1 -maxdepth 1 -name '[0-9]*' | wc -l) - 1))
		if [ "$_stride" -gt 0 ]; then
			_ns=$(seq "$_first" "$_stride" "$_end")
		else
			_ns=$(seq 1 "$SWEEP_SAMPLES" | awk -v a="$_first" -v b="$_end" -v k="$SWEEP_SAMPLES" \
				'{ n = a + int($1 * (b - a + 1) / (k + 1)); if (n <= b) print n }')
		fi
		for _n in $_ns; do
			sweep_run "$_s/fresh/$_n" "$_n" "$@"
		done
		return 0
	fi
	[ "$_stride" -gt 0 ] || _stride=1
	_n=$_first
	while [ -z "$_last" ] || [ "$_n" -le "$_last" ]; do
		sweep_run "$_s/fresh/$_n" "$_n" "$@"
		# Up to the first run without a fault (or without a report, which
		# fault_check.py reports).
		[ -n "$_last" ] || grep -q "faults_injected=[1-9]" "$_s/fresh/$_n/report" 2>/dev/null ||
			break
		_n=$((_n + _stride))
	done
}

# sweep_check DIR LABEL [ARG...]: fault_check.py on the runs in DIR (ARGs
# are its options), then check_trace on the traces they wrote.
sweep_check() {
	_sd=$1 _sl=$2
	shift 2
	python3 tests/e2e/fault_check.py "$_sd" --plain "$tmp/plain.out" --errors "$DEVICE_ERROR" \
		--label "$_sl" --traces "$tmp/traces" "$@" || exit 1
	# shellcheck disable=SC2046
	check_trace $(cat "$tmp/traces")
}

# sweep_one LABEL ENV...: every N (NAME=N in ENV) from 1, judged.  Run mode
# reads a copy of the plan cache, which no run may change.
sweep_one() {
	_label=$1
	shift
	rm -rf "$tmp/s.cache"
	cp -r "$tmp/cache" "$tmp/s.cache"
	sweep_runs "$tmp/sweep" 1 "" "${SWEEP_STRIDE:-0}" "$@"
	sweep_check "$tmp/sweep" "$_label"
	diff -r "$tmp/cache" "$tmp/s.cache" >/dev/null ||
		fail "$_label: a run changed the plan cache, which the runs after it read: $(diff -r "$tmp/cache" "$tmp/s.cache" | head -n 3)"
}

# sweep TRAINER ARGS...: the four sweeps (trace and run mode, allocation and
# launch faults) on one trainer.
sweep() {
	_tr=$1
	shift
	# The runs have working directories of their own.
	case $_tr in /*) ;; *) _tr=$(pwd)/$_tr ;; esac
	SWEEP_TRAINER="$_tr $*"
	export SIMCUDA_GRANULARITY=4K SIMCUDA_MEMORY=256M
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
