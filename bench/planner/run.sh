#!/bin/sh
# Planner benchmark (run by `make bench` from the repo root): Checkmate
# graphs against the published optima, then synthetic graphs.
# BUILD and SHARED may be overridden like in the Makefile.
BUILD=${BUILD:-build}
SHARED=${SHARED:-../shared}
bin=$BUILD/bench/plan_bench
[ -x "$bin" ] || { echo "run.sh: $bin is missing (make $bin)"; exit 1; }
"$bin" checkmate "$SHARED/benchmarks/checkmate-graphs" || exit 1
"$bin" generated || exit 1
