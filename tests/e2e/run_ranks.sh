#!/bin/sh
# Data parallelism over NCCL (the simulated libnccl.so.2), two ranks started
# as torchrun starts them, through tools/remat-torchrun-wrapper.sh, each
# bounded by a timeout (a rank left waiting for its peer would hang):
#  - nccl_order: rank 1 starts its side of each all-reduce only once rank 0
#    has launched the kernel after its own; profiling must not synchronize
#    rank 0's whole context while the all-reduce is in flight;
#  - gpt --ranks 2 under REMAT_BUDGET=50%: each rank prints what it prints
#    without libremat, a plan applies within the budget, and the trace marks
#    every all-reduce a collective (never replayed, nothing evicted across);
#  - mlp --ranks 2 traced: the same bytes as without libremat.
. tests/e2e/run_lib.sh
W=$(pwd)/tools/remat-torchrun-wrapper.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/nccl_order" ] || fail "$P/nccl_order is not built (make remat-progs)"
LIMIT=${RANKS_TIMEOUT:-240}

# ranks NAME WRAP ENV... -- CMD ARGS...: two ranks at once (LOCAL_RANK 0 and
# 1, WORLD_SIZE 2), their own rendezvous directory; with WRAP=1 through the
# wrapper (libremat), else plain.  Outputs in $tmp/NAME.rankR.{out,err}.
ranks() {
	_n=$1 _wrap=$2
	shift 2
	_e=""
	while [ "$1" != "--" ]; do
		_e="$_e $1"
		shift
	done
	shift
	mkdir -p "$tmp/$_n.rdzv"
	for _r in 0 1; do
		if [ "$_wrap" = 1 ]; then
			# shellcheck disable=SC2086
			env $_e ${TEST_SAN_RUNTIME:+LD_PRELOAD=$PRELOAD} LOCAL_RANK=$_r WORLD_SIZE=2 \
				LIBREMAT_SO="$LIB" timeout "$LIMIT" "$W" "$SIMRUN" "$@" \
				>"$tmp/$_n.rank$_r.out" 2>"$tmp/$_n.rank$_r.err" &
		else
			# shellcheck disable=SC2086
			env $_e LOCAL_RANK=$_r WORLD_SIZE=2 timeout "$LIMIT" "$SIMRUN" "$@" \
				>"$tmp/$_n.rank$_r.out" 2>"$tmp/$_n.rank$_r.err" &
		fi
		eval "_pid$_r=\$!"
	done
	for _r in 0 1; do
		eval "_p=\$_pid$_r"
		wait "$_p" || fail "$_n: rank $_r exited $? (124: timed out): $(tail -n 3 "$tmp/$_n.rank$_r.err")"
	done
}

ranks order-plain 0 -- "$P/nccl_order" "$P/chain.so" 12 "$tmp/order-plain.rdzv"
same order-plain.rank0 order-plain.rank1
ranks order 1 REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/order.d" -- \
	"$P/nccl_order" "$P/chain.so" 12 "$tmp/order.rdzv"
for r in 0 1; do
	same order-plain.rank0 order.rank$r
	[ -s "$tmp/order.d/rank$r/trace.json" ] || fail "order: rank $r wrote no trace"
done

set -- "$TR/gpt" --iters 10 --batch 16 --seq 64 --ranks 2
ranks gpt-plain 0 -- "$@" --rendezvous "$tmp/gpt-plain.rdzv"
ranks gpt 1 REMAT_BUDGET=50% REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/gpt.d" "REMAT_CACHE_DIR=$tmp/gpt.c" \
	-- "$@" --rendezvous "$tmp/gpt.rdzv"
for r in 0 1; do
	same gpt-plain.rank$r gpt.rank$r
	grep -q "applied from iteration" "$tmp/gpt.rank$r.err" ||
		fail "gpt: rank $r applied no plan: $(grep libremat "$tmp/gpt.rank$r.err" | tail -n 3)"
	line=$(grep "physical peak .* in replay iterations, budget" "$tmp/gpt.rank$r.err") ||
		fail "gpt: rank $r: no replay peak"
	peak=$(echo "$line" | sed 's/.*peak \([0-9]*\) bytes.*/\1/')
	bud=$(echo "$line" | sed 's/.*budget \([0-9]*\).*/\1/')
	[ "$peak" -le "$bud" ] || fail "gpt: rank $r: peak $peak over the budget $bud"
	python3 - "$tmp/gpt.d/rank$r/trace.json" "$tmp"/gpt.c/*.plan.json <<'PY' || fail "gpt: rank $r: collectives"
import json, sys
t = json.load(open(sys.argv[1]))
coll = [o for o in t["ops"] if "ncclDevKernel_" in o["name"]]
assert coll, "no collective in the trace"
for o in coll:
    assert o.get("collective") is True and o["replayable"] is False, o
    assert o["why_not"] == "collective", o
    assert set(o["reads"]) == set(o["writes"]), o
positions = {o["i"] for o in coll}
for path in sys.argv[2:]:
    p = json.load(open(path))
    for op in p["ops"]:
        for s in op.get("before", []):
            assert not (s[0] == "replay" and s[1] in positions), (path, s)
PY
done

set -- "$TR/mlp" --iters 6 --ranks 2
ranks mlp-plain 0 -- "$@" --rendezvous "$tmp/mlp-plain.rdzv"
ranks mlp 1 REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/mlp.d" -- "$@" --rendezvous "$tmp/mlp.rdzv"
for r in 0 1; do
	same mlp-plain.rank$r mlp.rank$r
done
grep -q "^checksum" "$tmp/mlp.rank0.out" || fail "mlp: no checksum"
echo "run_ranks: ok"
