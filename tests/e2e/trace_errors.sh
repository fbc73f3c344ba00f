#!/bin/sh
# Bad REMAT_* values and an unwritable trace directory: one clear line on
# stderr, and the training completes with identical output.
. tests/e2e/trace_lib.sh
run ref -- $TR/mlp --iters 6
n=0
for bad in REMAT_MODE=fast REMAT_BUDGET=12X REMAT_BUDGET=150% REMAT_LOG=7 REMAT_WARMUP=-1 \
	REMAT_TRACE_DIR= REMAT_MODE=run; do
	n=$((n + 1))
	run bad$n LD_PRELOAD="$PRELOAD" "$bad" -- $TR/mlp --iters 6
	same ref bad$n
	var=${bad%%=*}
	lines=$(grep -c "^libremat: " "$tmp/bad$n.err" || true)
	[ "$lines" = 1 ] || fail "$bad: expected one libremat line, got $lines: $(cat "$tmp/bad$n.err")"
	grep -q "^libremat: .*$var" "$tmp/bad$n.err" || fail "$bad: message does not name $var"
	grep -q "accepted\|needs" "$tmp/bad$n.err" || fail "$bad: message does not say what is accepted"
done
# A misspelt name: said once, the run goes on untouched.
run typo LD_PRELOAD="$PRELOAD" REMAT_TRACEDIR=$tmp/x -- $TR/mlp --iters 6
same ref typo
[ "$(grep -c '^libremat: unknown variable REMAT_TRACEDIR ignored' "$tmp/typo.err")" = 1 ] ||
	fail "misspelt variable: $(cat "$tmp/typo.err")"
# A trace directory that cannot be created (a path under a regular file).
: >"$tmp/file"
run nodir LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/file/trace -- $TR/mlp --iters 6
same ref nodir
grep -q "^libremat: cannot create trace directory .*file" "$tmp/nodir.err" ||
	fail "unwritable directory: $(cat "$tmp/nodir.err")"
[ "$(grep -c '^libremat: ' "$tmp/nodir.err")" = 1 ] || fail "more than one line: $(cat "$tmp/nodir.err")"
# Too short a run to see two equal iterations: said once, no trace.
run short0 -- $TR/mlp --iters 2
run short LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/short -- $TR/mlp --iters 2
same short0 short
grep -q "^libremat: process ends before a steady iteration was profiled" "$tmp/short.err" ||
	fail "short run: $(cat "$tmp/short.err")"
[ ! -e "$tmp/short/trace.json" ] || fail "short run wrote a trace"
# The planner's variables are checked at the start too: one line, inactive.
for bad in REMAT_PLANNER=/nonexistent REMAT_PLAN_TIMEOUT=soon; do
	n=$((n + 1))
	run bad$n LD_PRELOAD="$PRELOAD" REMAT_BUDGET=1G REMAT_TRACE_DIR=$tmp/pv$n "$bad" -- $TR/mlp --iters 6
	same ref bad$n
	[ "$(grep -c "^libremat: .*${bad%%=*}.*accepted" "$tmp/bad$n.err")" = 1 ] ||
		fail "$bad: $(cat "$tmp/bad$n.err")"
	[ "$(grep -c "^libremat: " "$tmp/bad$n.err")" = 1 ] || fail "$bad: more than one line"
	[ ! -e "$tmp/pv$n" ] || fail "$bad: libremat traced although inactive"
done
# Run mode writes the trace it plans from; a planner that fails is one
# message, and the job goes on unmodified.
run runmode LD_PRELOAD="$PRELOAD" REMAT_BUDGET=1G REMAT_TRACE_DIR=$tmp/rm REMAT_PLANNER=/bin/false \
	REMAT_CACHE_DIR=$tmp/rmcache -- $TR/mlp --iters 6
same ref runmode
[ "$(grep -c "^libremat: " "$tmp/runmode.err")" = 1 ] ||
	fail "run mode without a planner: $(cat "$tmp/runmode.err")"
check_trace "$tmp/rm"
echo "PASS: bad values and unwritable trace directory"
