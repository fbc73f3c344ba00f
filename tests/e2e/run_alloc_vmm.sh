#!/bin/sh
# Memory the program maps itself (issue 10): mlp and gpt with --alloc vmm
# keep every tensor in ranges they reserve with cuMemAddressReserve and
# grow with cuMemCreate + cuMemMap + cuMemSetAccess (like PyTorch's
# expandable segments), reaching those functions only through
# cuGetProcAddress.  libremat backs the program's handles with chunks of
# its own, so the mapped ranges are long-lived allocations of the trace,
# cut into regions, and run mode unmaps chunks inside them.  At a budget
# of 50% of the unmodified peak: output identical to the run without
# libremat, evictions, the physical peak of the replay iterations within
# the budget, and REMAT_VERIFY=1 finding every planned rebuild
# bit-identical (the run verifies the plan first, then applies it); and
# the same with a plan that also offloads and parks (run mode's default).  Both
# must reach 50%: gpt's tensors, 64 KiB and less packed at 512-byte steps,
# hold few chunks whole, and reach it only because a chunk regions share
# is unmapped once all of them are out (shared_chunks in the trace).
# Dead across the boundary as the proofs show it with their default
# (REMAT_WRITE_PROOF=data): without them (0) long-lived memory's
# activations save nothing.  gpt runs with the full proof
# (REMAT_WRITE_PROOF=1): by default the zeroed gradients and the batch's
# token ids in its one segment are never perturbed, so they stay reads of
# every kernel given an earlier tensor there (issue 31: "not proven read"
# is not "unread"), and 50% is out of its reach (88% of the peak is).
. tests/e2e/run_lib.sh
for t in mlp gpt; do
	if [ $t = mlp ]; then
		set -- "$TR/mlp" --alloc vmm --layers 4 --batch 1024 --iters 12
	else
		set -- "$TR/gpt" --alloc vmm --layers 4 --batch 16 --iters 12
		export REMAT_WRITE_PROOF=1
	fi
	run "$t-base" -- "$@"
	read -r c p m <<EOT
$(budgets "$t" "$@")
EOT
	check_trace "$tmp/$t-trace.d"
	# The program's ranges are in the trace: long-lived, cut into regions,
	# most of them dead across the boundary.
	python3 - "$tmp/$t-trace.d/trace.json" <<'PY' || fail "$t: the program's mapped memory is not in the trace"
import json, sys
t = json.load(open(sys.argv[1]))
regions = [b for b in t["buffers"] if b.get("region")]
allocs = {b["region"]["allocation"] for b in regions}
dead = [b for b in regions if b.get("dead_across_boundary")]
assert len(allocs) >= 1 and len(regions) >= 16, (len(allocs), len(regions))
assert len(dead) >= 8, f"{len(dead)} regions dead across the boundary"
assert t["ops"][-1]["name"] == "memcpyDtoH", "the boundary is not after the loss read back"
# Nearly every evictable byte is an activation, dead across the boundary:
# the blind-write proof runs a pointer at a time where one allocation also
# holds an update in place (batch norm's running statistics next to its
# output), and the pool's free space after the last tensor is cut off.
ev = [b for b in t["buffers"] if b["rounded"] > 0]
dead_bytes = sum(b["rounded"] for b in ev if b.get("dead_across_boundary"))
all_bytes = sum(b["rounded"] for b in ev)
assert dead_bytes >= 0.85 * all_bytes, f"{dead_bytes} of {all_bytes} evictable bytes dead across"
for o in t["ops"]:
    if o["name"] == "batchnorm_fwd":
        out = [r[0] for r in o["refs"] if r[2] == 8][0]  # its output pointer
        assert out in o["writes"] and out not in o.get("partial", []) and out not in o["reads"], \
            f"op {o['i']}: batch norm's output {out} is not written whole and blind"
        assert t["buffers"][out].get("dead_across_boundary"), f"op {o['i']}: output {out} not dead across"
PY
	# The budget: 50% of the baseline peak remat-plan counts.
	rc=0
	"$PLAN" "$tmp/$t-trace.d" --budget 50% --plan-version 2 >"$tmp/$t-50.txt" 2>&1 || rc=$?
	bud=$(sed -n 's/^budget: .*(\([0-9]*\) bytes)$/\1/p' "$tmp/$t-50.txt")
	[ -n "$bud" ] || fail "$t: remat-plan printed no budget: $(tail -n 2 "$tmp/$t-50.txt")"
	[ $rc = 0 ] || fail "$t: 50% of the peak ($bud bytes) is out of reach (exit $rc): $(tail -n 3 "$tmp/$t-50.txt")"
	# gpt's chunks shared by regions are in the trace
	[ $t = mlp ] || python3 - "$tmp/$t-trace.d/trace.json" <<'PY' || fail "$t: no shared chunks in the trace"
import json, sys
t = json.load(open(sys.argv[1]))
sh = t.get("shared_chunks", [])
assert len(sh) >= 16 and all(len(c["buffers"]) >= 1 for c in sh), len(sh)
assert sum(c["bytes"] for c in sh) <= t["memory"]["edge_bytes"]
PY
	prefill "$t-run" "$tmp/$t-trace.d" "$bud" --plan-version 2
	# One run does both: its first iteration with the plan verifies every
	# rebuild, the later ones apply it (evictions, the peak).
	RUN_ENV=REMAT_VERIFY=1
	run_budget "$t-run" "$t-base" "$bud" "$@"
	RUN_ENV=
	[ "$_ev" != "${_ev#0 }" ] && fail "$t: no evictions ($_ev)"
	verified "$t-run"
	# As run mode plans by default (offload on): buffers go to the host and
	# come back beside rebuilds.  mlp's plan prefetches a region and, before
	# its await, evicts the neighbour it shares a chunk with: the chunk
	# must stay (the prefetch wrote into it), or batchnorm_bwd faults.
	prefill_offload "$t-off" "$tmp/$t-trace.d" "$bud"
	RUN_ENV=REMAT_OFFLOAD=1
	run_budget "$t-off" "$t-base" "$bud" "$@"
	RUN_ENV=
	no_fault
done
echo "run_alloc_vmm: ok"
