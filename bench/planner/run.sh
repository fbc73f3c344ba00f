#!/bin/sh
# Planner benchmark (run by `make bench` from the repo root): DTR's
# PyTorch logs against DTR's own figures, Checkmate graphs against the
# published optima, then synthetic graphs, the trainers' graphs, the
# honest-refusal check on every graph and the sweep.  Each row is followed
# by the same row of bench/planner/previous.txt (an earlier run's output).
# BUILD may be overridden like in the Makefile.  BENCH_DATA (make bench
# BENCH_DATA=DIR) is the folder that holds DTR's graphs (dtr-graphs/) and
# Checkmate's (checkmate-graphs/), which the repository does not carry:
# empty, the default, what needs them is said not run, with the reason.
BUILD=${BUILD:-build}
data=${BENCH_DATA:-}
bin=$BUILD/bench/plan_bench
[ -x "$bin" ] || { echo "run.sh: $bin is missing (make $bin)"; exit 1; }
if [ -n "$data" ]; then
	for d in dtr-graphs checkmate-graphs; do
		[ -d "$data/$d" ] || { echo "run.sh: BENCH_DATA=$data holds no $d/"; exit 1; }
	done
	"$bin" dtr "$data/dtr-graphs" || exit 1
	"$bin" checkmate "$data/checkmate-graphs" || exit 1
else
	echo "not run: DTR's and Checkmate's graphs (their planners' figures, honest refusals and" \
		"sweeps): BENCH_DATA is empty; make bench BENCH_DATA=DIR, DIR holding dtr-graphs/" \
		"and checkmate-graphs/"
fi
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
		sim/bin/simrun $BUILD/trainers/$t --iters 5 >/dev/null || exit 1
	"$BUILD/remat-report" --export-graph "$tmp/$name.json" "$tmp/$name" >/dev/null || exit 1
done
"$bin" files "$tmp/mlp.json" "$tmp/gpt.json" || exit 1

# Honest refusals on every graph of the benchmark (the trainers' alone
# without BENCH_DATA): the smallest budget a planner reports is one it
# then meets.  The dtr-graphs folder also holds each graph's *.stats.json
# (DTR's figures), which are no graphs.
set --
[ -z "$data" ] || for g in "$data"/dtr-graphs/*.json "$data"/checkmate-graphs/*.json; do
	case $g in *.stats.json) ;; *) set -- "$@" "$g" ;; esac
done
PLANNERS="ilp greedy dtr" TIME_LIMIT=5 sh tests/planner/min_budget.sh \
	"$@" "$tmp/mlp.json" "$tmp/gpt.json" || exit 1

# The whole budget curve (remat-plan --sweep) on gpt's graph and DTR's two
# (with BENCH_DATA): its time (the limit is 55 s) and that it is monotone.
echo
echo "## remat-plan --sweep: the budget curve in one run"
for g in "$tmp/gpt.json" ${data:+"$data/dtr-graphs/transformer.json" "$data/dtr-graphs/resnet32.json"}; do
	t0=$(date +%s.%N)
	"$BUILD/remat-plan" "$g" --sweep 12 --plan-version 2 --time-limit 55 -o "$tmp/sweep.json" \
		>"$tmp/sweep.out" 2>&1 || { cat "$tmp/sweep.out"; exit 1; }
	t1=$(date +%s.%N)
	python3 - "$tmp/sweep.json" "$g" "$t0" "$t1" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
p = s["points"]
mono = all(a["recompute_ns"] <= b["recompute_ns"] for a, b in zip(p, p[1:]))
it = max(s["iteration_ns"], 1)
print("%-16s %6.1f s, %2d budgets down to %.3f of the peak, %s: %s" % (
    sys.argv[2].split("/")[-1], float(sys.argv[4]) - float(sys.argv[3]), len(p),
    s["min_peak"] / s["baseline_peak"], "monotone" if mono else "NOT MONOTONE",
    " ".join("%.2f%%" % (100.0 * q["recompute_ns"] / it) for q in p)))
sys.exit(0 if mono else 1)
PY
done
