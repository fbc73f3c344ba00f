#!/bin/sh
# The planner's life is tied to the job's:
# - a job shorter than its planning exits normally while remat-plan still
#   works: the planner finishes within its deadline and stores the plan, and
#   the next run of the job starts from it;
# - a planner that never returns, after such an exit, dies at the deadline
#   (REMAT_PLAN_TIMEOUT and its grace), not later;
# - a job killed (SIGTERM, SIGKILL) while planning takes its planner with it.
. tests/e2e/acquire_lib.sh
B=$(budget_of mlp 70% --iters 5)
slow=$tmp/slow-remat-plan
printf '#!/bin/sh\nsleep 2\nexec "%s" "$@"\n' "$(pwd)/$BUILD/remat-plan" >"$slow"
chmod +x "$slow"
run plain -- $TR/mlp --iters 5
run short LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_PLANNER=$slow REMAT_LOG=1 \
	REMAT_TRACE_DIR=$tmp/trace -- $TR/mlp --iters 5
same plain short
says short "the job ended before remat-plan finished; it may go on for"
says short "and store its plan in $tmp/cache for the next run"
quiet short "applied from iteration"
for i in $(seq 1 100); do
	ls "$tmp"/cache/*-"$B".plan.json >/dev/null 2>&1 && break
	sleep 0.1
done
ls "$tmp"/cache/*-"$B".plan.json >/dev/null 2>&1 || fail "no plan in the cache after 10 s"
run next LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_PLANNER=$slow REMAT_LOG=1 \
	REMAT_TRACE_DIR=$tmp/trace -- $TR/mlp --iters 7
says next "cached plan"
says next "applied from iteration"
run plain7 -- $TR/mlp --iters 7
same plain7 next

# A planner that never returns writes its pid where the test finds it.
hang=$tmp/hung-remat-plan
printf '#!/bin/sh\necho $$ >"%s/hung.pid"\nexec sleep 1000\n' "$tmp" >"$hang"
chmod +x "$hang"
planner_pid() {
	for _i in $(seq 1 100); do
		[ -s "$tmp/hung.pid" ] && break
		sleep 0.1
	done
	cat "$tmp/hung.pid" 2>/dev/null || fail "the hung planner never started"
}
# gone PID SECONDS: the process is gone (or a zombie) within that time.
gone() {
	for _i in $(seq 1 $(($2 * 10))); do
		_s=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
		[ "$_s" = Z ] && return 0
		sleep 0.1
	done
	return 1
}

rm -f "$tmp/hung.pid"
run hang-exit LD_PRELOAD="$PRELOAD" REMAT_BUDGET=$B REMAT_PLANNER=$hang REMAT_PLAN_TIMEOUT=1 \
	REMAT_LOG=1 "REMAT_CACHE_DIR=$tmp/c2" REMAT_TRACE_DIR=$tmp/t2 -- $TR/mlp --iters 5
same plain hang-exit
pid=$(planner_pid)
# The deadline is 1 s plus a grace of 1 s from the start of planning.
gone "$pid" 5 || fail "a hung planner outlived its deadline after the job exited (pid $pid)"

for sig in TERM KILL; do
	rm -f "$tmp/hung.pid"
	env LD_PRELOAD="$PRELOAD" REMAT_BUDGET="$B" REMAT_PLANNER="$hang" REMAT_PLAN_TIMEOUT=600 \
		"REMAT_CACHE_DIR=$tmp/c-$sig" "REMAT_TRACE_DIR=$tmp/t-$sig" \
		"$SIMRUN" "$TR/mlp" --iters 100000 >/dev/null 2>"$tmp/sig-$sig.err" &
	job=$!
	pid=$(planner_pid)
	kill -"$sig" "$job"
	wait "$job" || :
	gone "$pid" 3 || fail "SIG$sig: the planner outlived the job (pid $pid)"
done
echo "PASS: a short job's planner stores its plan for the next run; a hung one dies at its deadline; a killed job takes its planner with it"
