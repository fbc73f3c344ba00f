#!/bin/sh
# The proof of unread bytes (docs/trace-format.md, "How the profiler proves
# writes, reads and regions").  tests/e2e/progs/chain --reuse uses one
# block p of an allocation made before the loop as a caching allocator
# does: two tensors t1 | t2 (t2 written through p + N/2), then one tensor
# over both written through p.  A kernel's reads through p reach as far as
# anything was written through p in the iteration: t2 too.  `use` given p
# reads t1 alone: the proof (a second launch with t2 set to its
# complement, the same output) takes t2 out of its reads.  fwd_peek given
# p really reads into t2: the proof fails and t2 stays.  The proof runs
# with REMAT_WRITE_PROOF=1; with 0 (no second launches) t2 is a read of
# both.  Block
# y: fwd_peek writes a tensor y1 of N/2 floats through y, and a later
# kernel one of N floats: no pointer shows where y1 ends, its write does
# (one blind run from the pointer), so y1 and the rest y2 are regions of
# their own, both dead across the boundary; fwd_peek's proof of all its
# pointers at once fails on p, the proof of y's alone takes y2 out of its
# reads.  The second launches leave the output as it is.
. tests/e2e/run_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
set -- "$P/chain" "$P/chain.so" 24 --reuse
run base -- "$@"
run proof REMAT_MODE=trace REMAT_WRITE_PROOF=1 "REMAT_TRACE_DIR=$tmp/t.d" \
	LD_PRELOAD="$PRELOAD" -- "$@"
run noproof REMAT_MODE=trace REMAT_WRITE_PROOF=0 "REMAT_TRACE_DIR=$tmp/n.d" LD_PRELOAD="$PRELOAD" -- "$@"
same base proof
same base noproof
python3 - "$tmp/t.d/trace.json" "$tmp/n.d/trace.json" <<'PY' || fail "the reads through p are not what the proof shows"
import json, sys

def ops(path):
    t = json.load(open(path))
    o = t["ops"]
    names = [x["name"] for x in o]
    want = ["fwd", "fwd", "use", "fwd_peek", "fwd", "use", "use", "fwd", "use", "memcpyDtoH"]
    assert names == want, names
    (t2,) = o[0]["writes"]  # fwd through p + N/2
    (t1,) = o[1]["writes"]  # fwd through p
    b = t["buffers"]
    assert b[t1]["region"]["offset"] == 0 and b[t2]["region"]["offset"] == 131072, (b[t1], b[t2])
    assert sorted(o[4]["writes"]) == sorted([t1, t2]), o[4]  # one tensor over both
    return o, t1, t2

o, t1, t2 = ops(sys.argv[1])
t = json.load(open(sys.argv[1]))
b = t["buffers"]
(y1,) = o[3]["writes"]
y2 = [i for i in o[7]["writes"] if i != y1]
assert len(y2) == 1 and b[y1]["size"] == 131072, ("y1 is a region of its own", o[7], b[y1])
assert y1 not in o[3].get("partial", []), ("fwd_peek writes y1 whole", o[3])
assert b[y1].get("dead_across_boundary") and b[y2[0]].get("dead_across_boundary"), (b[y1], b[y2[0]])
assert y2[0] not in o[3]["reads"], ("fwd_peek through y", o[3])
assert t1 in o[2]["reads"] and t2 not in o[2]["reads"], ("use through p", o[2])
assert t1 in o[3]["reads"] and t2 in o[3]["reads"], ("fwd_peek through p", o[3])
assert t2 in o[5]["reads"], ("use of the whole tensor", o[5])
o, t1, t2 = ops(sys.argv[2])
assert t2 in o[2]["reads"], ("without the proof, the reach of p", o[2])
PY
no_fault
echo "run_unread: ok"
