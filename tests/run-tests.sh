#!/bin/sh
# run-tests.sh RESULTS_DIR GROUP TEST... [--not-run REASON TEST...] — runs
# each test (tests/run-test.sh: a time limit, one line per test, its output
# in RESULTS_DIR/GROUP/NAME.log) and records pass/fail counts for
# tests/summary.sh.  TEST_JOBS=N runs N at a time (1 unless given), in the
# order given: list the longest first.  Tests after a --not-run are not run
# (what they need is missing, or why not, REASON says): each is reported and
# recorded as not run, never as passed.
set -u
results=$1 group=$2
shift 2
rm -rf "${results:?}/$group"
mkdir -p "$results/$group"
: >"$results/$group.passed"
: >"$results/$group.failed"
: >"$results/$group.notrun"
run="" reason=""
while [ $# -gt 0 ]; do
	t=$1
	shift
	if [ "$t" = --not-run ]; then
		reason=$1
		shift
	elif [ -n "$reason" ]; then
		echo "NOT RUN  $t ($reason)"
		echo "$t ($reason)" >>"$results/$group.notrun"
	else
		run="$run $t"
	fi
done
# Test names are paths without blanks (make's lists).
# shellcheck disable=SC2086
printf '%s\n' $run | xargs -r -P "${TEST_JOBS:-1}" -n 1 sh tests/run-test.sh "$results" "$group"
exit 0
