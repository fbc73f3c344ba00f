#!/bin/sh
# make demo: train the small transformer on the simulated device, first
# plainly, then under libremat, and show what libremat saw.
set -eu
cd "$(dirname "$0")/.."
B=${BUILD:-build}
SIMRUN=tools/simrun
ARGS="--layers 2 --iters 6"
export SIMCUDA_GRANULARITY=${SIMCUDA_GRANULARITY:-64K}
report=$(mktemp)
trap 'rm -f "$report"' EXIT

echo "== gpt on the simulated device (no libremat)"
SIMCUDA_REPORT_FILE=$report $SIMRUN "$B/trainers/gpt" $ARGS
echo "device: $(cat "$report")"

if [ -x "$B/libremat.so" ] && [ -x "$B/remat-report" ]; then
	echo
	echo "== the same command under libremat, tracing one iteration"
	rm -rf "$B/demo-trace"
	SIMCUDA_REPORT_FILE=$report LD_PRELOAD="$B/libremat.so" REMAT_MODE=trace \
		REMAT_TRACE_DIR="$B/demo-trace" $SIMRUN "$B/trainers/gpt" $ARGS
	echo "device: $(cat "$report")"
	echo
	echo "== remat-report $B/demo-trace"
	"$B/remat-report" "$B/demo-trace"
fi
