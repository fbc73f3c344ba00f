#!/bin/sh
# Run mode's plan cache: the first run plans (remat-plan in its own
# process) and stores the plan; a second run of the same job applies the
# cached plan right after its profile without running the planner; a
# cached plan made for another graph is refused and re-planned; another
# budget is another entry.  Every run prints what the plain run prints.
# Also: libremat.so does not link jansson (it is dlopen()ed).
. tests/e2e/acquire_lib.sh
! readelf -d "$LIB" | grep -q 'NEEDED.*jansson' || fail "libremat.so links jansson"

B=$(budget_of gpt 70% --iters 6)
[ -n "$B" ] || fail "no budget from remat-plan"
RUN="LD_PRELOAD=$LIB REMAT_BUDGET=$B REMAT_LOG=1 REMAT_TRACE_DIR=$tmp/gpt-trace"
run plain -- $TR/gpt --iters 6
run first $RUN -- $TR/gpt --iters 6
same plain first
says first "planning for a budget of $B bytes"
says first "new plan $tmp/cache/"
says first "applied from iteration"
[ -s "$tmp/gpt-trace/plan.log" ] || fail "no planner log in the trace directory"
entry=$(ls "$tmp"/cache/*-"$B".plan.json) || fail "no cache entry for budget $B"

run second $RUN -- $TR/gpt --iters 6
same plain second
says second "cached plan $entry"
quiet second "planning for a budget"
says second "applied from iteration"

# The same key holding mlp's plan: refused with one message, re-planned.
M=$(budget_of mlp 70% --iters 6)
run mlp-first LD_PRELOAD=$LIB REMAT_BUDGET=$M REMAT_TRACE_DIR=$tmp/mlp-trace REMAT_LOG=1 \
	-- $TR/mlp --iters 6
says mlp-first "new plan"
mlpentry=$(ls "$tmp"/cache/*-"$M".plan.json)
cp "$mlpentry" "$entry"
run other $RUN -- $TR/gpt --iters 6
same plain other
says other "cached plan unusable, removed it and planning again: $entry: \$.graph_hash: plan made for graph"
says other "new plan $entry"
[ "$(grep -c 'cached plan unusable' "$tmp/other.err")" = 1 ] || fail "more than one message"

# Another budget is another cache entry: planned anew, the first one kept.
B2=$(budget_of gpt 80% --iters 6)
run budget2 LD_PRELOAD=$LIB REMAT_BUDGET=$B2 REMAT_LOG=1 REMAT_TRACE_DIR=$tmp/gpt-trace2 \
	-- $TR/gpt --iters 6
same plain budget2
says budget2 "planning for a budget of $B2 bytes"
[ -e "$entry" ] || fail "the entry for budget $B is gone"
ls "$tmp"/cache/*-"$B2".plan.json >/dev/null || fail "no entry for budget $B2"
echo "PASS: plan cache (plan, hit, entry of another graph re-planned, another budget)"
