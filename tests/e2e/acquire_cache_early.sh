#!/bin/sh
# A cached plan applies right after the profile, whatever the trace writer
# is doing: the cache entry is checked against the profile in memory, and
# only remat-plan needs the trace file.  Here the writer is held, not
# slowed: the first file it opens, <trace dir>/.params.bin.<pid>.tmp, is a
# FIFO made beforehand (the trainer gets the pid of the shell that made
# it, by exec), and the writer blocks in open() until someone reads.
# Nothing reads it until the plan has applied or the trainer has printed
# its last iteration, so the outcome does not depend on timing: a job that
# waits for its trace before it looks in the cache cannot apply the plan.
. tests/e2e/acquire_lib.sh
ITERS=8
B=$(budget_of mlp 70% --iters $ITERS)
[ -n "$B" ] || fail "no budget from remat-plan"
hash=$(sed -n 's/.*"graph_hash": "0x\([0-9a-f]*\)".*/\1/p' "$tmp/mlp-budget-trace/trace.json")
entry=$tmp/cache/$hash-$B.plan.json
mkdir -p -m 700 "$tmp/cache"
"$BUILD/remat-plan" "$tmp/mlp-budget-trace" --budget "$B" -o "$entry" >"$tmp/plan.txt" 2>&1 ||
	fail "remat-plan: $(tail -n 2 "$tmp/plan.txt")"
run plain -- $TR/mlp --iters $ITERS

# held NAME: runs mlp in run mode with its trace writer held as above and
# released by a reader once NAME's log says the plan applied or the
# trainer printed its last iteration (or after 300 s, so that a broken
# build fails instead of hanging).
held() {
	_d=$tmp/$1.d
	mkdir -p "$_d"
	(
		_i=0
		while ! grep -q "applied from iteration" "$tmp/$1.err" 2>/dev/null &&
			! grep -q "^iter $((ITERS - 1)) " "$tmp/$1.out" 2>/dev/null &&
			[ $_i -lt 3000 ]; do
			_i=$((_i + 1))
			sleep 0.1
		done
		exec cat "$_d"/.params.bin.*.tmp >/dev/null
	) &
	_reader=$!
	# shellcheck disable=SC2016
	run "$1" LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_LOG=1 "REMAT_TRACE_DIR=$_d" -- \
		sh -c 'mkfifo "$0/.params.bin.$$.tmp" && exec "$@"' "$_d" $TR/mlp --iters $ITERS
	kill "$_reader" 2>/dev/null || true
	wait "$_reader" 2>/dev/null || true
	same plain "$1"
}

held hit
says hit "cached plan $entry"
quiet hit "planning for a budget"
says hit "applied from iteration"
# The writer was held until then: its trace comes after the plan.
python3 - "$tmp/hit.err" <<'PY' || fail "the plan did not apply before the trace was written: $(grep libremat "$tmp/hit.err")"
import re, sys
log = open(sys.argv[1]).read()
applied = log.index("applied from iteration")
written = log.index("trace written to")
assert applied < written, (applied, written)
# From the iteration after the first one that follows the profile, as
# when the trace is written at once.
prof = int(re.search(r"profiling iteration (\d+)", log).group(1))
first = int(re.search(r"applied from iteration (\d+)", log).group(1))
assert first == prof + 2, (prof, first)
PY

echo "PASS: a cached plan applies while the trace writer is held"
