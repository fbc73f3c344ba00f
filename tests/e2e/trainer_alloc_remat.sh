#!/bin/sh
# Every --alloc mode under libremat in trace mode: mlp and gpt print the
# bytes they print without it, and a valid trace of one iteration is
# written; the pool modes also with a backward thread (mlp) and gradient
# accumulation (gpt).  How much libremat saves on the pool modes is
# asserted by run_alloc_pool.sh (caching) and run_alloc_vmm.sh (vmm).
. tests/e2e/trace_lib.sh

# traced TRAINER FLAGS MODES: each mode traced, the same bytes as without.
traced() {
	tag=$1.$(echo "$2" | tr -d ' -')
	# shellcheck disable=SC2086
	run "$tag" -- "$TR/$1" --iters 8 $2
	for m in $3; do
		# shellcheck disable=SC2086
		run "$tag.$m" LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR="$tmp/$tag.$m.d" \
			-- "$TR/$1" --iters 8 $2 --alloc $m
		same "$tag" "$tag.$m"
		check_trace "$tmp/$tag.$m.d"
	done
}
traced mlp "" "async caching vmm"
traced gpt "" "async caching vmm"
traced mlp --bwd-thread "caching vmm"
traced gpt "--accum 2" "caching vmm"
echo "trainer --alloc under libremat (trace mode): identical, traced"
