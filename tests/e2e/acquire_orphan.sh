#!/bin/sh
# A job shorter than its planning: the job ends (with the output of the
# plain run) while remat-plan still works; the planner finishes on its own
# and stores the plan, and the next run of the job starts from it.
. tests/e2e/acquire_lib.sh
B=$(budget_of mlp 70% --iters 5)
slow=$tmp/slow-remat-plan
printf '#!/bin/sh\nsleep 2\nexec "%s" "$@"\n' "$(pwd)/$BUILD/remat-plan" >"$slow"
chmod +x "$slow"
run plain -- $TR/mlp --iters 5
run short LD_PRELOAD=$LIB REMAT_BUDGET=$B REMAT_PLANNER=$slow REMAT_LOG=1 \
	REMAT_TRACE_DIR=$tmp/trace -- $TR/mlp --iters 5
same plain short
says short "the job ended before remat-plan finished; it goes on and stores its plan in $tmp/cache"
quiet short "applied from iteration"
for i in $(seq 1 100); do
	ls "$tmp"/cache/*-"$B".plan.json >/dev/null 2>&1 && break
	sleep 0.1
done
ls "$tmp"/cache/*-"$B".plan.json >/dev/null 2>&1 || fail "no plan in the cache after 10 s"
run next LD_PRELOAD=$LIB REMAT_BUDGET=$B REMAT_PLANNER=$slow REMAT_LOG=1 \
	REMAT_TRACE_DIR=$tmp/trace -- $TR/mlp --iters 7
says next "cached plan"
says next "applied from iteration"
run plain7 -- $TR/mlp --iters 7
same plain7 next
echo "PASS: the planner outlives a short job and its plan serves the next run"
