#!/bin/sh
# By default the profile never runs a kernel the program did not launch
# (REMAT_WRITE_PROOF, docs/run-mode.md): on a GPU a kernel that
# synchronizes its blocks through memory (cuBLAS split-K semaphores) can
# spin forever when run again from content it never ran on, and nothing
# stops a running kernel short of losing the context.
#
# tests/e2e/progs/chain --count launches fwd_counted, which adds one to a
# counter in mapped host memory (which the profile neither copies nor puts
# back) each time the device runs it, and prints its launches and the
# device's runs.  In trace mode with the default, the two agree in every
# layout of the activations (allocated per iteration, long-lived, in one
# arena, in a reused block), and the trace has the counted kernel in it
# (so the profiled iteration did run); with REMAT_WRITE_PROOF=1 the
# proofs' second launches show up as runs the program never asked for.
# The output is the same as without libremat either way.
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
	run "$n-default" REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/$n-default.d" \
		LD_PRELOAD="$PRELOAD" -- "$@"
	run "$n-proof" REMAT_MODE=trace REMAT_WRITE_PROOF=1 "REMAT_TRACE_DIR=$tmp/$n-proof.d" \
		LD_PRELOAD="$PRELOAD" -- "$@"
	same "$n-base" "$n-default"
	same "$n-base" "$n-proof"
	for t in default proof; do
		check_trace "$tmp/$n-$t.d"
		grep -q '"name": "fwd_counted"' "$tmp/$n-$t.d/trace.json" ||
			fail "$n-$t: the profiled iteration has no fwd_counted"
	done
	[ "$(counts "$n-default")" = "$l $l" ] ||
		fail "$n: the profile with the default ran kernels the program did not launch:" \
			"$(counts "$n-default") (launches, runs)"
	read -r pl pr <<EOT
$(counts "$n-proof")
EOT
	[ "$pl" = "$l" ] && [ "$pr" -gt "$l" ] ||
		fail "$n: REMAT_WRITE_PROOF=1 ran no second launch ($pl launches, $pr runs)"
	echo "$n: $l launches; runs: $l by default, $pr with REMAT_WRITE_PROOF=1"
done
echo "trace_no_relaunch: ok"
