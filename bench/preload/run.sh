#!/bin/sh
# The preload's cost per kernel launch, side by side in one run: no preload,
# the preload with no REMAT_* variable (pass-through), and the preload in
# trace mode after its profile is done.  Run from the repository root.
set -eu
BUILD=${BUILD:-build}
N=${BENCH_LAUNCHES:-20000}
bin=$BUILD/bench/preload/launch_bench
mod=$BUILD/bench/preload/empty.so
lib=$(pwd)/$BUILD/libremat.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SIMCUDA_GRANULARITY=64K
measure() { # NAME ENV... : best ns per launch
	name=$1
	shift
	env "$@" tools/simrun "$bin" "$mod" "$N" >"$tmp/$name.out" 2>"$tmp/$name.err" || {
		echo "bench/preload: $name run failed: $(tail -n 3 "$tmp/$name.err")" >&2
		exit 1
	}
	awk '$1 == "ns_per_launch" { print $2 }' "$tmp/$name.out"
}
# The simulated device's own launch cost is noisy on a busy machine: the
# three configurations are interleaved, five processes each, best kept.
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
base="" pass="" trace=""
for i in 1 2 3 4 5; do
	base=$(min "$base" "$(measure none)")
	pass=$(min "$pass" "$(measure passthrough LD_PRELOAD="$lib")")
	trace=$(min "$trace" "$(measure trace LD_PRELOAD="$lib" REMAT_MODE=trace \
		REMAT_TRACE_DIR="$tmp/trace")")
done
[ -s "$tmp/trace/trace.json" ] || echo "bench/preload: note: trace mode wrote no trace (still detecting)"
echo "launch cost, best of 5x5 rounds of $N empty-kernel launches (simulated device):"
awk -v b="$base" -v p="$pass" -v t="$trace" 'BEGIN {
	printf "  %-34s %9.1f ns  %6.3fx\n", "no preload", b, 1
	printf "  %-34s %9.1f ns  %6.3fx\n", "preload, no REMAT_* (pass-through)", p, p / b
	printf "  %-34s %9.1f ns  %6.3fx\n", "preload, trace mode after profile", t, t / b
}'
