#!/bin/sh
# A device smaller than one unmodified iteration: 75% of the plain run's
# physical peak.  Without libremat the trainer runs out of device memory
# (exit 2).  With it, the iterations before the plan (warm-up, detection,
# the profile) swap least recently used allocations to the host, and once
# the plan applies the replay iterations keep to REMAT_BUDGET (the device's
# size).  The output is byte-identical to the plain run on a big device,
# and the profile taken on the small device is the big device's (same
# graph hash, same ops, buffers and kernel counts).
. tests/e2e/run_lib.sh
GRAN=65536
# The proofs perturb every tested byte here: by default they perturb by
# what a word held, and a small device's swaps and reuse leave other stale
# content in fresh allocations than a big device's, which proves other
# bytes (soundly both ways) and would make the profiles differ.
export REMAT_WRITE_PROOF=1

small_device() {
	_t=$1
	shift
	run "$_t-base" "SIMCUDA_REPORT_FILE=$tmp/$_t-base.sim" -- "$@"
	_p=$(sed -n 's/.*peak_physical=\([0-9]*\).*/\1/p' "$tmp/$_t-base.sim")
	read -r _c _tp _m <<EOT
$(budgets "$_t" "$@")
EOT
	_dev=$((_p * 3 / 4 / GRAN * GRAN))
	[ "$_m" -le "$_dev" ] || fail "$_t: no plan reaches a device of $_dev bytes (smallest $_m)"

	_rc=0
	env SIMCUDA_MEMORY=$_dev "$SIMRUN" "$@" >"$tmp/$_t-plain-small.out" \
		2>"$tmp/$_t-plain-small.err" || _rc=$?
	[ "$_rc" = 2 ] || fail "$_t on $_dev bytes without libremat exited $_rc, not 2 (out of memory)"
	grep -q "out of device memory" "$tmp/$_t-plain-small.err" ||
		fail "$_t: no out-of-memory message: $(tail -n 2 "$tmp/$_t-plain-small.err")"

	# The plan comes from the cache (the acquisition is tested elsewhere):
	# the test does not depend on the planner finishing before the job.
	prefill "$_t-small" "$tmp/$_t-trace.d" "$_dev"
	RUN_ENV="SIMCUDA_MEMORY=$_dev"
	run_budget "$_t-small" "$_t-base" "$_dev" "$@"
	RUN_ENV=
	_err=$tmp/$_t-small.err
	# Offload is on by default: the copies are timed on this full device
	# too, in memory libremat's allocator finds within the budget (4 MiB
	# asked of the driver did not fit: no rate, no offload).
	grep -q "offload: host<->device copies at [1-9][0-9.]* GB/s" "$_err" ||
		fail "$_t: copies not timed: $(grep 'copies at' "$_err")"
	_sw=$(grep -n "^libremat: swapping in iteration" "$_err" | head -n 1 | cut -d: -f1)
	_ap=$(grep -n "applied from iteration" "$_err" | head -n 1 | cut -d: -f1)
	[ -n "$_sw" ] || fail "$_t: no swap reported: $(grep libremat "$_err" | tail -n 3)"
	[ "$_sw" -lt "$_ap" ] || fail "$_t: the first swaps are reported after the plan applied"
	_outs=$(sed -n 's/.*swapping before the plan: \([0-9]*\) out.*/\1/p' "$_err")
	[ "${_outs:-0}" -gt 0 ] || fail "$_t: no swap summary at exit"
	_sim=$(sed -n 's/.*peak_physical=\([0-9]*\).*/\1/p' "$tmp/$_t-small.sim")
	[ "$_sim" -le "$_dev" ] || fail "$_t: the device's peak $_sim exceeds its size $_dev"
	# The profile does not see the swaps: same graph, ops, references,
	# write sets and CUPTI kernel count as on the big device.
	python3 - "$tmp/$_t-trace.d/trace.json" "$tmp/$_t-small.d/trace.json" <<'PY' ||
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["graph_hash"] == b["graph_hash"], (a["graph_hash"], b["graph_hash"])
key = lambda t: [(o["name"], o["kind"], o["refs"], o["reads"], o["writes"], o["replayable"])
                 for o in t["ops"]]
assert key(a) == key(b), "ops differ"
buf = lambda t: [(x["size"], x["alloc_at"], x["free_at"], x["persistent"]) for x in t["buffers"]]
assert buf(a) == buf(b), "buffers differ"
assert a["cupti"]["kernels"] == b["cupti"]["kernels"] and b["cupti"]["mismatch"] == 0, \
    (a["cupti"], b["cupti"])
PY
		fail "$_t: the profile on the small device differs from the big device's"
	echo "$_t: device $_dev bytes (plain peak $_p): $_outs swap-outs before the plan," \
		"device peak $_sim; $(grep "swapping before the plan" "$_err" | sed 's/.*plan: //')"
}

small_device mlp "$TR/mlp" --iters 7
small_device gpt "$TR/gpt" --iters 8

# A budget below the device (the smallest the planner reaches): swaps
# before the plan, the cap after it.  (_m, _dev, _p: gpt's, from above.)
gmin=$_m
[ "$gmin" -lt "$_dev" ] || fail "gpt: the smallest budget $gmin is not below the device $_dev"
prefill gpt-min "$tmp/gpt-trace.d" "$gmin"
RUN_ENV="SIMCUDA_MEMORY=$_dev"
run_budget gpt-min gpt-base "$gmin" "$TR/gpt" --iters 8
RUN_ENV=
grep -q "swapping before the plan: [1-9]" "$tmp/gpt-min.err" || fail "gpt-min: no swaps"

# Half the plain peak, below anything a plan reaches: no plan, the job
# still finishes by swapping all along, with identical output.
half=$((_p / 2 / GRAN * GRAN))
run gpt-half "SIMCUDA_MEMORY=$half" "REMAT_BUDGET=$half" "REMAT_TRACE_DIR=$tmp/gpt-half.d" \
	"REMAT_CACHE_DIR=$tmp/gpt-half.cache" REMAT_LOG=1 LD_PRELOAD="$PRELOAD" -- "$TR/gpt" --iters 8
same gpt-base gpt-half
# The planner's answer: in the job's log when remat-plan finished before
# the job did; otherwise remat-plan outlives the job (to its deadline) and
# its own log says it, whatever the machine's load.
if ! grep -q "cannot be reached for this job" "$tmp/gpt-half.err"; then
	_w=0
	until grep -q "smallest reachable peak" "$tmp/gpt-half.d/plan.log" 2>/dev/null; do
		_w=$((_w + 1))
		[ "$_w" -le 120 ] ||
			fail "gpt-half: no answer from remat-plan: $(grep libremat "$tmp/gpt-half.err" |
				tail -n 2); $(tail -n 2 "$tmp/gpt-half.d/plan.log" 2>/dev/null)"
		sleep 1
	done
fi
grep -q "swapping before the plan: [1-9]" "$tmp/gpt-half.err" || fail "gpt-half: no swaps"
no_fault
echo "gpt on $half bytes (half the plain peak, no plan fits): $(grep "swapping before the plan" \
	"$tmp/gpt-half.err" | sed 's/.*plan: //')"
echo "run_small_device: ok"
