#!/bin/sh
# REMAT_VERIFY=1 catches a wrong region inference (issue 10).  In
# tests/e2e/progs/chain --peek (one arena: xa | s | a1 | a1 | a3), fwd_peek
# gets a pointer to the region of xa and also reads the small scratch
# region s right after it, which the profile cannot tell from its
# parameters (nothing is written through that pointer past xa): the trace
# says a1 depends on xa alone.  s changes after the forward pass, so a
# rebuild of a1 by replay reads the new s.  Without verification the
# output differs (the plan does rebuild a1 that way); with it, the rebuild
# is compared with the original, a1 is excluded, and the output is
# byte-identical.  The plan rebuilds a1 inside the arena only as the
# proofs show it dead across the boundary (REMAT_WRITE_PROOF=1).
. tests/e2e/run_lib.sh
export REMAT_WRITE_PROOF=1
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
set -- "$P/chain" "$P/chain.so" 40 --peek
run base -- "$@"
run peek-trace REMAT_MODE=trace "REMAT_TRACE_DIR=$tmp/t.d" LD_PRELOAD="$PRELOAD" -- "$@"
same base peek-trace
a1=$(python3 - "$tmp/t.d/trace.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
peek = [o for o in t["ops"] if o["name"] == "fwd_peek"]
assert len(peek) == 1, "no fwd_peek op"
(a1,) = peek[0]["writes"]
s = [b["id"] for b in t["buffers"] if b.get("region") and b["size"] == 4096]
assert len(s) == 1, "no scratch region"
# The inference this test is about: fwd_peek's reads leave s out.
assert s[0] not in peek[0]["reads"], peek[0]
print(a1)
PY
) || fail "the trace is not what this test needs"
"$PLAN" "$tmp/t.d" --budget 1 --plan-version 2 >"$tmp/min.txt" 2>&1 || true
m=$(sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p' "$tmp/min.txt")
[ -n "$m" ] || fail "no smallest peak: $(cat "$tmp/min.txt")"
run noverify "REMAT_BUDGET=$m" "REMAT_TRACE_DIR=$tmp/nv.d" "REMAT_CACHE_DIR=$tmp/nv.cache" \
	LD_PRELOAD="$PRELOAD" -- "$@"
! cmp -s "$tmp/base.out" "$tmp/noverify.out" ||
	fail "a1 was not rebuilt by replaying fwd_peek: the test proves nothing"
run verify "REMAT_BUDGET=$m" REMAT_VERIFY=1 REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/v.d" \
	"REMAT_CACHE_DIR=$tmp/v.cache" LD_PRELOAD="$PRELOAD" -- "$@"
same base verify
grep -q "^libremat: verify: buffer $a1 rebuilt before op [0-9]* differs" "$tmp/verify.err" ||
	fail "a1 (buffer $a1) not excluded: $(grep libremat "$tmp/verify.err" | tail -n 4)"
no_fault
echo "run_verify_region: ok (buffer $a1 excluded)"
