#!/bin/sh
# REMAT_VERIFY=1 covers what a plan keeps off the device, not only its
# rebuilds (issue 31).  tests/e2e/progs/real/indirect.cu reads activation a
# in mix through a pointer kept in device memory, which no profile sees; at
# 65% the plan frees a between encode and decode, and without verification
# mix faults (the negative control).  With REMAT_VERIFY=1 the verification
# iteration poisons a over that window, mix run on the poison and on the
# real content writes other bytes, a is excluded, and the job is planned
# again without it: no fault, the plain run's output.  At 75% the plan
# frees nothing mix reads: verification passes and the plan applies.
. tests/e2e/run_lib.sh
real_trace indirect
# Plans from the trace, in the cache before each run (the job is shorter
# than planning on a loaded machine): 65% and 75% of the peak, in bytes.
b65=$(peak_share 65) b75=$(peak_share 75)
prefill n65 "$tmp/t.d" "$b65" --plan-version 2
env "REMAT_BUDGET=$b65" REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/n65.d" "REMAT_CACHE_DIR=$tmp/n65.cache" \
	LD_PRELOAD="$PRELOAD" "$SIMRUN" "$P/indirect" >"$tmp/noverify.out" 2>"$tmp/noverify.log" &&
	fail "65% without verification ran clean: the test no longer frees what mix reads"
grep -q "simcuda: fault: kernel '_Z3mix" "$tmp/noverify.log" ||
	fail "65% without verification: no fault in mix: $(tail -n 3 "$tmp/noverify.log")"
prefill v65 "$tmp/t.d" "$b65" --plan-version 2
run v65 REMAT_VERIFY=1 "REMAT_BUDGET=$b65" REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/v65.d" \
	"REMAT_CACHE_DIR=$tmp/v65.cache" LD_PRELOAD="$PRELOAD" -- "$P/indirect"
same base v65
no_fault
grep -q "verify: op [0-9]* (_Z3mix[^)]*) reads buffer [0-9]* while the plan keeps it off" \
	"$tmp/v65.err" || fail "65%: verification did not name mix: $(grep verify "$tmp/v65.err")"
grep -q "planning again without them" "$tmp/v65.err" || fail "65%: not planned again"
prefill v75 "$tmp/t.d" "$b75" --plan-version 2
run v75 REMAT_VERIFY=1 "REMAT_BUDGET=$b75" REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/v75.d" \
	"REMAT_CACHE_DIR=$tmp/v75.cache" LD_PRELOAD="$PRELOAD" -- "$P/indirect"
same base v75
no_fault
grep -q "verify: every planned rebuild is bit-identical" "$tmp/v75.err" ||
	fail "75%: verification did not pass: $(grep verify "$tmp/v75.err")"
grep -q "physical peak [0-9]* bytes in replay iterations" "$tmp/v75.err" ||
	fail "75%: the plan did not apply after verification"
echo "real_verify_window: ok"
