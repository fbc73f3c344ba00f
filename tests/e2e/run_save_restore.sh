#!/bin/sh
# A replayed kernel also writes a side output that has moved on since (chain
# --side: fwd_side writes a2 and a small m, m is overwritten later and read
# after a2's rebuild).  The plan saves m before the replay and restores it
# after: outputs byte-identical, also under slowed streams, and verification
# finds the rebuild bit-identical.
. tests/e2e/run_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
run base -- "$P/chain" "$P/chain.so" 30 --side
read -r c p m <<EOT
$(budgets chain "$P/chain" "$P/chain.so" 30 --side)
EOT
prefill side "$tmp/chain-trace.d" "$m"
grep -q '"save"' "$tmp"/side.cache/*.plan.json || fail "the plan saves nothing: the test proves nothing"
run_budget side base "$m" "$P/chain" "$P/chain.so" 30 --side
prefill slow "$tmp/chain-trace.d" "$m"
RUN_ENV=SIMCUDA_SLOW_STREAM=1
run_budget slow base "$m" "$P/chain" "$P/chain.so" 30 --side
RUN_ENV=REMAT_VERIFY=1
prefill verify "$tmp/chain-trace.d" "$m"
run_budget verify base "$m" "$P/chain" "$P/chain.so" 30 --side
RUN_ENV=
grep -q "every planned rebuild is bit-identical" "$tmp/verify.err" || fail "not verified"
echo "run_save_restore: ok"
