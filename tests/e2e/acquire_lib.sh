# Sourced by tests/e2e/acquire_*.sh (run from the repository root): run
# mode's plan acquisition end to end on the simulated device.
. tests/e2e/trace_lib.sh
# Every run plans into this test's own cache, never the user's.
export REMAT_CACHE_DIR=$tmp/cache
for f in "$BUILD/remat-plan" "$TR/gpt" "$TR/mlp"; do
	[ -e "$f" ] || fail "$f is not built"
done

# says NAME TEXT: the run's stderr has a line containing TEXT.
says() {
	grep -qF -- "$2" "$tmp/$1.err" || fail "$1: no line with '$2' in: $(cat "$tmp/$1.err")"
}
# quiet NAME TEXT: it has none.
quiet() {
	! grep -qF -- "$2" "$tmp/$1.err" || fail "$1: unexpected '$2': $(grep -F -- "$2" "$tmp/$1.err")"
}

# planned NAME ENTRY: the run planned and stored ENTRY.  On a loaded machine
# the job may end before remat-plan does; the planner then finishes on its
# own (the run says so) and the entry appears shortly after; or remat-plan
# ends after the job's last iteration and before its exit (said too).
planned() {
	if ! grep -qF -e "new plan $2" -e "remat-plan finished as the job ended: its plan is in $2" \
		"$tmp/$1.err"; then
		says "$1" "the job ended before remat-plan finished; it may go on for"
		for _i in $(seq 1 100); do
			[ -e "$2" ] && break
			sleep 0.1
		done
	fi
	[ -e "$2" ] || fail "$1: no cache entry $2"
}

# budget_of TRAINER PERCENT ARGS...: bytes for PERCENT of the trainer's
# per-iteration peak, from a trace and remat-plan (REMAT_BUDGET=PERCENT
# resolves to the same bytes; the tests use bytes to name cache entries).
budget_of() {
	_t=$1 _p=$2
	shift 2
	env LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR="$tmp/$_t-budget-trace" \
		"$SIMRUN" "$TR/$_t" "$@" >/dev/null 2>"$tmp/$_t-budget.err" ||
		fail "tracing $_t: $(tail -n 3 "$tmp/$_t-budget.err")"
	"$BUILD/remat-plan" "$tmp/$_t-budget-trace" --budget "$_p" --planner none 2>&1 |
		sed -n 's/^budget: .*(\([0-9]*\) bytes)$/\1/p'
}
