#!/bin/sh
# A damaged cache entry (cut short, as by a full disk): one message, the
# entry removed, a new plan made and cached, the same output as the plain
# run.
. tests/e2e/acquire_lib.sh
B=$(budget_of mlp 70% --iters 6)
RUN="LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_LOG=1 REMAT_TRACE_DIR=$tmp/trace"
run plain -- $TR/mlp --iters 6
run first $RUN -- $TR/mlp --iters 6
same plain first
hash=$(sed -n 's/.*"graph_hash": "0x\([0-9a-f]*\)".*/\1/p' "$tmp/trace/trace.json")
entry=$tmp/cache/$hash-$B.plan.json
planned first "$entry"
good=$(cat "$entry")
head -c 200 "$entry" >"$tmp/cut" && cp "$tmp/cut" "$entry"

# Not at REMAT_LOG=1: the message about the entry is shown regardless.
run corrupt LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_TRACE_DIR=$tmp/trace -- $TR/mlp --iters 6
same plain corrupt
says corrupt "libremat: cached plan unusable, removed it and planning again: $entry: not valid JSON"
[ "$(grep -c . "$tmp/corrupt.err")" = 1 ] || fail "expected one line, got: $(cat "$tmp/corrupt.err")"
for i in $(seq 1 100); do
	[ -e "$entry" ] && break
	sleep 0.1
done
[ "$(cat "$entry")" = "$good" ] || fail "the entry was not replaced by a good plan"

run again $RUN -- $TR/mlp --iters 6
same plain again
says again "cached plan $entry"
echo "PASS: corrupt cache entry: one message, re-planned, identical output"
