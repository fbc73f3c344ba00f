#!/bin/sh
# A damaged cache entry (cut short, as by a full disk): one message, the
# entry set aside as ENTRY.rejected, a new plan made and cached, the same
# output as the plain run.
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
says corrupt "libremat: cached plan $entry rejected: not valid JSON"
says corrupt "; moved it to $entry.rejected and planning again (training runs unmodified meanwhile)"
quiet corrupt "--rehash"
cmp -s "$tmp/cut" "$entry.rejected" || fail "the damaged entry was not kept aside"
[ "$(grep -c . "$tmp/corrupt.err")" = 1 ] || fail "expected one line, got: $(cat "$tmp/corrupt.err")"
for i in $(seq 1 100); do
	[ -e "$entry" ] && break
	sleep 0.1
done
[ "$(cat "$entry")" = "$good" ] || fail "the entry was not replaced by a good plan"

run again $RUN -- $TR/mlp --iters 6
same plain again
says again "cached plan $entry"

# Edited: one digit of a step changed (the plan still parses, names real
# buffers and ops).  Its checksum gives it away: one message saying so and
# how to apply an edit on purpose, the edit kept aside, a new plan made.
printf '%s\n' "$good" | grep -q '"evict_after": \[[0-9]' || fail "the plan evicts nothing"
printf '%s\n' "$good" | sed '0,/"evict_after": \[\([0-9]\)/s//"evict_after": [1\1/' >"$entry"
edited=$(cat "$entry")
[ "$edited" != "$good" ] || fail "the edit changed nothing"
run edited LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_TRACE_DIR=$tmp/trace -- $TR/mlp --iters 6
same plain edited
says edited "libremat: cached plan $entry rejected: checksum does not match the content"
says edited "the plan changed after remat-plan wrote it; moved it to $entry.rejected and planning again"
says edited "remat-plan --rehash"
[ "$(grep -c . "$tmp/edited.err")" = 1 ] || fail "expected one line, got: $(cat "$tmp/edited.err")"
[ "$(cat "$entry.rejected")" = "$edited" ] || fail "the edited plan was not kept aside"
for i in $(seq 1 100); do
	[ -e "$entry" ] && break
	sleep 0.1
done
[ "$(cat "$entry")" = "$good" ] || fail "the entry was not replaced by a good plan"

# An edit on purpose given its checksum with remat-plan --rehash is taken
# (a harmless one here: the planner's name).
printf '%s\n' "$good" | sed 's/"planner": "[a-z:]*"/"planner": "by-hand"/' >"$entry"
"$BUILD/remat-plan" --rehash "$entry" >/dev/null || fail "remat-plan --rehash refused the edit"
run rehashed $RUN -- $TR/mlp --iters 6
same plain rehashed
says rehashed "cached plan $entry (planner by-hand"
quiet rehashed "checksum"
echo "PASS: corrupt and edited cache entries: one message, re-planned, identical output"
