#!/bin/sh
# A device smaller than one unmodified iteration.  libremat can only evict
# once it has profiled an iteration and has a plan; before that (warm-up,
# iteration detection, the profiled iteration, planning) the job runs
# unmodified, so a device too small for one unmodified iteration fails with
# or without libremat; with it, one line says why.  A device that holds the
# unmodified iterations runs the later ones within a smaller budget.
. tests/e2e/run_lib.sh
run base -- "$TR/mlp" --iters 7
read -r c p m <<EOT
$(budgets mlp "$TR/mlp" --iters 7)
EOT
small=$((p * 3 / 4))
if env SIMCUDA_MEMORY=$small "$SIMRUN" "$TR/mlp" --iters 7 >"$tmp/small0.out" 2>"$tmp/small0.err"; then
	fail "mlp fits $small bytes without libremat: the test proves nothing"
fi
if env SIMCUDA_MEMORY=$small REMAT_BUDGET="$m" "REMAT_TRACE_DIR=$tmp/s.d" \
	"REMAT_CACHE_DIR=$tmp/s.cache" LD_PRELOAD="$LIB" "$SIMRUN" "$TR/mlp" --iters 7 \
	>"$tmp/small1.out" 2>"$tmp/small1.err"; then
	fail "mlp ran on $small bytes with libremat before any plan existed?"
fi
grep -q "^libremat: the device is out of memory .* while no plan is applied" "$tmp/small1.err" ||
	fail "no explanation: $(grep libremat "$tmp/small1.err" | tail -n 3)"
[ "$(grep -c "^libremat: the device is out of memory" "$tmp/small1.err")" = 1 ] ||
	fail "the explanation is repeated"
# The device holds the unmodified iterations: the replay iterations keep to
# the budget (checked by run_budget), the run succeeds.
RUN_ENV="SIMCUDA_MEMORY=$((p + p / 4))"
prefill fits "$tmp/mlp-trace.d" "$m"
run_budget fits base "$m" "$TR/mlp" --iters 7
RUN_ENV=
echo "run_small_device: ok (device of $small bytes: fails with a message; budget $m on a device of $((p + p / 4)))"
