#!/bin/sh
# REMAT_WRITE_PROOF=0 keeps the profile from running any kernel the
# program did not launch (docs/run-mode.md): for a program whose kernels
# synchronize through memory in a way the default's rule does not see
# (tests/e2e/trace_spin_safe.sh shows the rule on a split-K GEMM).
#
# tests/e2e/progs/chain --count launches fwd_counted, which adds one to a
# counter in mapped host memory (which the profile neither copies nor puts
# back) each time the device runs it, and prints its launches and the
# device's runs.  In trace mode with REMAT_WRITE_PROOF=0, the two agree in
# every layout of the activations (allocated per iteration, long-lived, in
# one arena, in a reused block), and the trace has the counted kernel in
# it (so the profiled iteration did run); by default and with
# REMAT_WRITE_PROOF=1 the proofs' second launches show up as runs the
# program never asked for.  The output is the same as without libremat
# every way.
. tests/e2e/trace_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"

# counts NAME: "launches runs" from run NAME's stderr.
counts() {
	sed -n 's/^fwd_counted: \([0-9]*\) launches, \([0-9]*\) runs$/\1 \2/p' "$tmp/$1.err"
}

for layout in "" --persistent --arena --reuse; do
	n=${layout#--}
	n=${n:-fresh}
	set -- "$P/chain" "$P/chain.so" 12 --count $layout
	run "$n-base" -- "$@"
	read -r l r <<EOT
$(counts "$n-base")
EOT
	[ -n "$l" ] && [ "$l" -gt 0 ] && [ "$l" = "$r" ] ||
		fail "$n: without libremat fwd_counted ran ${r:-?} times for ${l:-?} launches"
	run "$n-off" REMAT_MODE=trace REMAT_WRITE_PROOF=0 "REMAT_TRACE_DIR=$tmp/$n-off.d" \
		LD_PRELOAD="$PRELOAD" -- "$@"
	run "$n-default" REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/$n-default.d" \
		LD_PRELOAD="$PRELOAD" -- "$@"
	run "$n-proof" REMAT_MODE=trace REMAT_WRITE_PROOF=1 "REMAT_TRACE_DIR=$tmp/$n-proof.d" \
		LD_PRELOAD="$PRELOAD" -- "$@"
	for t in off default proof; do
		same "$n-base" "$n-$t"
		check_trace "$tmp/$n-$t.d"
		grep -q '"name": "fwd_counted"' "$tmp/$n-$t.d/trace.json" ||
			fail "$n-$t: the profiled iteration has no fwd_counted"
	done
	[ "$(counts "$n-off")" = "$l $l" ] ||
		fail "$n: the profile with REMAT_WRITE_PROOF=0 ran kernels the program did not launch:" \
			"$(counts "$n-off") (launches, runs)"
	runs=''
	for t in default proof; do
		read -r pl pr <<EOT
$(counts "$n-$t")
EOT
		[ "$pl" = "$l" ] && [ "$pr" -gt "$l" ] ||
			fail "$n-$t: the proofs ran no second launch ($pl launches, $pr runs)"
		runs="$runs $pr"
	done
	echo "$n: $l launches; runs: $l with REMAT_WRITE_PROOF=0, by default and with 1:$runs"
done
echo "trace_no_relaunch: ok"
