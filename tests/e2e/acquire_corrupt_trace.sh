#!/bin/sh
# A trace damaged between libremat writing it and remat-plan reading it (a
# truncated trace.json, a params.bin that no longer matches its hash): the
# real planner names the problem, libremat passes its one line on, and the
# training completes with the output of the plain run.
. tests/e2e/acquire_lib.sh
B=$(budget_of gpt 70% --iters 6)
run plain -- $TR/gpt --iters 8
fake=$tmp/damaging-remat-plan
real=$(pwd)/$BUILD/remat-plan

# The planner is called as: remat-plan TRACE_DIR --budget ...; damage the
# trace first, then hand over to the real planner.
printf '#!/bin/sh\nf="$1/trace.json"; head -c $(($(wc -c <"$f") / 2)) "$f" >"$f.cut" && mv "$f.cut" "$f"\nexec %s "$@"\n' "$real" >"$fake"
chmod +x "$fake"
run cut LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_PLANNER=$fake REMAT_TRACE_DIR=$tmp/t1 \
	-- $TR/gpt --iters 8
same plain cut
says cut "libremat: remat-plan failed (exit 2: "
grep -q "trace.json" "$tmp/cut.err" || fail "the message does not name the trace file: $(cat "$tmp/cut.err")"
[ "$(wc -l <"$tmp/cut.err")" = 1 ] || fail "expected one line, got: $(cat "$tmp/cut.err")"

printf '#!/bin/sh\nprintf X | dd of="$1/params.bin" bs=1 seek=0 conv=notrunc 2>/dev/null\nexec %s "$@"\n' "$real" >"$fake"
run flip LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_PLANNER=$fake REMAT_TRACE_DIR=$tmp/t2 \
	-- $TR/gpt --iters 8
same plain flip
says flip "libremat: remat-plan failed (exit 2: "
grep -q "params.bin" "$tmp/flip.err" || fail "the message does not name params.bin: $(cat "$tmp/flip.err")"
[ "$(wc -l <"$tmp/flip.err")" = 1 ] || fail "expected one line, got: $(cat "$tmp/flip.err")"
echo "PASS: a damaged trace: the planner's message, identical output"
