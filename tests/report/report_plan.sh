#!/bin/sh
# --plan: the hand-written plan for mlp3 (figures in
# tests/report/fixtures/mlp3.expected.md), and plans that do not fit.
. tests/report/lib.sh
PLAN=tests/report/fixtures/mlp3-plan.json
out=$TMP/out
"$REPORT" --plan "$PLAN" --html "$TMP/page.html" "$FIX" >"$out" || fail "exit $?"

expect_line "$out" "^  file +$PLAN\$"
expect_line "$out" '^  planner +hand$'
expect_line "$out" '^  budget +140\.0 MiB$'
expect_line "$out" '^  peak +154\.0 MiB before, 138\.0 MiB with the plan \(fits the budget\)$'
expect_line "$out" '^  recompute +270\.0 us per iteration, 17\.1% of the iteration'
expect_line "$out" '^  evictions +2, rebuilds before 2 ops$'
# what is evicted: h1 (#19) from op 4 to 15, then from 15 to 17
sed -n '/^PLAN: EVICTIONS/,/^PLAN: REBUILDS/p' "$out" >"$TMP/ev"
expect_line "$TMP/ev" '^  #19 +16\.0 MiB +4 +15 +mlp\.c:88 \(linear_forward\)$'
expect_line "$TMP/ev" '^  #19 +16\.0 MiB +15 +17 '
[ "$(grep -c '^  #' "$TMP/ev")" -eq 2 ] || fail "want 2 eviction rows"
# where it rebuilds: replay ops 2 and 3 (120 + 15 us) before 15 and 17
expect_line "$out" '^  15 +135\.0 us +2 sgemm_nn, 3 bias_relu_fwd$'
expect_line "$out" '^  17 +135\.0 us +2 sgemm_nn, 3 bias_relu_fwd$'
# chart: the budget line is labelled, the freed part shows above it
sed -n '/^MEMORY OVER THE ITERATION, BEFORE AND WITH THE PLAN/,$p' "$out" >"$TMP/chart"
expect_line "$TMP/chart" '^ +140\.0 MiB \+[-#.]{72}$'
expect_line "$TMP/chart" '^ +154\.0 MiB \+.*\.'
if grep -E '^ +154\.0 MiB' "$TMP/chart" | grep -q '#'; then
	fail "with the plan nothing should reach 154 MiB"
fi
# the page shows the plan and one evicted gap per eviction
python3 tests/report/check_html.py "$TMP/page.html" 27 2
expect_line "$TMP/page.html" 'class="budget"'
expect_line "$TMP/page.html" '<td>#19</td><td class="n">16\.0 MiB</td><td class="n">4</td><td class="n">15</td>'

# the same plan on the trace's graph file (--export-graph): the same figures
"$REPORT" --export-graph "$TMP/mlp3.graph.json" "$FIX" >/dev/null || fail "export: exit $?"
"$REPORT" --plan "$PLAN" "$TMP/mlp3.graph.json" >"$TMP/g.out" || fail "graph file: exit $?"
expect_line "$TMP/g.out" '^  peak +154\.0 MiB before, 138\.0 MiB with the plan \(fits the budget\)$'
expect_line "$TMP/g.out" '^  evictions +2, rebuilds before 2 ops$'
expect_line "$TMP/g.out" '^  15 +135\.0 us +2 sgemm_nn, 3 bias_relu_fwd$'

# bad plans: one message naming the plan file, exit 2, no report
check() {
	set +e
	"$REPORT" --plan "$2" "$FIX" >"$TMP/$1.out" 2>"$TMP/$1.err"
	rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "$1: exit $rc, want 2"
	[ "$(wc -l <"$TMP/$1.err")" -eq 1 ] || fail "$1: want one line: $(cat "$TMP/$1.err")"
	expect_line "$TMP/$1.err" "$3"
	[ ! -s "$TMP/$1.out" ] || fail "$1: printed a report"
}
# edits made on purpose, each given its checksum (remat-plan --rehash)
rehash() { "$B/remat-plan" --rehash "$1" >/dev/null || fail "remat-plan --rehash $1"; }
sed 's/"graph_hash": "0x11f75e8e87fd6149"/"graph_hash": "0x00000000deadbeef"/' "$PLAN" >"$TMP/other.json"
# as edited: refused for the checksum, before anything in it is believed
check edited "$TMP/other.json" "$TMP/other\.json: checksum does not match the content .*remat-plan --rehash"
rehash "$TMP/other.json"
check other-graph "$TMP/other.json" "$TMP/other\.json.*graph.*0x00000000deadbeef.*0x11f75e8e87fd6149"
head -c 200 "$PLAN" >"$TMP/cut.json"
check truncated "$TMP/cut.json" "$TMP/cut\.json"
check missing "$TMP/nope.json" "$TMP/nope\.json"
# a plan that drops h1 and never rebuilds it cannot run on this trace
sed 's/{"op": 15, "before": \[\["map", 19\], \["replay", 2\], \["replay", 3\]\], "evict_after": \[19\]},/{"op": 15},/' \
	"$PLAN" >"$TMP/norebuild.json"
grep -q '"op": 15}' "$TMP/norebuild.json" || fail "test setup: sed did not apply"
rehash "$TMP/norebuild.json"
check invalid "$TMP/norebuild.json" "$TMP/norebuild\.json: the plan does not fit this trace: .*19"

# A plan that offloads (version 3): what goes to the host, when it leaves
# and comes back, in the summary, a table and under the memory chart.
"$REPORT" --plan fuzz/corpus/plan/mlp3-offload-v3.json --html "$TMP/off.html" "$FIX" >"$TMP/off" ||
	fail "offload: exit $?"
expect_line "$TMP/off.html" '<h3>Offloads to pinned host memory</h3>'
expect_line "$TMP/off.html" '<tr><td>#19</td><td class="n">15\.6 MiB</td><td class="n">5</td><td class="n">6</td><td class="n">13</td><td class="n">15</td>'
expect_line "$TMP/off" '^  offload +1 buffer version to pinned host memory at 52\.8 GB/s, 15\.6 MiB held at most; copies stick out 578\.6 us$'
sed -n '/^PLAN: OFFLOADS TO HOST MEMORY/,/^MEMORY/p' "$TMP/off" >"$TMP/offt"
expect_line "$TMP/offt" '^  #19 +15\.6 MiB +5 +6 +13 +15 +mlp\.c:88 \(linear_forward\)$'
expect_line "$TMP/off" '^ +15\.6 MiB host +#+ *$'
expect_line "$TMP/off" '^ +copy +v +\^ *$'
grep -q '^PLAN: REBUILDS' "$TMP/off" && sed -n '/^PLAN: REBUILDS/,/^PLAN: OFF/p' "$TMP/off" | grep -q '^  none$' ||
	fail "offload steps listed as rebuilds"
echo "ok"
