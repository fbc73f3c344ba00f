#!/bin/sh
# Planned offload to pinned host memory (REMAT_OFFLOAD=1, plan version 3):
# mlp and gpt at half their per-iteration memory with a plan that offloads
# (remat-plan --offload-gbps at the simulated PCIe rate) train byte-identical
# to the runs without libremat, within the budget, with offloads counted;
# the simulator aborts any op that uses a prefetch's destination before the
# copy is waited for, so a missing event dependency fails the run.
# REMAT_VERIFY=1 compares each prefetched buffer with the original.
# Plans made with offload off are cached under a name of their own, so
# neither setting takes the other's plan; REMAT_OFFLOAD=0 refuses a plan
# that offloads put under its name and plans again without it.  On copy engines too slow to hide a copy the runtime measures
# that and its planner recomputes instead.  A copy that fails (injected)
# brings everything back and stops the plan, the output unchanged.
. tests/e2e/run_lib.sh

offloads() {
	sed -n 's/.*unplanned rebuilds, \([0-9]*\) offloads.*/\1/p' "$tmp/$1.err"
}

for t in mlp gpt; do
	run "$t-base" -- "$TR/$t" --iters 6
	read -r c p m <<EOT
$(budgets "$t" "$TR/$t" --iters 6)
EOT
	half=$(frac "$c" "$p" "$m" 0.5)
	[ $t = gpt ] && gpt_half=$half
	prefill_offload "$t-off" "$tmp/$t-trace.d" "$half"
	# Offload is on by default: the mlp runs without REMAT_OFFLOAD.
	if [ $t = mlp ]; then RUN_ENV=; else RUN_ENV=REMAT_OFFLOAD=1; fi
	run_budget "$t-off" "$t-base" "$half" "$TR/$t" --iters 6
	n=$(offloads "$t-off")
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "$t: no offloads: $(grep libremat "$tmp/$t-off.err" | tail -n 3)"
	# The pool: copies that are on the host at different times share bytes,
	# so it is no more than a slot per copy and no less than the bytes
	# held at once (which the plan says, before slots round to 4 KiB).
	read -r pool sum held <<EOT
