#!/bin/sh
# mlp and gpt print byte-identical output without the preload, with it and
# no REMAT_* variable, with REMAT_MODE=off, and in trace mode (which also
# writes a valid trace).
. tests/e2e/trace_lib.sh
for t in mlp gpt; do
	run $t-none -- $TR/$t --iters 6
	run $t-pass LD_PRELOAD="$PRELOAD" -- $TR/$t --iters 6
	run $t-off LD_PRELOAD="$PRELOAD" REMAT_MODE=off -- $TR/$t --iters 6
	run $t-trace LD_PRELOAD="$PRELOAD" REMAT_TRACE_DIR=$tmp/$t-trace -- $TR/$t --iters 6
	same $t-none $t-pass
	same $t-none $t-off
	same $t-none $t-trace
	# Without REMAT_* libremat says nothing at all.
	[ ! -s "$tmp/$t-pass.err" ] || fail "$t: pass-through printed: $(head -n 3 "$tmp/$t-pass.err")"
	[ ! -s "$tmp/$t-off.err" ] || fail "$t: REMAT_MODE=off printed: $(head -n 3 "$tmp/$t-off.err")"
	check_trace "$tmp/$t-trace"
done
# A second host thread for backward: still identical, still traced.
run mlp-bwd-none -- $TR/mlp --iters 6 --bwd-thread
run mlp-bwd-trace LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/bwd -- $TR/mlp --iters 6 \
	--bwd-thread
same mlp-bwd-none mlp-bwd-trace
check_trace "$tmp/bwd"
echo "PASS: identical output with and without libremat (none, pass-through, off, trace)"
