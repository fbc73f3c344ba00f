#!/bin/sh
# --perfetto: the timeline file from the command line, with and without a
# plan (its contents are checked event by event in test_report); the page
# links to it; an unwritable path is one message, exit 2.
. tests/report/lib.sh
PLAN=tests/report/fixtures/mlp3-plan.json
"$REPORT" --plan "$PLAN" --perfetto "$TMP/t.json" --html "$TMP/page.html" "$FIX" >"$TMP/out" ||
	fail "exit $?"
expect_line "$TMP/out" "^timeline written to $TMP/t\.json"
python3 - "$TMP/t.json" <<'PY' || fail "timeline not as expected"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ops = [e for e in ev if e["ph"] == "X" and "op" in e["args"] and e["cat"] != "replay"]
assert len(ops) == 26, len(ops)
assert sorted({e["tid"] for e in ops}) == [2, 3]
names = {e["name"] for e in ev if e["ph"] == "C"}
assert names == {"memory without the plan (bytes)", "memory with the plan (bytes)"}, names
assert sum(e["cat"] == "evict" for e in ev if e["ph"] == "X") == 2
assert sum(e["cat"] == "rebuild" for e in ev if e["ph"] == "X") == 2
assert sum(e["cat"] == "map" for e in ev if e["ph"] == "X") == 2
PY
expect_line "$TMP/page.html" '<a href="t\.json">t\.json</a>'
# without a plan: the ops and one counter track
"$REPORT" --perfetto "$TMP/np.json" "$FIX" >/dev/null || fail "no plan: exit $?"
python3 -c "
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
assert {e['name'] for e in ev if e['ph'] == 'C'} == {'memory without the plan (bytes)'}
assert not [e for e in ev if e.get('cat') in ('evict', 'rebuild')]
" "$TMP/np.json" || fail "no plan: timeline not as expected"
# the page in another directory links by absolute path
mkdir "$TMP/sub"
"$REPORT" --perfetto "$TMP/t2.json" --html "$TMP/sub/p.html" "$FIX" >/dev/null || fail "exit $?"
expect_line "$TMP/sub/p.html" "<a href=\"$(cd "$TMP" && pwd -P)/t2\.json\">"
set +e
"$REPORT" --perfetto "$TMP/no/such/t.json" "$FIX" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unwritable timeline: exit $rc"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "unwritable timeline: want one line: $(cat "$TMP/err")"
expect_line "$TMP/err" "t\.json: cannot write the timeline"
echo "ok"
