#!/bin/sh
# Two workers started the way torchrun starts them (LOCAL_RANK 0 and 1, at
# the same time) through tools/remat-torchrun-wrapper.sh: each profiles into
# its own trace directory, both plan for the same graph and budget into the
# shared cache without damaging it, and both print what the plain run
# prints.
. tests/e2e/acquire_lib.sh
B=$(budget_of mlp 70% --iters 8)
# 24 iterations: the plan arrives before the job ends on a loaded machine
run plain -- $TR/mlp --iters 24
W=$(pwd)/tools/remat-torchrun-wrapper.sh
for r in 0 1; do
	# shellcheck disable=SC2086
	env ${TEST_SAN_RUNTIME:+LD_PRELOAD=$PRELOAD} LOCAL_RANK=$r \
		REMAT_TRACE_DIR="$tmp/traces" REMAT_BUDGET="$B" REMAT_LOG=1 \
		LIBREMAT_SO="$LIB" "$W" "$SIMRUN" "$TR/mlp" --iters 24 \
		>"$tmp/rank$r.out" 2>"$tmp/rank$r.err" &
	eval "pid$r=\$!"
done
# shellcheck disable=SC2154
wait "$pid0" || fail "rank 0 failed: $(tail -n 5 "$tmp/rank0.err")"
# shellcheck disable=SC2154
wait "$pid1" || fail "rank 1 failed: $(tail -n 5 "$tmp/rank1.err")"
for r in 0 1; do
	same plain rank$r
	[ -s "$tmp/traces/rank$r/trace.json" ] || fail "rank $r: no trace in $tmp/traces/rank$r"
	# A rank that reaches planning after the other's plan is stored takes
	# it from the cache: either is right, but every rank must get a plan.
	grep -q "planning for a budget of $B bytes\|cached plan" "$tmp/rank$r.err" ||
		fail "rank $r got no plan: $(cat "$tmp/rank$r.err")"
	grep -q "applied from iteration" "$tmp/rank$r.err" || fail "rank $r applied no plan"
done
grep -q "planning for a budget of $B bytes" "$tmp/rank0.err" "$tmp/rank1.err" ||
	fail "neither rank ran the planner"
# A planner may outlive its rank on a loaded machine: wait for both.
for i in $(seq 1 100); do
	[ -z "$(ls -A "$tmp"/cache | grep -v '\.plan\.json$')" ] && break
	sleep 0.1
done
[ "$(ls "$tmp"/cache/*.plan.json | wc -l)" = 1 ] || fail "cache: $(ls -a "$tmp/cache")"
[ -z "$(ls -A "$tmp"/cache | grep -v '\.plan\.json$')" ] || fail "leftovers: $(ls -a "$tmp/cache")"
# A later run of rank 1 finds the plan.
# shellcheck disable=SC2086
run later ${TEST_SAN_RUNTIME:+LD_PRELOAD=$PRELOAD} LOCAL_RANK=1 \
	REMAT_TRACE_DIR=$tmp/traces REMAT_BUDGET=$B REMAT_LOG=1 LIBREMAT_SO=$LIB \
	-- "$W" "$TR/mlp" --iters 24
same plain later
says later "cached plan"
echo "PASS: two ranks through the torchrun wrapper: own traces, one cache entry, identical output"
