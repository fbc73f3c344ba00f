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

# --rehash: an edit by hand gets the checksum of its new content; what is
# not a plan is refused and left as it was.
grep -q '"checksum": "0x[0-9a-f]\{16\}",$' "$tmp/p.json" || fail "plan has no checksum"
sed 's/"planner": "[a-z:]*"/"planner": "hand"/' "$tmp/p.json" >"$tmp/e.json"
"$BUILD/remat-report" --plan "$tmp/e.json" "$fx" >"$tmp/out" 2>&1 && fail "an edited plan was read"
grep -q "e.json: checksum does not match the content" "$tmp/out" || fail "edited: $(cat "$tmp/out")"
"$bin" --rehash "$tmp/e.json" >"$tmp/out" 2>&1 || fail "--rehash: exit $?: $(cat "$tmp/out")"
grep -q "e.json: checksum written" "$tmp/out" || fail "--rehash said: $(cat "$tmp/out")"
"$BUILD/remat-report" --plan "$tmp/e.json" "$fx" >"$tmp/out" 2>&1 || fail "rehashed: $(cat "$tmp/out")"
echo '{"format": "remat-plan"}' >"$tmp/n.json"
"$bin" --rehash "$tmp/n.json" >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "--rehash of no plan: want exit 2"
[ "$(cat "$tmp/n.json")" = '{"format": "remat-plan"}' ] || fail "--rehash changed what it refused"
"$bin" --rehash "$tmp/e.json" --budget 1G >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "--rehash with a budget: want exit 2"

"$bin" "$fx" --budget 10M -o "$tmp/q.json" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "unreachable budget: exit $rc, want 3"
grep -q "cannot be met by planner ilp" "$tmp/out" || fail "the refusal names no planner: $(cat "$tmp/out")"
grep -q "the smallest budget it meets is 11534336 bytes" "$tmp/out" || fail "no smallest budget: $(cat "$tmp/out")"
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

# --plan-version: batch norm (op 1 updates S in place) can be replayed
# only with a stash of S, which version 1 plans (the default) do not have.
cat >"$tmp/bn.json" <<'EOF'
{"format": "remat-graph", "version": 1, "buffers": [
 {"id": 0, "size": 100, "alloc_at": 0, "free_at": -1},
 {"id": 1, "size": 400, "alloc_at": 1, "free_at": -1},
 {"id": 2, "size": 8, "persistent": true, "alloc_at": -1, "free_at": -1},
 {"id": 3, "size": 300, "alloc_at": 2, "free_at": 4}],
 "ops": [
 {"i": 0, "duration_ns": 10, "reads": [], "writes": [0]},
 {"i": 1, "name": "batch_norm", "duration_ns": 10, "reads": [0, 2], "writes": [1, 2]},
 {"i": 2, "duration_ns": 10, "reads": [0], "writes": [3]},
 {"i": 3, "duration_ns": 100000, "reads": [3], "writes": []},
 {"i": 4, "duration_ns": 10, "reads": [1, 0], "writes": []}],
 "end": true}
EOF
"$bin" "$tmp/bn.json" --budget 600 -o "$tmp/bn1.json" >"$tmp/out" 2>&1
[ $? -eq 3 ] || fail "batch norm at 600 bytes without stashes: want exit 3: $(cat "$tmp/out")"
"$bin" "$tmp/bn.json" --budget 600 --plan-version 2 -o "$tmp/bn2.json" >"$tmp/out" 2>&1 ||
	fail "batch norm at 600 bytes with --plan-version 2: exit $?: $(cat "$tmp/out")"
grep -q '"version": 2' "$tmp/bn2.json" || fail "the plan with a stash is not version 2"
grep -q '\["stash", 2\]' "$tmp/bn2.json" || fail "the plan does not stash S: $(cat "$tmp/bn2.json")"
"$bin" "$tmp/bn.json" --budget 600 --plan-version 3 >"$tmp/out" 2>&1
[ $? -eq 2 ] || fail "--plan-version 3: want exit 2"
grep -q "expected 1 or 2" "$tmp/out" || fail "bad --plan-version message: $(cat "$tmp/out")"

# A collective between two uses of a buffer: no eviction across it.  The
# same graph without the flag plans (evicting b0 over ops 1..3, rebuilt by
# replaying op 0); with it, the budget cannot be met.
for coll in false true; do
	cat >"$tmp/coll-$coll.json" <<EOT
{"format": "remat-graph", "version": 1, "granularity": 1048576,
 "buffers": [
  {"id": 0, "size": 1048576, "alloc_at": 0, "free_at": 5},
  {"id": 1, "size": 1048576, "persistent": true, "alloc_at": -1, "free_at": -1},
  {"id": 2, "size": 2097152, "alloc_at": 2, "free_at": 4}],
 "ops": [
  {"i": 0, "name": "produce", "duration_ns": 1000, "reads": [1], "writes": [0]},
  {"i": 1, "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "duration_ns": 1000, "reads": [],
   "writes": [], "replayable": false, "why_not": "collective", "collective": $coll},
  {"i": 2, "name": "big", "duration_ns": 1000, "reads": [], "writes": [2]},
  {"i": 3, "name": "use_big", "duration_ns": 1000, "reads": [2], "writes": [2]},
  {"i": 4, "name": "consume", "duration_ns": 1000, "reads": [0], "writes": []}]}
EOT
done
"$bin" "$tmp/coll-false.json" --budget 3M -o "$tmp/c.json" >"$tmp/out" 2>&1 ||
	fail "no collective: budget 3M: exit $? $(cat "$tmp/out")"
# every planner, the DTR walk included, and both plan versions
for p in default greedy dtr ilp; do
	for v in 1 2; do
		pa=""
		[ $p = default ] || pa="--planner $p"
		# shellcheck disable=SC2086
		"$bin" "$tmp/coll-true.json" --budget 3M $pa --plan-version $v -o "$tmp/d.json" \
			>"$tmp/out" 2>&1
		rc=$?
		[ $rc -eq 3 ] || fail "$p, version $v: an eviction across a collective: exit $rc, want 3: $(cat "$tmp/out" "$tmp/d.json")"
	done
done
"$bin" "$tmp/coll-true.json" --budget 4M >"$tmp/out" 2>&1 || fail "collective at 4M: exit $?"

for p in greedy dtr ilp none; do
	"$bin" "$fx" --budget 100% --planner $p >"$tmp/out" 2>&1 || fail "planner $p at 100%: exit $?"
done
# The ILP's worker process (ilp_worker.c) dies with remat-plan: a planner
# that run mode kills for overstaying leaves nothing running.  (A 10k-op
# graph: its model is solved in the worker, for seconds.)
"$BUILD/bench/plan_bench" export 3 10000 "$tmp/big.json" || fail "plan_bench export failed"
"$bin" "$tmp/big.json" --budget 50% -o "$tmp/big.plan.json" >/dev/null 2>&1 &
pid=$!
alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat"; }
worker=
i=0
while [ -z "$worker" ] && [ $i -lt 600 ] && alive $pid; do
	worker=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
	[ -n "$worker" ] || sleep 0.1
	i=$((i + 1))
done
[ -n "$worker" ] || fail "remat-plan on a 10k-op graph started no ILP worker"
kill -9 $pid
wait $pid 2>/dev/null
i=0
while alive $worker && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
alive $worker && fail "the ILP worker $worker outlived remat-plan"
echo "remat-plan.sh: ok"
