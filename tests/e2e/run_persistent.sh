#!/bin/sh
# Activations in long-lived memory (issue 10): tests/e2e/progs/chain with
# its three activations allocated once before the loop (--persistent), and
# as offsets into one allocation (--arena, with a scratch region between
# the first two, which shares a chunk with the second).  The trace proves
# each activation dead across the boundary (its first access in the
# iteration overwrites all of it, blindly) and cuts the arena into regions
# at the offsets kernels point to; at the smallest budget remat-plan
# reaches, run mode evicts them (unmapping chunks inside the arena for
# --arena), and the output is byte-identical to the run without libremat,
# with the physical peak of the replay iterations within the budget.
#
# --persistent --tiny: a3 is set to zero and then updated in place by tiny
# amounts (add_tiny); the proof's canary (the complement of ~1e-6) is so
# large that the second run leaves it as it was, which must read as an
# update, never as no write: the trace lists add_tiny writing a3 and
# reading it, and a rebuild of a3 (set, then add) gives the same output.
#
# Both prove with REMAT_WRITE_PROOF=1 (second launches while profiling);
# the default, without them, is tested in between.
. tests/e2e/run_lib.sh
export REMAT_WRITE_PROOF=1
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
for mode in persistent arena; do
	run "$mode-base" -- "$P/chain" "$P/chain.so" 30 "--$mode"
	read -r c p m <<EOT
$(budgets "$mode" "$P/chain" "$P/chain.so" 30 "--$mode")
EOT
	check_trace "$tmp/$mode-trace.d"
	# The smallest peak of the plans run mode asks for (version 2: buffers
	# left unmapped at the boundary).
	"$PLAN" "$tmp/$mode-trace.d" --budget 1 --plan-version 2 >"$tmp/$mode-min2.txt" 2>&1 || true
	m=$(sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p' "$tmp/$mode-min2.txt")
	[ -n "$m" ] && [ "$m" -lt "$p" ] || fail "$mode: remat-plan saves nothing: $(cat "$tmp/$mode-min2.txt")"
	python3 - "$tmp/$mode-trace.d/trace.json" "$mode" <<'PY' || fail "$mode: the trace does not show what was proven"
import json, sys
t = json.load(open(sys.argv[1]))
mode = sys.argv[2]
bufs = t["buffers"]
N = 65536 * 4
fwd = {w for o in t["ops"] if o["name"] in ("fwd", "fwd_peek") for w in o["writes"]}
acts = [bufs[w] for w in sorted(fwd) if bufs[w]["size"] == N]
assert len(acts) == 3, f"activations {[(b['id'], b['size']) for b in acts]}"
for b in acts:
    assert b["persistent"] and b.get("dead_across_boundary"), f"not dead across: {b}"
    if mode == "arena":
        r = b.get("region")
        assert r and r["offset"] in (0, N + 4096, 2 * N + 4096), f"not a region of the arena: {b}"
if mode == "arena":
    # a1 | s | a2 | a3: four regions of one allocation
    arena = acts[0]["region"]["allocation"]
    regions = [b for b in bufs if b.get("region", {}).get("allocation") == arena]
    assert len(regions) == 4, regions
    s = [b for b in regions if b["size"] == 4096]
    # no whole chunk of its own: evictable for the chunk it shares with a2
    assert len(s) == 1 and s[0]["rounded"] == 0 and not s[0]["small"], f"scratch region: {s}"
    assert t["memory"]["edge_bytes"] > 0
    sh = [c for c in t.get("shared_chunks", []) if s[0]["id"] in c["buffers"]]
    assert len(sh) == 1 and len(sh[0]["buffers"]) == 2, f"the scratch region's chunk: {sh}"
    assert sum(c["bytes"] for c in t["shared_chunks"]) <= t["memory"]["edge_bytes"]
else:
    assert not any(b.get("region") for b in acts), acts
# The first op of each activation writes it whole without reading it.
for b in acts:
    first = next(o for o in t["ops"] if b["id"] in o["reads"] + o["writes"])
    assert b["id"] in first["writes"] and b["id"] not in first["reads"], first
    assert b["id"] not in first.get("partial", []), first
PY
	run_budget "$mode-run" "$mode-base" "$m" "$P/chain" "$P/chain.so" 30 "--$mode"
	[ "$_ev" != "${_ev#0 }" ] && fail "$mode: no evictions ($_ev)"
done
# REMAT_WRITE_PROOF=0 (no second launch of writing kernels): nothing is
# proven blind, so no activation is dead across the boundary and every first
# write counts as an update of what was there; run mode still gives
# identical output at the smallest budget the planner then reaches.
export REMAT_WRITE_PROOF=0
set -- "$P/chain" "$P/chain.so" 30 --persistent
run noproof-trace REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/noproof.d" LD_PRELOAD="$PRELOAD" -- "$@"
same persistent-base noproof-trace
python3 - "$tmp/noproof.d/trace.json" <<'PY' || fail "noproof: the trace claims what was not proven"
import json, sys
t = json.load(open(sys.argv[1]))
bufs = t["buffers"]
N = 65536 * 4
fwd = {w for o in t["ops"] if o["name"] == "fwd" for w in o["writes"]}
acts = [bufs[w] for w in sorted(fwd) if bufs[w]["size"] == N]
assert len(acts) == 3, acts
for b in acts:
    assert not b.get("dead_across_boundary"), f"dead across without the proof: {b}"
    first = next(o for o in t["ops"] if b["id"] in o["reads"] + o["writes"])
    assert b["id"] in first["reads"] or b["id"] in first.get("partial", []), first
PY
"$PLAN" "$tmp/noproof.d" --budget 1 --plan-version 2 >"$tmp/noproof-min.txt" 2>&1 || true
m=$(sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p' "$tmp/noproof-min.txt")
[ -n "$m" ] || fail "noproof: no smallest peak: $(cat "$tmp/noproof-min.txt")"
run_budget noproof-run persistent-base "$m" "$@"

export REMAT_WRITE_PROOF=1

set -- "$P/chain" "$P/chain.so" 30 --persistent --tiny
run tiny-base -- "$@"
read -r c p m <<EOT
$(budgets tiny "$@")
EOT
python3 - "$tmp/tiny-trace.d/trace.json" <<'PY' || fail "tiny: the trace misses add_tiny's update in place"
import json, sys
t = json.load(open(sys.argv[1]))
adds = [o for o in t["ops"] if o["name"] == "add_tiny"]
assert len(adds) == 1, adds
a = adds[0]
a3 = [r[0] for r in a["refs"] if r[2] == 8]
assert a3 and a3[0] in a["writes"] and a3[0] in a["reads"], a
PY
"$PLAN" "$tmp/tiny-trace.d" --budget 1 --plan-version 2 >"$tmp/tiny-min2.txt" 2>&1 || true
m=$(sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p' "$tmp/tiny-min2.txt")
[ -n "$m" ] && [ "$m" -lt "$p" ] || fail "tiny: remat-plan saves nothing: $(cat "$tmp/tiny-min2.txt")"
run_budget tiny-run tiny-base "$m" "$@"
echo "run_persistent: ok"
