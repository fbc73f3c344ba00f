#!/bin/sh
# run-test.sh RESULTS_DIR GROUP TEST — runs one test (a binary or a .sh
# script) from the repository root with a time limit (TEST_TIMEOUT, 600 s:
# a hang's limit, for a machine shared two ways or more, not a speed check),
# prints one line with its wall and CPU time (the CPU time of the processes
# it waited for: what it costs a loaded machine), keeps its output in
# RESULTS_DIR/GROUP/NAME.log and records it in GROUP.passed or GROUP.failed
# (one line appended: tests run side by side append to the same files).
#
# Each test gets a directory of its own for TMPDIR and XDG_CACHE_HOME, so
# that tests run side by side (TEST_JOBS, tests/run-tests.sh) never share a
# temporary file or the default plan cache, and none touches the user's.
set -u
results=$1 group=$2 t=$3
name=$(echo "$t" | tr '/' '_')
log="$results/$group/$name.log"
own=$(mktemp -d "${TMPDIR:-/tmp}/remat-test.XXXXXX") && mkdir "$own/tmp" "$own/cache" || exit 1
case "$t" in
*.sh) cmd="sh $t" ;;
*) cmd="$t" ;;
esac
start=$(date +%s)
rc=0
TMPDIR=$own/tmp XDG_CACHE_HOME=$own/cache timeout "${TEST_TIMEOUT:-600}" $cmd >"$log" 2>&1 || rc=$?
# The CPU seconds of the children waited for: the second line of `times`
# (run by this shell, not a subshell, which has no children).
times >"$own/times"
took="$(($(date +%s) - start))s, cpu $(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
	printf "%.1f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$own/times")s"
rm -rf "$own"
if [ $rc = 0 ]; then
	echo "PASS  $t ($took)"
	echo "$t" >>"$results/$group.passed"
else
	# One write, so that lines of tests run side by side do not mix.
	printf 'FAIL  %s (exit %d, %s) — last lines of %s:\n%s\n' "$t" $rc "$took" "$log" \
		"$(tail -n 15 "$log" | sed 's/^/    /')"
	echo "$t" >>"$results/$group.failed"
fi
exit 0