$(sed -n 's/.*offload: \([0-9]*\) bytes of pinned host memory for the plan ([0-9]* copies of \([0-9]*\) bytes, at most \([0-9]*\) held at once).*/\1 \2 \3/p' "$tmp/$t-off.err")
EOT
	[ -n "$held" ] || fail "$t: no pinned pool: $(grep 'offload' "$tmp/$t-off.err")"
	[ "$held" -le "$pool" ] && [ "$pool" -le "$sum" ] ||
		fail "$t: pool of $pool bytes for $sum bytes of copies, $held at once"
	python3 - "$held" "$tmp/$t-off.cache"/*.plan.json <<'PY' || fail "$t: the pool is not what the plan holds at once"
import json, sys
held, plan = int(sys.argv[1]), json.load(open(sys.argv[2]))
# the planner's figure counts bytes, the pool 4 KiB slots: at most 4 KiB a copy more
n = sum(1 for e in plan["ops"] for st in e.get("before", []) if st[0] == "offload")
assert plan["host_bytes"] <= held <= plan["host_bytes"] + 4096 * n, (held, plan["host_bytes"])
PY

	# A copy that fails (the simulator refuses the N-th pinned copy: the
	# profile's come first, then 6 for the rate measurement, then gpt's plan
	# copies out before it prefetches): everything on the host comes back,
	# the plan stops, the output is the same.
	if [ $t = gpt ]; then
		l=$(locked "$t-off")
		[ "$l" -gt 0 ] || fail "$t: the profile made no page-locked copies"
		for n in $((l + 7)) $((l + 44)); do
			prefill_offload "$t-fc$n" "$tmp/$t-trace.d" "$half"
			RUN_ENV="REMAT_OFFLOAD=1 SIMCUDA_FAIL_COPY=$n"
			NOPEAK=1 run_budget "$t-fc$n" "$t-base" "$half" "$TR/$t" --iters 6
			grep -q "failed (CUDA error 2) and was done again without the budget" "$tmp/$t-fc$n.err" ||
				fail "$t: failed copy $n: $(grep libremat "$tmp/$t-fc$n.err" | tail -n 3)"
		done
	fi

	# The rest on gpt only (make test's time).
	[ $t = gpt ] || continue

	# Verification: every prefetch is compared with what it replaces.
	prefill_offload "$t-ver" "$tmp/$t-trace.d" "$half"
	RUN_ENV="REMAT_OFFLOAD=1 REMAT_VERIFY=1"
	run_budget "$t-ver" "$t-base" "$half" "$TR/$t" --iters 6
	grep -q "every planned rebuild is bit-identical" "$tmp/$t-ver.err" ||
		fail "$t: not verified: $(grep libremat "$tmp/$t-ver.err" | tail -n 3)"

	# Switched off: a plan made with offload is not looked for (plans made
	# with offload off are cached under <hash>-<budget>-nooffload), and one
	# that offloads put under that name is refused and planned again.
	prefill_offload "$t-no" "$tmp/$t-trace.d" "$half"
	on=$(ls "$tmp/$t-no.cache"/*.plan.json)
	off=${on%.plan.json}-nooffload.plan.json
	cp "$on" "$off"
	RUN_ENV=REMAT_OFFLOAD=0
	run "$t-base12" -- "$TR/$t" --iters 12
	run_budget "$t-no" "$t-base12" "$half" "$TR/$t" --iters 12
	grep -q "rejected: it offloads buffers to host memory, which REMAT_OFFLOAD=0 switches off" \
		"$tmp/$t-no.err" || fail "$t: REMAT_OFFLOAD=0 took the plan: $(grep libremat "$tmp/$t-no.err" | tail -n 3)"
	[ "$(offloads "$t-no")" = 0 ] || fail "$t: offloads with REMAT_OFFLOAD=0"
	grep -q "new plan $off " "$tmp/$t-no.err" || fail "$t: REMAT_OFFLOAD=0 cached no plan as $off"
	grep -q '"offload_gbps"' "$on" || fail "$t: REMAT_OFFLOAD=0 touched the plan made with offload"
	# The other way round: that plan made with offload off is never reused
	# once offload is on (it would be forever); a plan that offloads is made.
	mkdir -p "$tmp/$t-re.cache"
	cp "$off" "$tmp/$t-re.cache/"
	RUN_ENV=REMAT_OFFLOAD=1
	run_budget "$t-re" "$t-base12" "$half" "$TR/$t" --iters 12
	! grep -q "cached plan" "$tmp/$t-re.err" || fail "$t: a plan made with offload off was reused"
	n=$(offloads "$t-re")
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "$t: planned with offload on, yet no offloads: $(grep libremat "$tmp/$t-re.err" | tail -n 3)"
	# Timing the copies takes device memory within the budget: the device's
	# peak (set by the iterations before the plan) is the one without
	# offload, which times nothing, give or take the pool's timing (1 MiB).
	# (The 4 MiB it took outside the budget added 4 MiB here.)
	p_off=$(sed -n 's/.*peak_physical=\([0-9]*\).*/\1/p' "$tmp/$t-off.sim")
	p_no=$(sed -n 's/.*peak_physical=\([0-9]*\).*/\1/p' "$tmp/$t-no.sim")
	[ "$p_off" -le $((p_no + 1048576)) ] ||
		fail "$t: device peak $p_off with offload, $p_no without: timing the copies took memory"
	grep -q "offload: host<->device copies at [0-9.]* GB/s ([0-9]* bytes timed)" "$tmp/$t-off.err" ||
		fail "$t: copies not timed: $(grep 'copies at' "$tmp/$t-off.err")"
done

# Copy engines 5000 times slower than an H100's link: the runtime measures
# it, its planner recomputes instead of offloading.
RUN_ENV="REMAT_OFFLOAD=1 SIMCUDA_PCIE_GBPS=0.01"
run_budget gpt-slow gpt-base12 "$gpt_half" "$TR/gpt" --iters 12
grep -q "offload: host<->device copies at 0.0 GB/s" "$tmp/gpt-slow.err" ||
	fail "slow link: not measured: $(grep 'offload' "$tmp/gpt-slow.err")"
[ "$(offloads gpt-slow)" = 0 ] || fail "slow link: offloaded anyway"
RUN_ENV=

# A bad value: one message, the job untouched.
run bad REMAT_OFFLOAD=yes "REMAT_TRACE_DIR=$tmp/bad.d" LD_PRELOAD="$PRELOAD" -- "$TR/mlp" --iters 6
same mlp-base bad
grep -q 'REMAT_OFFLOAD="yes"' "$tmp/bad.err" || fail "REMAT_OFFLOAD=yes: no message: $(cat "$tmp/bad.err")"
echo "run_offload: ok"
