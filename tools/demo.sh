#!/bin/sh
# make demo: a job that does not fit a small device, then the same command
# under libremat on that device, inside a budget smaller than the device:
# identical losses, the plan cache on a rerun, and remat-report of the run.
# Everything runs on the simulated device (sim/bin/simrun); `make demo` builds
# what it needs first.
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
SIMRUN=sim/bin/simrun
LIB=$B/libremat.so
JOB="$B/trainers/gpt --layers 4 --batch 16 --iters 10"
SMALL=8M  # the small device
BUDGET=7M # about half of what one iteration needs
export SIMCUDA_GRANULARITY=${SIMCUDA_GRANULARITY:-64K}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The demo's own plan cache and trace, so it starts from nothing each time
# and leaves the user's ~/.cache/libremat alone.
export REMAT_CACHE_DIR=$B/demo-cache
TRACE=$B/demo-trace
rm -rf "$REMAT_CACHE_DIR" "$TRACE"

step() {
	echo
	echo "== $*"
}
mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }
peak() { sed -n 's/.*peak_physical=\([0-9]*\).*/\1/p' "$1"; }

echo "The job: $JOB"
echo "(a 4-block transformer on the simulated GPU; it prints the exact bits of"
echo " each step's loss, then a checksum of all parameters)"

step "1. without libremat, on a simulated device with $SMALL of memory"
rc=0
SIMCUDA_MEMORY=$SMALL SIMCUDA_REPORT_FILE=$tmp/small.rep $SIMRUN $JOB >"$tmp/small.out" \
	2>"$tmp/small.err" || rc=$?
cat "$tmp/small.err"
echo "-> exit status $rc: out of memory after $(mib "$(peak "$tmp/small.rep")")"

step "2. without libremat, on a large device (16 GiB): the reference"
SIMCUDA_REPORT_FILE=$tmp/big.rep $SIMRUN $JOB >"$tmp/big.out"
echo "-> it needs $(mib "$(peak "$tmp/big.rep")") (losses below)"

step "3. the same command under libremat, on the $SMALL device, with REMAT_BUDGET=$BUDGET"
echo "   SIMCUDA_MEMORY=$SMALL LD_PRELOAD=$LIB REMAT_BUDGET=$BUDGET REMAT_LOG=1 $JOB"
echo "(the first iterations run as written: warm-up, finding the iteration,"
echo " profiling one; while the device is too small for them libremat swaps"
echo " allocations to the host.  remat-plan plans in its own process while"
echo " training goes on; from the iteration after the plan arrives, activations"
echo " are evicted and rebuilt by replaying kernels, within the budget)"
SIMCUDA_MEMORY=$SMALL LD_PRELOAD=$LIB REMAT_BUDGET=$BUDGET REMAT_LOG=1 REMAT_TRACE_DIR=$TRACE \
	SIMCUDA_REPORT_FILE=$tmp/run.rep $SIMRUN $JOB >"$tmp/run.out" 2>"$tmp/run.err"
sed 's/^/   /' "$tmp/run.err"
if grep -q 'diverges from the profile' "$tmp/run.err"; then
	echo "(the \"diverges\" line is the last iteration: after it the program copies its"
	echo " parameters to the host for the checksum instead of starting another step;"
	echo " libremat rebuilds anything still evicted and lets the rest run unmodified)"
fi
echo
echo "losses and checksum, without libremat on 16 GiB (left), with it on $SMALL (right):"
paste "$tmp/big.out" "$tmp/run.out" | awk -F '\t' '{ printf "   %-34s %s\n", $1, $2 }'
if cmp -s "$tmp/big.out" "$tmp/run.out"; then
	echo "-> identical, bit for bit"
else
	echo "-> DIFFERENT (this is a bug; please report it)"
	exit 1
fi
rpeak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' "$tmp/run.err")
echo "-> device peak $(mib "$(peak "$tmp/run.rep")") of $SMALL; once the plan was applied, at most" \
	"$(mib "${rpeak:-0}") (budget $BUDGET)"

step "4. the same command again: the plan comes from the cache"
SIMCUDA_MEMORY=$SMALL LD_PRELOAD=$LIB REMAT_BUDGET=$BUDGET REMAT_LOG=1 REMAT_TRACE_DIR=$TRACE \
	$SIMRUN $JOB >"$tmp/again.out" 2>"$tmp/again.err"
grep -E 'cached plan|applied from|swapping before the plan' "$tmp/again.err" | sed 's/^/   /'
if cmp -s "$tmp/big.out" "$tmp/again.out"; then
	echo "-> identical again; no planner run, the plan applies right after the profile"
else
	echo "-> DIFFERENT (this is a bug; please report it)"
	exit 1
fi

plan=$(ls "$REMAT_CACHE_DIR"/*.plan.json | head -n 1)
step "5. remat-report $TRACE --plan $plan"
"$B/remat-report" "$TRACE" --plan "$plan"
