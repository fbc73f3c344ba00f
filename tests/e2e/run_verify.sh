#!/bin/sh
# Verification mode (REMAT_VERIFY=1).  tests/e2e/progs/chain --indirect has
# a kernel whose input hides behind a pointer in device memory and changes
# after the forward pass: the trace cannot see it, the planner rebuilds its
# output by replay, and the result is wrong.  Without verification the run
# differs (proof that the plan uses it); with it, the rebuild is compared
# bitwise against the original, the buffer is excluded and reported, the
# plan is dropped (re-planned without it where remat-plan can), and the
# outputs are byte-identical.  A sound plan (mlp) passes verification.
. tests/e2e/run_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
run base -- "$P/chain" "$P/chain.so" 40 --indirect
read -r c p m <<EOT
$(budgets chain "$P/chain" "$P/chain.so" 40 --indirect)
EOT
run noverify "REMAT_BUDGET=$m" "REMAT_TRACE_DIR=$tmp/nv.d" "REMAT_CACHE_DIR=$tmp/nv.cache" \
	LD_PRELOAD="$PRELOAD" -- "$P/chain" "$P/chain.so" 40 --indirect
! cmp -s "$tmp/base.out" "$tmp/noverify.out" ||
	fail "the non-replayable kernel was not planned for replay: the test proves nothing"
run verify "REMAT_BUDGET=$m" REMAT_VERIFY=1 REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/v.d" \
	"REMAT_CACHE_DIR=$tmp/v.cache" LD_PRELOAD="$PRELOAD" -- "$P/chain" "$P/chain.so" 40 --indirect
same base verify
grep -q "^libremat: verify: buffer [0-9]* rebuilt before op [0-9]* differs" "$tmp/verify.err" ||
	fail "no per-buffer verification line: $(grep libremat "$tmp/verify.err" | tail -n 4)"
grep -q "^libremat: verify: 1 buffer(s) rebuild differently or are read off the device" "$tmp/verify.err" ||
	fail "no verification summary"
# It is planned again without that buffer: remat-plan takes the exclusion
# (here nothing else can be evicted, so that plan says the budget is out of reach).
grep -q "^libremat: planning for a budget of [0-9]* bytes, never evicting buffers [0-9]" \
	"$tmp/verify.err" || fail "no re-plan with the exclusion: $(grep libremat "$tmp/verify.err" | tail -n 4)"
! grep -q "unknown option" "$tmp/verify.err" || fail "remat-plan refused --exclude"
sed -n '/planning again without them/,$p' "$tmp/verify.err" |
	grep -q "^libremat: REMAT_BUDGET of [0-9]* bytes cannot be reached\|applied from iteration" ||
	fail "the re-plan ended neither with a plan nor with its message"
# The summary is printed whatever REMAT_LOG says.
run verify0 "REMAT_BUDGET=$m" REMAT_VERIFY=1 "REMAT_TRACE_DIR=$tmp/v0.d" \
	"REMAT_CACHE_DIR=$tmp/v0.cache" LD_PRELOAD="$PRELOAD" -- "$P/chain" "$P/chain.so" 40 --indirect
same base verify0
grep -q "^libremat: verify: 1 buffer(s) rebuild differently or are read off the device" "$tmp/verify0.err" ||
	fail "no verification summary at the default log level"
no_fault
# A sound plan passes and is applied.
run mbase -- "$TR/mlp" --iters 7
read -r c p m <<EOT
$(budgets mlp "$TR/mlp" --iters 7)
EOT
RUN_ENV=REMAT_VERIFY=1
run_budget mverify mbase "$m" "$TR/mlp" --iters 7
RUN_ENV=
grep -q "every planned rebuild is bit-identical" "$tmp/mverify.err" || fail "mlp: not verified"
echo "run_verify: ok"
