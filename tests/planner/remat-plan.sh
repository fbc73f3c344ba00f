#!/bin/sh
# End-to-end check of the remat-plan command: exit statuses 0/2/3, the
# figures it prints, the plan it writes. Run from the repo root.
BUILD=${BUILD:-build}
bin=$BUILD/remat-plan
fx=tests/planner/fixtures/trace-small
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "remat-plan.sh: $*"; exit 1; }

"$bin" "$fx" --budget 11M -o "$tmp/p.json" >"$tmp/out" 2>&1 || fail "budget 11M: exit $?"
grep -q "planned peak:    11.00 MiB" "$tmp/out" || fail "no planned peak in: $(cat "$tmp/out")"
grep -q "baseline peak:   12.00 MiB" "$tmp/out" || fail "no baseline peak"
grep -q '"graph_hash": "0x00c0ffee12345678"' "$tmp/p.json" || fail "plan lacks the graph hash"
grep -q '"end": true' "$tmp/p.json" || fail "plan not complete"

"$bin" "$fx" --budget 10M -o "$tmp/q.json" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "unreachable budget: exit $rc, want 3"
grep -q "smallest peak found is 11534336 bytes" "$tmp/out" || fail "no smallest peak: $(cat "$tmp/out")"
[ ! -e "$tmp/q.json" ] || fail "a plan was written for an unreachable budget"

"$bin" "$fx" --budget 12X >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "bad budget: exit $rc, want 2"
grep -q "unknown suffix 'X'" "$tmp/out" || fail "bad budget message: $(cat "$tmp/out")"

"$bin" /nonexistent --budget 50% >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "missing input: want exit 2"
"$bin" "$fx" --budget 50% --planner fast >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "unknown planner: want exit 2"

# --exclude: the buffer the plan above evicts may then be neither evicted
# nor rebuilt; a bad list is bad input.
ev=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(",".join(str(b) for o in p["ops"] for b in o.get("evict_after", [])))' "$tmp/p.json")
[ -n "$ev" ] || fail "the 11M plan evicts nothing"
"$bin" "$fx" --budget 11M --exclude "$ev" -o "$tmp/x.json" >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
	python3 - "$tmp/x.json" "$ev" <<'PY' || fail "an excluded buffer is evicted or rebuilt"
import json, sys
p = json.load(open(sys.argv[1]))
ex = {int(b) for b in sys.argv[2].split(",")}
for o in p["ops"]:
    assert not ex & set(o.get("evict_after", [])), o
    for st in o.get("before", []):
        assert not (st[0] in ("map", "save") and st[1] in ex), o
PY
else
	[ $rc -eq 3 ] || fail "--exclude $ev: exit $rc"
fi
"$bin" "$fx" --budget 11M --exclude "$ev,99" >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "--exclude with an unknown id: want exit 2"
grep -q "expected buffer ids 0..8" "$tmp/out" || fail "bad --exclude message: $(cat "$tmp/out")"

for p in greedy dtr ilp none; do
	"$bin" "$fx" --budget 100% --planner $p >"$tmp/out" 2>&1 || fail "planner $p at 100%: exit $?"
done
echo "remat-plan.sh: ok"
