#!/bin/sh
# bench/profile: what the one profiled iteration costs, in simulated time,
# for mlp, gpt and arena (llm.c's way: every activation in one arena, so
# each kernel references megabytes it mostly does not touch) at the sizes
# bench/run uses: the profiled iteration's
# time over a normal iteration's.  Write sets are found from host copies
# of every buffer a kernel or graph launch references, before and after
# it, on a stream of libremat's own (docs/trace-format.md, "Host copies,
# not content hashes").  Goal: within 3x, with the default, whose proofs
# launch kernels a second time (with copies to the device and back around
# each).  Beside it, labelled, the same with REMAT_WRITE_PROOF=0 (no
# second launches).
#
# Simulated time is deterministic.  A normal iteration's time is the
# difference of two plain runs with different --iters over the difference
# in iterations; the profiled iteration's is that plus what a traced run
# (REMAT_MODE=trace: one iteration profiled, nothing else changed) adds to
# the plain run of the same length.
set -eu
BUILD=${BUILD:-build}
LIB=$(pwd)/$BUILD/libremat.so
A=${BENCH_PROFILE_ITERS_A:-5}
B=${BENCH_PROFILE_ITERS_B:-9}
MLP_ARGS=${BENCH_RUN_MLP:---layers 4 --batch 1024}
GPT_ARGS=${BENCH_RUN_GPT:---layers 4 --batch 16}
ARENA_ARGS=${BENCH_RUN_ARENA:---batch 8 --seq 64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SIMCUDA_GRANULARITY=64K

die() {
	echo "bench/profile: $*" >&2
	exit 1
}

# sim NAME ENV... -- CMD..., field NAME KEY
. bench/sim_lib.sh

echo "the profiled iteration's simulated time over a normal iteration's (goal: within 3x)"
worst=0
for t in mlp gpt arena; do
	case $t in
	mlp) args=$MLP_ARGS ;;
	gpt) args=$GPT_ARGS ;;
	*) args=$ARENA_ARGS ;;
	esac
	# shellcheck disable=SC2086
	sim $t-a -- "$BUILD/trainers/$t" --iters "$A" $args
	# shellcheck disable=SC2086
	sim $t-b -- "$BUILD/trainers/$t" --iters "$B" $args
	# shellcheck disable=SC2086
	sim $t-p REMAT_MODE=trace REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/$t.d" \
		LD_PRELOAD="$LIB" -- "$BUILD/trainers/$t" --iters "$B" $args
	# shellcheck disable=SC2086
	sim $t-q REMAT_MODE=trace REMAT_LOG=1 REMAT_WRITE_PROOF=0 "REMAT_TRACE_DIR=$tmp/$t-q.d" \
		LD_PRELOAD="$LIB" -- "$BUILD/trainers/$t" --iters "$B" $args
	a=$(field $t-a sim_time_ns) b=$(field $t-b sim_time_ns) p=$(field $t-p sim_time_ns)
	q=$(field $t-q sim_time_ns)
	for r in p q; do
		grep -q "write sets: host copies on a stream of libremat's own" "$tmp/$t-$r.err" ||
			die "$t-$r: no host copies on a stream of its own: $(grep 'write sets' "$tmp/$t-$r.err")"
		grep -q "trace written" "$tmp/$t-$r.err" || die "$t-$r: no iteration profiled"
		cmp -s "$tmp/$t-b.out" "$tmp/$t-$r.out" || die "$t-$r: the traced run printed other bytes"
	done
	# what the default's profile moved and relaunched (its REMAT_LOG=1 line)
	ws=$(sed -n 's/.*write sets: [0-9]* host copies ([0-9]* page-locked), \([0-9.]*\) MB; \([0-9]*\) second launches.*/\1 \2/p' \
		"$tmp/$t-p.err" | tail -n 1)
	[ -n "$ws" ] || die "$t-p: no write sets line: $(grep 'write sets' "$tmp/$t-p.err")"
	# shellcheck disable=SC2086
	python3 - "$t $args" "$a" "$b" "$p" "$q" "$A" "$B" $ws <<'PY'
import sys
name, a, b, p, q, ia, ib = sys.argv[1], *map(int, sys.argv[2:8])
mb, launches = float(sys.argv[8]), int(sys.argv[9])
it = (b - a) / (ib - ia)
prof = it + (p - b)
proof = it + (q - b)
print(f"  {name:28s} normal {it / 1000:9.1f} us  profiled {prof / 1000:9.1f} us  "
      f"ratio {prof / it:5.2f}x  {'ok' if prof <= 3 * it else 'OVER 3x'}  "
      f"(REMAT_WRITE_PROOF=0: {proof / 1000:9.1f} us, {proof / it:5.2f}x); "
      f"{mb:.1f} MB of host copies, {launches} second launches")
PY
done
