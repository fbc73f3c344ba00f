#!/bin/sh
# The arena trainer under libremat: trace mode and run mode print the same
# bytes as the run without it.  The trace shows the arenas (parameters,
# gradients, AdamW state, activations, activation gradients, inputs), each
# allocated before the iteration; the run-mode budget is half way from the
# persistent memory to the peak, in bytes from that trace (as run_lib.sh
# computes it for mlp and gpt), at least the smallest peak remat-plan can
# reach.  How much libremat saves on it is not asserted: activations in
# long-lived memory are the subject of their own issue.  Listed only when
# nvcc exists.
. tests/e2e/run_lib.sh
A=$TR/arena
run base -- "$A" --iters 8
read -r c p m <<EOT
$(budgets arena "$A" --iters 8)
EOT
same base arena-trace
check_trace "$tmp/arena-trace.d"
python3 - "$tmp/arena-trace.d/trace.json" <<'PY' || fail "the trace does not show the arenas"
import json, sys
bufs = json.load(open(sys.argv[1]))["buffers"]
assert len(bufs) == 6, f"{len(bufs)} buffers, want 5 arenas and the inputs"
for b in bufs:
    assert b["alloc_at"] == -1 and b["free_at"] == -1 and b["persistent"], b
PY
bud=$(frac "$c" "$p" "$m" 0.5)
run half "REMAT_BUDGET=$bud" "REMAT_TRACE_DIR=$tmp/half.d" "REMAT_CACHE_DIR=$tmp/half.cache" \
	REMAT_LOG=1 LD_PRELOAD="$PRELOAD" -- "$A" --iters 8
same base half
no_fault
summary=$(sed -n 's/^libremat: run mode: //p' "$tmp/half.err" | tr '\n' ' ')
echo "arena under libremat: identical in trace mode and at a budget of $bud bytes" \
	"(persistent $c, peak $p, smallest $m): ${summary:-no run-mode summary}"
