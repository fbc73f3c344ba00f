#!/bin/sh
# bench/clock: libremat at 50% under two clock models side by side, from
# the repository root (`make bench` runs it).  For every trainer and way
# its activations live (--alloc), plain and with a plan (recompute only,
# REMAT_OFFLOAD=0, and with offload allowed), under SIMCUDA_DEVICE=h100
# (driver calls priced, kernels at H100 rates) and legacy (the clock before
# profiles): the simulated time per iteration, the overhead, and the memory
# driver calls per iteration by kind.  Per iteration = the difference of
# runs of A and B iterations applying a cached plan from the same
# iteration, over B - A.  Each model plans from its own trace.
set -eu
BUILD=${BUILD:-build}
LIB=$(pwd)/$BUILD/libremat.so
export SIMRUN=sim/bin/simrun # used by sim() in bench/sim_lib.sh
A=${BENCH_CLOCK_ITERS_A:-5}
B=${BENCH_CLOCK_ITERS_B:-9}
MLP_ARGS=${BENCH_RUN_MLP:---layers 4 --batch 1024}
GPT_ARGS=${BENCH_RUN_GPT:---layers 4 --batch 16}
ARENA_ARGS=${BENCH_RUN_ARENA:---batch 8 --seq 64}
ROWS=${BENCH_CLOCK_ROWS:-mlp/async mlp/caching mlp/vmm gpt/async gpt/caching gpt/vmm arena/own}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() {
	echo "bench/clock: $*" >&2
	exit 1
}

# sim NAME ENV... -- CMD..., field NAME KEY, wait_plan DIR PATTERN
. bench/sim_lib.sh

# per NAME KEY: KEY's growth per iteration from run NAME-A to NAME-B.
per() {
	awk -v a="$(field "$1-A" "$2")" -v b="$(field "$1-B" "$2")" -v n=$((B - A)) \
		'BEGIN { printf "%.1f", (b - a) / n }'
}
calls() { # NAME: the VMM calls per iteration, create/map/access/unmap/release
	echo "$(per "$1" vmm_create)/$(per "$1" vmm_map)/$(per "$1" vmm_set_access)/$(per "$1" vmm_unmap)/$(per "$1" vmm_release)" |
		sed 's/\.0//g'
}
# pair NAME ENV... -- CMD...: runs of A and B iterations (--iters appended).
pair() {
	_p=$1
	shift
	sim "$_p-A" "$@" --iters "$A"
	sim "$_p-B" "$@" --iters "$B"
}

echo "libremat at 50% of the peak under two clock models (simulated time per iteration, runs of"
echo "$A and $B iterations, 4 more with a pool; SIMCUDA_GRANULARITY=64K, the arena 4K):"
printf '%-12s %-7s %-9s | %11s %11s %9s | %-22s %-22s | %s\n' trainer clock plan "plain ns" "remat ns" \
	overhead "plain c/m/a/u/r" "libremat c/m/a/u/r" output
for row in $ROWS; do
	t=${row%/*} alloc=${row#*/}
	case $t in
	mlp) args="$MLP_ARGS --alloc $alloc" g=64K ;;
	gpt) args="$GPT_ARGS --alloc $alloc" g=64K ;;
	arena) args=$ARENA_ARGS g=4K ;;
	esac
	a0=$A b0=$B
	[ "$alloc" = async ] || A=$((a0 + 4)) B=$((b0 + 4))
	for model in h100 legacy; do
		E="SIMCUDA_DEVICE=$model SIMCUDA_GRANULARITY=$g"
		# shellcheck disable=SC2086
		pair plain $E -- "$BUILD/trainers/$t" $args
		base=$(per plain sim_time_ns)
		for off in 0 1; do
			cache=$tmp/cache-$t-$alloc-$model-$off
			R="$E LD_PRELOAD=$LIB REMAT_BUDGET=50% REMAT_LOG=1 REMAT_OFFLOAD=$off REMAT_CACHE_DIR=$cache REMAT_TRACE_DIR=$tmp/trace"
			# shellcheck disable=SC2086
			sim fill $R -- "$BUILD/trainers/$t" $args --iters "$A"
			wait_plan "$cache" "*.plan.json"
			# shellcheck disable=SC2086
			pair run $R -- "$BUILD/trainers/$t" $args
			fromA=$(sed -n 's/.*applied from iteration \([0-9]*\).*/\1/p' "$tmp/run-A.err")
			fromB=$(sed -n 's/.*applied from iteration \([0-9]*\).*/\1/p' "$tmp/run-B.err")
			note=
			[ -n "$fromB" ] && [ "$fromA" = "$fromB" ] ||
				note=" (plan applied from iteration '${fromA:-never}' and '${fromB:-never}': not comparable)"
			same=identical
			cmp -s "$tmp/plain-B.out" "$tmp/run-B.out" || same=DIFFERENT
			plan=recompute
			[ $off = 0 ] || plan=offload
			awk -v r="$t/$alloc" -v m=$model -v p=$plan -v b="$base" -v w="$(per run sim_time_ns)" \
				-v pc="$(calls plain)" -v rc="$(calls run)" -v s="$same$note" 'BEGIN {
				printf "%-12s %-7s %-9s | %11.0f %11.0f %+8.1f%% | %-22s %-22s | %s\n",
					r, m, p, b, w, 100 * (w / b - 1), pc, rc, s
			}'
		done
	done
	A=$a0 B=$b0
done
echo "(h100: every driver call costs host time (SIMCUDA_LAUNCH_NS, SIMCUDA_VMM_*_NS ...,"
echo " sim/README.md), cuMemUnmap and cuMemSetAccess wait for the device, kernels by their"
echo " work at H100 rates; legacy: calls free, kernels 2 us + their SIMCUDA_COST; c/m/a/u/r:"
echo " cuMemCreate/cuMemMap/cuMemSetAccess/cuMemUnmap/cuMemRelease per iteration, by anyone)"
