#!/bin/sh
# Activations inside the program's own pool (issue 10): mlp and gpt with
# --alloc caching take every tensor from segments allocated once and
# reused across iterations (like PyTorch's native caching allocator), so
# the managed memory level never moves.  The iteration boundary then goes
# after the step's last copy to the host (the loss read back), not at an
# arbitrary op: activations are written and read inside one iteration and
# their regions are dead across the boundary.  Run mode at 50% of the
# unmodified peak (mlp) and at the smallest budget remat-plan reaches
# (gpt, whose parameters and optimizer state share segments with small
# tensors, which share chunks with activations; below 60% since chunks
# regions share are unmapped once all of them are out): output identical
# to the run without libremat, evictions, the physical peak of the replay
# iterations within the budget.  The regions are dead across the boundary
# and written blind only as the proofs show them, with their default
# (REMAT_WRITE_PROOF=data: words that held data perturbed): without them
# (0) a pool's activations are updates of the last iteration's and
# nothing is saved.
. tests/e2e/run_lib.sh
for t in mlp gpt; do
	if [ $t = mlp ]; then
		set -- "$TR/mlp" --alloc caching --layers 4 --batch 1024 --iters 12
	else
		set -- "$TR/gpt" --alloc caching --layers 4 --batch 16 --iters 12
	fi
	run "$t-base" -- "$@"
	read -r c p m <<EOT
$(budgets "$t" "$@")
EOT
	check_trace "$tmp/$t-trace.d"
	# The smallest peak of the plans run mode asks for (version 2: buffers
	# left unmapped at the boundary).
	"$PLAN" "$tmp/$t-trace.d" --budget 1 --plan-version 2 >"$tmp/$t-min2.txt" 2>&1 || true
	m=$(sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p' "$tmp/$t-min2.txt")
	[ -n "$m" ] || fail "$t: remat-plan gave no smallest peak: $(tail -n 2 "$tmp/$t-min2.txt")"
	python3 - "$tmp/$t-trace.d/trace.json" <<'PY' || fail "$t: the boundary is not after the loss read back"
import json, sys
t = json.load(open(sys.argv[1]))
ops = t["ops"]
assert ops[-1]["name"] == "memcpyDtoH", [o["name"] for o in ops[-3:]]
assert not any(o["name"] == "memcpyDtoH" for o in ops[:-1]), "another read back in the iteration"
dead = [b for b in t["buffers"] if b.get("region") and b.get("dead_across_boundary")]
assert len(dead) >= 8, f"{len(dead)} regions dead across the boundary"
PY
	if [ $t = mlp ]; then
		bud=$((p / 2))
		[ "$m" -le "$bud" ] || fail "mlp: 50% of the peak ($bud) not reachable: smallest $m"
		# Its regions are written whole and blind, as one allocation per
		# tensor is (9.7% predicted there).  It costs more: a kernel's
		# reads through a pointer reach to its next pointer or the
		# segment's end, less what the proof shows unread (issue 31), and
		# the gradients sharing the parameters' segment are zero in the
		# forward pass, which the default proof never perturbs outside a
		# block of data (an index array's zeros would fault): they stay
		# reads of the forward GEMMs (37% measured; 8.5% with
		# REMAT_WRITE_PROOF=1, which perturbs them).
		"$PLAN" "$tmp/$t-trace.d" --budget 50% --plan-version 2 >"$tmp/$t-50.txt" 2>&1 ||
			fail "mlp: remat-plan at 50%: $(tail -n 2 "$tmp/$t-50.txt")"
		pred=$(sed -n 's/^recompute time: .*(\([0-9]*\)\.[0-9]*% of the iteration)$/\1/p' "$tmp/$t-50.txt")
		[ -n "$pred" ] && [ "$pred" -lt 40 ] ||
			fail "mlp: the plan at 50% recomputes ${pred:-?}% of the iteration (at most 39.x% expected)"
	else
		bud=$m
		# 58.6% measured (45.4% with REMAT_WRITE_PROOF=1): the zeroed
		# gradients stay reads of the forward kernels, as for mlp above.
		[ "$m" -lt $((p * 60 / 100)) ] || fail "gpt: the smallest budget $m is not below 60% of $p"
	fi
	prefill "$t-run" "$tmp/$t-trace.d" "$bud" --plan-version 2
	# Its first iteration with the plan verifies every rebuild, the later
	# ones apply it (evictions, the peak).
	RUN_ENV=REMAT_VERIFY=1
	run_budget "$t-run" "$t-base" "$bud" "$@"
	RUN_ENV=
	[ "$_ev" != "${_ev#0 }" ] && fail "$t: no evictions ($_ev)"
	verified "$t-run"
done
echo "run_alloc_pool: ok"
