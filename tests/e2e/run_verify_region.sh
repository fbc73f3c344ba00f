#!/bin/sh
# A kernel's reads through a pointer reach up to its next pointer into the
# allocation (or the allocation's end), less what the proof of unread bytes
# shows it does not read: "not proven read" is not "unread" (issue 31).  In
# tests/e2e/progs/chain --peek (one arena: xa | s | a1 | a2 | a3), fwd_peek
# gets a pointer to xa and also reads the scratch region s right after it,
# through which nothing is written.  Until issue 31 a pointer's reach went
# only as far as writes through it went: the trace said a1 depends on xa
# alone, s changes after the forward pass, and a plan at the smallest
# reachable budget rebuilt a1 by replay from the new s, a different output
# unless REMAT_VERIFY=1 caught it.  Now the proof of s fails (fwd_peek reads
# it), s is a read of fwd_peek, and that plan's output is identical without
# verification, and with it.
. tests/e2e/run_lib.sh
P=$BUILD/tests/e2e/progs
[ -x "$P/chain" ] && [ -e "$P/chain.so" ] || fail "$P/chain is not built (make remat-progs)"
set -- "$P/chain" "$P/chain.so" 40 --peek
run base -- "$@"
for proof in data 1; do
	run "peek-trace-$proof" REMAT_MODE=trace "REMAT_WRITE_PROOF=$proof" \
		"REMAT_TRACE_DIR=$tmp/t-$proof.d" LD_PRELOAD="$PRELOAD" -- "$@"
	same base "peek-trace-$proof"
	python3 - "$tmp/t-$proof.d/trace.json" <<'PY' || fail "REMAT_WRITE_PROOF=$proof: fwd_peek's reads leave s out"
import json, sys
t = json.load(open(sys.argv[1]))
peek = [o for o in t["ops"] if o["name"] == "fwd_peek"]
assert len(peek) == 1, "no fwd_peek op"
s = [b["id"] for b in t["buffers"] if b.get("region") and b["size"] == 4096]
assert len(s) == 1, "no scratch region"
assert s[0] in peek[0]["reads"], peek[0]
PY
done
"$PLAN" "$tmp/t-1.d" --budget 1 --plan-version 2 >"$tmp/min.txt" 2>&1 || true
m=$(sed -n 's/.*smallest reachable peak: .*(\([0-9]*\) bytes).*/\1/p' "$tmp/min.txt")
[ -n "$m" ] || fail "no smallest peak: $(cat "$tmp/min.txt")"
export REMAT_WRITE_PROOF=1
run noverify "REMAT_BUDGET=$m" REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/nv.d" \
	"REMAT_CACHE_DIR=$tmp/nv.cache" LD_PRELOAD="$PRELOAD" -- "$@"
same base noverify
grep -q "applied from iteration" "$tmp/noverify.err" ||
	fail "no plan applied: $(grep libremat "$tmp/noverify.err" | tail -n 3)"
run verify "REMAT_BUDGET=$m" REMAT_VERIFY=1 REMAT_LOG=1 "REMAT_TRACE_DIR=$tmp/v.d" \
	"REMAT_CACHE_DIR=$tmp/v.cache" LD_PRELOAD="$PRELOAD" -- "$@"
same base verify
no_fault
echo "run_verify_region: ok (fwd_peek reads s; identical at $m bytes without verification)"
