#!/bin/sh
# Run mode with a bad plan in the cache: a corrupt one (truncated), and one
# made for another graph stored under this graph's name.  Each gives a
# message, never a wrong result: the outputs stay byte-identical.
. tests/e2e/run_lib.sh
run base -- "$TR/mlp" --iters 7
read -r c p m <<EOT
$(budgets mlp "$TR/mlp" --iters 7)
EOT
prefill first "$tmp/mlp-trace.d" "$m"
run_budget first base "$m" "$TR/mlp" --iters 7
plan=$(ls "$tmp"/first.cache/*.plan.json 2>/dev/null | head -n 1)
[ -n "$plan" ] || fail "no plan was cached"

# Corrupt: the first half of the file.
mkdir -p "$tmp/corrupt.cache"
head -c "$(($(wc -c <"$plan") / 2))" "$plan" >"$tmp/corrupt.cache/$(basename "$plan")"
run corrupt "REMAT_BUDGET=$m" "REMAT_TRACE_DIR=$tmp/corrupt.d" "REMAT_CACHE_DIR=$tmp/corrupt.cache" \
	LD_PRELOAD="$PRELOAD" -- "$TR/mlp" --iters 7
same base corrupt
grep -q "libremat: .*plan" "$tmp/corrupt.err" || fail "corrupt plan: no message"

# Another graph: gpt's plan under mlp's name.
run gbase -- "$TR/gpt" --iters 7
read -r gc gp gm <<EOT
$(budgets gpt "$TR/gpt" --iters 7)
EOT
prefill gfirst "$tmp/gpt-trace.d" "$gm"
run_budget gfirst gbase "$gm" "$TR/gpt" --iters 7
gplan=$(ls "$tmp"/gfirst.cache/*.plan.json | head -n 1)
mkdir -p "$tmp/other.cache"
cp "$gplan" "$tmp/other.cache/$(basename "$plan")"
run other "REMAT_BUDGET=$m" "REMAT_TRACE_DIR=$tmp/other.d" "REMAT_CACHE_DIR=$tmp/other.cache" \
	LD_PRELOAD="$PRELOAD" -- "$TR/mlp" --iters 7
same base other
grep -q "libremat: .*plan" "$tmp/other.err" || fail "plan of another graph: no message"
echo "corrupt: $(grep libremat "$tmp/corrupt.err" | head -n 2 | tr '\n' ' ')"
echo "other graph: $(grep libremat "$tmp/other.err" | head -n 2 | tr '\n' ' ')"
no_fault
echo "run_plan_errors: ok"
