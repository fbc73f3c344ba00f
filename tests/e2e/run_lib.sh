# Sourced by tests/e2e/run_*.sh (run from the repository root): run mode on
# the simulated device, against the same trainer without libremat.
. tests/e2e/trace_lib.sh
PLAN=$(pwd)/$BUILD/remat-plan
[ -x "$PLAN" ] || fail "$PLAN is not built"
export REMAT_PLANNER=$PLAN

# A simulator fault aborts the trainer (nonzero exit, fatal in run); say so
# loudly when one shows up in any stderr anyway.
no_fault() {
	! grep -h "simcuda: fault" "$tmp"/*.err 2>/dev/null || fail "the simulator faulted"
}

# budgets NAME TRAINER ARGS...: runs the trainer in trace mode and prints
# "const peak min": persistent + small pool, the baseline peak, and the
# smallest peak remat-plan can reach (bytes).
budgets() {
	_b=$1
	shift
	run "$_b-trace" REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/$_b-trace.d" LD_PRELOAD="$PRELOAD" \
		-- "$@"
	"$PLAN" "$tmp/$_b-trace.d" --budget 1 >"$tmp/$_b-min.txt" 2>&1 || true
	python3 - "$tmp/$_b-trace.d/trace.json" "$tmp/$_b-min.txt" <<'PY'
import json, re, sys
t = json.load(open(sys.argv[1]))["memory"]
m = re.search(r"smallest reachable peak: .*\((\d+) bytes\)", open(sys.argv[2]).read())
assert m, "remat-plan did not say the smallest reachable peak"
print(t["persistent_bytes"] + t["small_pool_bytes"], t["peak_bytes"], m.group(1))
PY
}

# frac CONST PEAK MIN F: const + F * (peak - const), at least MIN.
frac() {
	python3 -c "import sys; c,p,m,f=map(float,sys.argv[1:]); print(int(max(m, c + f*(p-c))))" "$@"
}

# run_budget NAME BASE BUDGET TRAINER ARGS...: run mode at BUDGET bytes with a
# fresh plan cache; the output must be byte-identical to run BASE, a plan must
# have been applied with evictions, and the physical peak of the replay
# iterations must stay within the budget (unless NOPEAK is set: a divergent
# iteration runs unmodified, without the cap).
run_budget() {
	_n=$1 _base=$2 _bud=$3
	shift 3
	# shellcheck disable=SC2086
	run "$_n" ${RUN_ENV:-} "REMAT_BUDGET=$_bud" "REMAT_TRACE_DIR=$tmp/$_n.d" "REMAT_CACHE_DIR=$tmp/$_n.cache" \
		REMAT_LOG=1 "SIMCUDA_REPORT_FILE=$tmp/$_n.sim" LD_PRELOAD="$PRELOAD" -- "$@"
	same "$_base" "$_n"
	grep -q "applied from iteration" "$tmp/$_n.err" ||
		fail "$_n: no plan applied: $(grep libremat "$tmp/$_n.err" | tail -n 3)"
	_peak=$(sed -n 's/.*physical peak \([0-9]*\) bytes in replay iterations.*/\1/p' "$tmp/$_n.err")
	[ -n "$_peak" ] || fail "$_n: no replay-iteration peak reported"
	# Divergent iterations pass through unmodified and uncapped (NOPEAK=1).
	[ -n "${NOPEAK:-}" ] || [ "$_peak" -le "$_bud" ] ||
		fail "$_n: physical peak $_peak exceeds the budget $_bud"
	_ev=$(sed -n 's/.*iterations, \([0-9]*\) evictions, \([0-9]*\) replays.*/\1 \2/p' "$tmp/$_n.err")
	echo "$_n: budget $_bud, replay-iteration peak $_peak, evictions/replays $_ev," \
		"sim peak $(sed -n 's/.*peak_physical=\([0-9]*\).*/\1/p' "$tmp/$_n.sim")"
	no_fault
}

# verified NAME: run NAME (REMAT_VERIFY=1, REMAT_LOG=1) compared every
# rebuild of its plan with the original and found no difference.
verified() {
	grep -q "every planned rebuild is bit-identical" "$tmp/$1.err" ||
		fail "$1: not verified: $(grep libremat "$tmp/$1.err" | tail -n 3)"
}

# prefill NAME TRACE_DIR BUDGET [ARG...]: puts remat-plan's plan for TRACE_DIR
# (made with ARGs) into the plan cache run_budget NAME will use, so the run
# does not depend on the planner finishing before the job does (the
# acquisition itself is tested by run_verify, run_unplanned and
# tests/e2e/acquire_*).
prefill() {
	_pn=$1 _pd=$2 _pb=$3
	shift 3
	mkdir -p "$tmp/$_pn.cache"
	_h=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['graph_hash'][2:])" \
		"$_pd/trace.json")
	"$PLAN" "$_pd" --budget "$_pb" "$@" -o "$tmp/$_pn.cache/$_h-$_pb.plan.json" >"$tmp/$_pn.plan.txt" 2>&1 ||
		fail "$_pn: remat-plan refused budget $_pb: $(tail -n 2 "$tmp/$_pn.plan.txt")"
}

