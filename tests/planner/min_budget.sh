#!/bin/sh
# Honest refusals: the smallest budget remat-plan reports for a budget it
# cannot meet is one the same planner then meets.  Usage:
#   min_budget.sh [GRAPH...]   (default: the fixtures; make bench passes
#                               every graph of the benchmark)
# PLANNERS (default "ilp greedy dtr chain") and TIME_LIMIT (seconds per
# run, default 10) may be set.  Run from the repo root.
BUILD=${BUILD:-build}
bin=$BUILD/remat-plan
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "min_budget.sh: $*"; exit 1; }
[ $# -gt 0 ] || set -- tests/planner/fixtures/trace-small
n=0
for g in "$@"; do
	for p in ${PLANNERS:-ilp greedy dtr chain}; do
		"$bin" "$g" --budget 1 --planner "$p" --time-limit "${TIME_LIMIT:-10}" \
			--plan-version 2 >"$tmp/out" 2>&1
		rc=$?
		[ $rc -eq 3 ] || fail "$g, $p, budget 1: exit $rc, want 3: $(cat "$tmp/out")"
		grep -q "cannot be met by planner $p" "$tmp/out" ||
			fail "$g: the refusal does not name planner $p: $(cat "$tmp/out")"
		grep -q "; try " "$tmp/out" || fail "$g, $p: no advice: $(cat "$tmp/out")"
		min=$(sed -n 's/.*the smallest budget it meets is \([0-9]*\) bytes.*/\1/p' "$tmp/out")
		[ -n "$min" ] || fail "$g, $p: no smallest budget in: $(cat "$tmp/out")"
		"$bin" "$g" --budget "$min" --planner "$p" --time-limit "${TIME_LIMIT:-10}" \
			--plan-version 2 -o "$tmp/p.json" >"$tmp/out2" 2>&1 ||
			fail "$g, $p: reported $min bytes as reachable, then refused it: $(cat "$tmp/out2")"
		n=$((n + 1))
	done
done
echo "min_budget.sh: $n reported budgets met again"
