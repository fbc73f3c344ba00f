#!/bin/sh
# run-tests.sh RESULTS_DIR GROUP TEST... — runs each test (a binary or a
# .sh script) from the repository root with a time limit, prints one line
# per test, keeps its output in RESULTS_DIR/GROUP/NAME.log, and records
# pass/fail counts for tests/summary.sh.
set -u
results=$1 group=$2
shift 2
mkdir -p "$results/$group"
: >"$results/$group.passed"
: >"$results/$group.failed"
limit=${TEST_TIMEOUT:-300}
for t in "$@"; do
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