# prefill_offload NAME TRACE_DIR BUDGET: like prefill, with offload (a version 3
# plan: it offloads or parks).
prefill_offload() {
	mkdir -p "$tmp/$1.cache"
	_h=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['graph_hash'][2:])" \
		"$2/trace.json")
	"$PLAN" "$2" --budget "$3" --plan-version 2 --offload-gbps 52 \
		-o "$tmp/$1.cache/$_h-$3.plan.json" >"$tmp/$1.plan.txt" 2>&1 ||
		fail "$1: remat-plan refused budget $3: $(tail -n 2 "$tmp/$1.plan.txt")"
	grep -q '"version": 3' "$tmp/$1.cache/$_h-$3.plan.json" ||
		fail "$1: the plan neither offloads nor parks: $(grep -E 'offloaded|recompute' "$tmp/$1.plan.txt")"
}

# await_plan NAME CACHE_DIR TRACE_DIR: after run NAME in run mode (REMAT_LOG=1, a
# percentage or byte budget), a plan for its graph and budget is in
# CACHE_DIR.  The job starts its planner at the first iteration boundary
# after its trace is written; a loaded machine or a sanitizer build can
# end a short job first.  Then the plan is made here from its trace, as
# the planner would have (version 2); otherwise the planner may outlive
# the job: it is waited for.
await_plan() {
	if grep -q "started (pid" "$tmp/$1.err"; then
		for _i in $(seq 1 600); do
			ls "$2"/*.plan.json >/dev/null 2>&1 && return 0
			sleep 0.1
		done
		fail "$1: its planner stored no plan in 60 s"
	fi
	_bytes=$(sed -n 's/.*budget: \([0-9]*\) bytes.*/\1/p' "$tmp/$1.err" | head -n 1)
	[ -n "$_bytes" ] || fail "$1: no budget in its log: $(tail -n 3 "$tmp/$1.err")"
	_t=$3
	_h=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['graph_hash'][2:])" \
		"$_t/trace.json") || fail "$1: no trace in $_t"
	mkdir -p -m 700 "$2"
	"$PLAN" "$_t" --budget "$_bytes" --plan-version 2 -o "$2/$_h-$_bytes.plan.json" \
		>"$tmp/$1.plan.txt" 2>&1 || fail "$1: remat-plan: $(tail -n 2 "$tmp/$1.plan.txt")"
}

# three_budgets NAME TRAINER ARGS...: 75%, 50% and the smallest budget, each
# of the baseline's per-iteration memory (const + f * (peak - const)).
three_budgets() {
	_t=$1
	shift
	run "$_t-base" -- "$@"
	set -- "$@"
	read -r _c _p _m <<EOT
$(budgets "$_t" "$@")
EOT
	for _f in 0.75 0.5 min; do
		if [ "$_f" = min ]; then _bb=$_m; else _bb=$(frac "$_c" "$_p" "$_m" "$_f"); fi
		prefill "$_t-$_f" "$tmp/$_t-trace.d" "$_bb"
		# At 50% (VERIFY_AT) the plan's first iteration also verifies every
		# rebuild; the plan then applies an iteration later.
		if [ "$_f" = "${VERIFY_AT:-0.5}" ]; then RUN_ENV=REMAT_VERIFY=1; else RUN_ENV=; fi
		run_budget "$_t-$_f" "$_t-base" "$_bb" "$@"
		[ "$_f" != "${VERIFY_AT:-0.5}" ] || verified "$_t-$_f"
		RUN_ENV=
		[ "$_f" != min ] || [ "$_bb" -lt "$_p" ] || fail "$_t: the smallest budget $_bb saves nothing"
	done
}

# locked NAME: the page-locked copies the profiles of run NAME made (the
# "write sets: N host copies (M page-locked)" lines, summed): the copies
# SIMCUDA_FAIL_COPY counts before the plan's own.
locked() {
	sed -n 's/.*write sets: [0-9]* host copies (\([0-9]*\) page-locked).*/\1/p' "$tmp/$1.err" |
		awk '{ s += $1 } END { print s + 0 }'
}

# real_trace PROG: tests/e2e/progs/real/PROG ($P) at 4 KiB chunks, plain
# (run base) and traced (run traced, the trace in $tmp/t.d, REMAT_LOG=1),
# printing the same.
real_trace() {
	P=$BUILD/tests/e2e/progs/real
	[ -x "$P/$1" ] || fail "$P/$1 is not built"
	export SIMCUDA_GRANULARITY=4K
	run base -- "$P/$1"
	run traced REMAT_MODE=trace REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/t.d" LD_PRELOAD="$PRELOAD" \
		-- "$P/$1"
	same base traced
}

# peak_share PCT: PCT% of the peak of the trace in $tmp/t.d, in bytes.
peak_share() {
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['memory']['peak_bytes'] * $1 // 100)" \
		"$tmp/t.d/trace.json"
}
