#!/bin/sh
# Pool space no op touches, kept on the host (issue 10): gpt --alloc
# caching keeps regions of its segments live across iterations that no op
# of the iteration references (the free tail of a segment, small untouched
# tensors sharing chunks with activations).  Nothing proves their content
# dead, so a plan made with offload allowed parks them (parked_on_host):
# copied to pinned host memory once, when the plan starts applying, and
# unmapped for as long as it applies.  At 45% of the unmodified peak, which
# a plan without offload does not reach (it stops at 47%): output identical
# to the run without libremat, evictions, the replay iterations' physical
# peak within the budget, each parked buffer copied out once; with
# REMAT_VERIFY=1 the verifying iteration brings them back and nothing
# differs.  A program that touches a parked region in a later iteration
# (gpt --touch-tail N) gets its content back before the op runs: the output
# is still identical.  With REMAT_WRITE_PROOF=1: the proof of unread bytes
# takes gpt caching's plans without offload to 47% (by default, without
# the proofs, the pool's activations are updates and little is saved).
. tests/e2e/run_lib.sh
export REMAT_WRITE_PROOF=1
set -- "$TR/gpt" --alloc caching --layers 4 --batch 16 --iters 12
run base -- "$@"
read -r c p m <<EOT
$(budgets gpt "$@")
EOT
bud=$((p * 45 / 100))
# Without offload (no parking) 45% is out of reach; with it, it is not.
"$PLAN" "$tmp/gpt-trace.d" --budget "$bud" --plan-version 2 >"$tmp/noff.txt" 2>&1 &&
	fail "45% ($bud) reached without offload: $(grep 'planned peak' "$tmp/noff.txt")"
prefill_offload park "$tmp/gpt-trace.d" "$bud"
n=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1])).get('parked_on_host', [])))" \
	"$tmp/park.cache"/*.plan.json)
[ "$n" -gt 0 ] || fail "the plan at 45% parks nothing"
grep -q "parked on host:  $n buffers" "$tmp/park.plan.txt" || fail "remat-plan does not say what it parks"

# parked RUN: copies out of parked buffers, from the run's last line.
parked() {
	sed -n 's/.*offloads, \([0-9]*\) parked.*/\1/p' "$tmp/$1.err"
}

RUN_ENV=REMAT_OFFLOAD=1
run_budget park base "$bud" "$@"
[ "$_ev" != "${_ev#0 }" ] && fail "park: no evictions ($_ev)"
[ "$(parked park)" = "$n" ] || fail "park: $(parked park) copies out of $n parked buffers (once each expected)"
grep -q "offload: $n buffers no op touches parked on the host" "$tmp/park.err" ||
	fail "park: no pinned memory for the parked buffers: $(grep 'offload:' "$tmp/park.err")"

# A copy out that fails (the simulator refuses the N-th pinned copy: the
# profile's come first, then 6 for the copy rate measurement, the next
# parks the first buffer, the one after the second): what was parked comes
# back, the plan stops, the output is the same.
l=$(locked park)
[ "$l" -gt 0 ] || fail "park: the profile made no page-locked copies"
for k in $((l + 7)) $((l + 8)); do
	mkdir -p "$tmp/fail$k.cache"
	cp "$tmp/park.cache"/*.plan.json "$tmp/fail$k.cache/"
	run fail$k REMAT_OFFLOAD=1 SIMCUDA_FAIL_COPY=$k REMAT_BUDGET="$bud" REMAT_LOG=1 \
		"REMAT_TRACE_DIR=$tmp/fail$k.d" "REMAT_CACHE_DIR=$tmp/fail$k.cache" \
		LD_PRELOAD="$PRELOAD" -- "$@"
	same base fail$k
	grep -q "cannot park a buffer on the host (CUDA error 2); the plan is dropped" \
		"$tmp/fail$k.err" || fail "fail$k: $(grep libremat "$tmp/fail$k.err" | tail -n 3)"
	no_fault
done

# Verification first: the verifying iteration has them back, the next
# ones park them (once more).
mkdir -p "$tmp/ver.cache"
cp "$tmp/park.cache"/*.plan.json "$tmp/ver.cache/"
RUN_ENV="REMAT_OFFLOAD=1 REMAT_VERIFY=1"
run_budget ver base "$bud" "$@"
verified ver
[ "$(parked ver)" = "$n" ] || fail "ver: $(parked ver) copies out of $n parked buffers"

# A later iteration reads the never-used tails of the pool's segments
# (gpt --pool-tail 10: filled with a pattern when made, parked by the
# plan): the read is an op the profile does not have there, so the
# iteration diverges and everything comes back before the copy runs, and the digest is the same as without
# libremat.  The next iteration parks them again.
set -- "$@" --pool-tail 10
run touch-base -- "$@"
grep -q "^pool tail " "$tmp/touch-base.out" || fail "gpt printed no pool tail digest"
budgets touch "$@" >/dev/null
prefill_offload touch "$tmp/touch-trace.d" "$bud"
RUN_ENV=REMAT_OFFLOAD=1
NOPEAK=1 run_budget touch touch-base "$bud" "$@"
grep -q "diverges from the profile" "$tmp/touch.err" || fail "touch: the read of the parked tails was not caught: $(grep libremat "$tmp/touch.err" | tail -n 3)"
k=$(parked touch)
[ "$k" -gt "$n" ] || fail "touch: $k copies out of parked buffers: not parked again after the read"
echo "run_park: ok"
