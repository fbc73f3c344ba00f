#!/bin/sh
# run-tests.sh RESULTS_DIR GROUP TEST... [--not-run REASON TEST...] — runs
# each test (a binary or a .sh script) from the repository root with a
# time limit, prints one line per test, keeps its output in
# RESULTS_DIR/GROUP/NAME.log, and records pass/fail counts for
# tests/summary.sh.  Tests after --not-run are not run (what they need is
# missing, REASON says what): each is reported and recorded as not run,
# never as passed.
set -u
results=$1 group=$2
shift 2
mkdir -p "$results/$group"
: >"$results/$group.passed"
: >"$results/$group.failed"
: >"$results/$group.notrun"
limit=${TEST_TIMEOUT:-300}
while [ $# -gt 0 ]; do
	t=$1
	shift
	if [ "$t" = --not-run ]; then
		reason=$1
		shift
		for t in "$@"; do
			echo "NOT RUN  $t ($reason)"
			echo "$t ($reason)" >>"$results/$group.notrun"
		done
		break
	fi
	name=$(echo "$t" | tr '/' '_')
	log="$results/$group/$name.log"
	case "$t" in
	*.sh) cmd="sh $t" ;;
	*) cmd="$t" ;;
	esac
	start=$(date +%s)
	if timeout "$limit" $cmd >"$log" 2>&1; then
		echo "PASS  $t ($(($(date +%s) - start))s)"
		echo "$t" >>"$results/$group.passed"
	else
		rc=$?
		echo "FAIL  $t (exit $rc, $(($(date +%s) - start))s) — last lines of $log:"
		tail -n 15 "$log" | sed 's/^/    /'
		echo "$t" >>"$results/$group.failed"
	fi
done
exit 0
