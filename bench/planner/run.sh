#!/bin/sh
# Planner benchmark (run by `make bench` from the repo root): DTR's
# PyTorch logs against DTR's own figures, Checkmate graphs against the
# published optima, then synthetic graphs.
# BUILD and SHARED may be overridden like in the Makefile.
BUILD=${BUILD:-build}
SHARED=${SHARED:-../shared}
bin=$BUILD/bench/plan_bench
[ -x "$bin" ] || { echo "run.sh: $bin is missing (make $bin)"; exit 1; }
"$bin" dtr "$SHARED/benchmarks/dtr-graphs" || exit 1
"$bin" checkmate "$SHARED/benchmarks/checkmate-graphs" || exit 1
"$bin" generated || exit 1

# The trainers' own graphs: trace one iteration under libremat, export it
# as graph JSON with remat-report, plan that file.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SIMCUDA_GRANULARITY=64K
for t in "mlp --layers 4 --batch 1024" "gpt --layers 4 --batch 16"; do
	name=${t%% *}
	# shellcheck disable=SC2086 # $t holds the trainer and its flags
	LD_PRELOAD=$(pwd)/$BUILD/libremat.so REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/$name \
		tools/simrun $BUILD/trainers/$t --iters 5 >/dev/null || exit 1
	"$BUILD/remat-report" --export-graph "$tmp/$name.json" "$tmp/$name" >/dev/null || exit 1
done
"$bin" files "$tmp/mlp.json" "$tmp/gpt.json" || exit 1
