# bench/sim_lib.sh: sourced by the benches that run on the simulated device
# (from the repository root), which define die() and $tmp first.

# sim NAME ENV... -- CMD...: runs it, stdout/stderr in $tmp/NAME.{out,err},
# the simulator's report line in $tmp/NAME.rep.
sim() {
	_n=$1
	shift
	_e=""
	while [ "$1" != "--" ]; do
		_e="$_e $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	env SIMCUDA_REPORT_FILE="$tmp/$_n.rep" $_e "${SIMRUN:-sim/bin/simrun}" "$@" \
		>"$tmp/$_n.out" 2>"$tmp/$_n.err" ||
		die "$_n: $* failed: $(tail -n 3 "$tmp/$_n.err")"
}

# field NAME KEY: a number from run NAME's report line.
field() { sed -n "s/.*$2=\([0-9]*\).*/\1/p" "$tmp/$1.rep"; }

# wait_plan DIR PATTERN: until DIR holds a plan PATTERN names (*.plan.json,
# *-BYTES-nooffload.plan.json), at most 30 s: the planner may outlive a
# short run, and it stores the plan itself.
wait_plan() {
	for _i in $(seq 1 300); do
		ls "$1"/$2 >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 0
}
