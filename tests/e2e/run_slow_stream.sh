#!/bin/sh
# Run mode with every op on a user stream slowed down (SIMCUDA_SLOW_STREAM):
# the host runs far ahead of the device, so an eviction that did not wait for
# every stream that used the buffer, or a rebuild not ordered on the
# consumer's stream, shows as a simulator fault or wrong bytes.  Inputs are
# copied on a second stream by the trainers; gpt also runs backward on a
# second host thread.
. tests/e2e/run_lib.sh
run mbase -- "$TR/mlp" --iters 6
read -r c p m <<EOT
$(budgets mlp "$TR/mlp" --iters 6)
EOT
prefill mslow "$tmp/mlp-trace.d" "$m"
RUN_ENV=SIMCUDA_SLOW_STREAM=1
run_budget mslow mbase "$m" "$TR/mlp" --iters 6
RUN_ENV=
run gbase -- "$TR/gpt" --iters 5 --bwd-thread
read -r c p m <<EOT
$(budgets gpt "$TR/gpt" --iters 5 --bwd-thread)
EOT
prefill gslow "$tmp/gpt-trace.d" "$m"
RUN_ENV=SIMCUDA_SLOW_STREAM=1
run_budget gslow gbase "$m" "$TR/gpt" --iters 5 --bwd-thread
RUN_ENV=
echo "run_slow_stream: ok"
