#!/bin/sh
# A planner that crashes, hangs past REMAT_PLAN_TIMEOUT or cannot reach the
# budget: one message each, and training completes with the output of the
# plain run.  The planner runs without LD_PRELOAD and REMAT_*.
. tests/e2e/acquire_lib.sh
B=$(budget_of gpt 70% --iters 6)
run plain -- $TR/gpt --iters 8
fake=$tmp/fake-remat-plan

printf '#!/bin/sh\nenv > "$1/planner.env"\nkill -SEGV $$\n' >"$fake"
chmod +x "$fake"
run crash LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_PLANNER=$fake REMAT_TRACE_DIR=$tmp/t1 \
	-- $TR/gpt --iters 8
same plain crash
says crash "libremat: remat-plan crashed (signal 11, Segmentation fault); log: $tmp/t1/plan.log; running unmodified"
[ "$(wc -l <"$tmp/crash.err")" = 1 ] || fail "expected one line, got: $(cat "$tmp/crash.err")"
! grep -q '^LD_PRELOAD=\|^REMAT_' "$tmp/t1/planner.env" ||
	fail "planner environment: $(grep '^LD_PRELOAD=\|^REMAT_' "$tmp/t1/planner.env")"
grep -q '^SIMCUDA_GRANULARITY=64K$' "$tmp/t1/planner.env" || fail "planner environment lost a variable"

# Hangs: killed 0.2 s + 1 s grace after it started, long before training
# ends (40 iterations: more than a second after the profile).
printf '#!/bin/sh\necho $$ > "$1/planner.pid"\nexec sleep 30\n' >"$fake"
run plain16 -- $TR/gpt --iters 16
run plain40 -- $TR/gpt --iters 40
run hang LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_PLANNER=$fake REMAT_PLAN_TIMEOUT=0.2 \
	REMAT_TRACE_DIR=$tmp/t2 -- $TR/gpt --iters 40
same plain40 hang
says hang "libremat: remat-plan did not finish within REMAT_PLAN_TIMEOUT=0.2 s (killed after 1 s more); log: $tmp/t2/plan.log; running unmodified"
pid=$(cat "$tmp/t2/planner.pid")
state=$(sed 's/.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null || echo gone)
[ "$state" = gone ] || [ "$state" = Z ] || fail "the hanging planner $pid is still there ($state)"

# The real planner, a budget no plan reaches; the job runs long enough for
# the planner to answer on a loaded machine.
run small LD_PRELOAD="$PRELOAD" REMAT_BUDGET=64K REMAT_TRACE_DIR=$tmp/t3 -- $TR/gpt --iters 16
same plain16 small
says small "libremat: REMAT_BUDGET of 65536 bytes cannot be reached for this job (remat-plan: smallest reachable peak:"
[ "$(wc -l <"$tmp/small.err")" = 1 ] || fail "expected one line, got: $(cat "$tmp/small.err")"
echo "PASS: planner crash, timeout and unreachable budget: one message each, identical output"
