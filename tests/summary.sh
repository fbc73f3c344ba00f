#!/bin/sh
# summary.sh RESULTS_DIR — the closing line of `make test`; exit 1 on any
# failure.  Tests that were not run are listed with the reason and counted
# apart: never as passed.
set -u
r=$1
p=$(cat "$r"/*.passed 2>/dev/null | wc -l)
f=$(cat "$r"/*.failed 2>/dev/null | wc -l)
n=$(cat "$r"/*.notrun 2>/dev/null | wc -l)
if [ "$f" -ne 0 ]; then
	echo "failed tests:"
	cat "$r"/*.failed | sed 's/^/  /'
fi
if [ "$n" -ne 0 ]; then
	echo "tests not run:"
	cat "$r"/*.notrun | sed 's/^/  /'
fi
echo "tests: $p passed, $f failed, $n not run"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
