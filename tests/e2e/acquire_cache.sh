#!/bin/sh
# Run mode's plan cache: the first run plans (remat-plan in its own
# process) and stores the plan; a second run of the same job applies the
# cached plan right after its profile without running the planner; a
# cached plan made for another graph is refused and re-planned; another
# budget is another entry, and a plan for another budget under this key is
# refused.  Every run prints what the plain run prints.
# Also: libremat.so does not link jansson (it is dlopen()ed).
. tests/e2e/acquire_lib.sh
! readelf -d "$LIB" | grep -q 'NEEDED.*jansson' || fail "libremat.so links jansson"

B=$(budget_of gpt 70% --iters 6)
[ -n "$B" ] || fail "no budget from remat-plan"
RUN="LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_LOG=1 REMAT_TRACE_DIR=$tmp/gpt-trace"
run plain -- $TR/gpt --iters 6
run first $RUN -- $TR/gpt --iters 6
same plain first
says first "planning for a budget of $B bytes"
hash=$(sed -n 's/.*"graph_hash": "0x\([0-9a-f]*\)".*/\1/p' "$tmp/gpt-trace/trace.json")
entry=$tmp/cache/$hash-$B.plan.json
planned first "$entry"
[ -s "$tmp/gpt-trace/plan.log" ] || fail "no planner log in the trace directory"

run second $RUN -- $TR/gpt --iters 6
same plain second
says second "cached plan $entry"
quiet second "planning for a budget"
says second "applied from iteration"

# The same key holding mlp's plan: refused with one message, re-planned.
M=$(budget_of mlp 70% --iters 6)
run mlp-first LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$M REMAT_TRACE_DIR=$tmp/mlp-trace REMAT_LOG=1 \
	-- $TR/mlp --iters 6
mhash=$(sed -n 's/.*"graph_hash": "0x\([0-9a-f]*\)".*/\1/p' "$tmp/mlp-trace/trace.json")
mlpentry=$tmp/cache/$mhash-$M.plan.json
planned mlp-first "$mlpentry"
cp "$mlpentry" "$entry"
run other $RUN -- $TR/gpt --iters 6
same plain other
says other "cached plan $entry rejected: \$.graph_hash: plan made for graph"
says other "moved it to $entry.rejected and planning again"
planned other "$entry"
[ "$(grep -c 'cached plan .* rejected' "$tmp/other.err")" = 1 ] || fail "more than one message"

# Another budget is another cache entry: planned anew, the first one kept.
B2=$(budget_of gpt 80% --iters 6)
run budget2 LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B2 REMAT_LOG=1 REMAT_TRACE_DIR=$tmp/gpt-trace2 \
	-- $TR/gpt --iters 6
same plain budget2
says budget2 "planning for a budget of $B2 bytes"
planned budget2 "$tmp/cache/$hash-$B2.plan.json"
[ -e "$entry" ] || fail "the entry for budget $B is gone"
# The budget-B key holding the plan made for B2: refused, re-planned.
cp "$tmp/cache/$hash-$B2.plan.json" "$entry"
run otherbudget $RUN -- $TR/gpt --iters 6
same plain otherbudget
says otherbudget "cached plan $entry rejected: \$.budget: plan made for a budget of $B2 bytes, this run has $B"
planned otherbudget "$entry"
echo "PASS: plan cache (plan, hit, entry of another graph re-planned, another budget)"
