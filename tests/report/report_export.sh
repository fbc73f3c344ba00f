#!/bin/sh
# --export-graph writes the trace as graph JSON through the planner library
# (the unit test test_report checks that the planner's loader reads it back
# identically); here: the command line, the file, and an unwritable path.
. tests/report/lib.sh
"$REPORT" --export-graph "$TMP/g.json" "$FIX" >"$TMP/out" || fail "exit $?"
expect_line "$TMP/out" "^graph written to $TMP/g\.json\$"
python3 - "$TMP/g.json" <<'PY' || fail "graph file"
import json, sys
g = json.load(open(sys.argv[1]))
assert g["format"] == "remat-graph", g["format"]
assert g["graph_hash"] == "0x11f75e8e87fd6149", g["graph_hash"]
assert len(g["ops"]) == 26 and len(g["buffers"]) == 27
assert g["end"] is True
# h1 (#19): 16 384 000 bytes, live over ops [2, 18)
h1 = g["buffers"][19]
assert (h1["size"], h1["alloc_at"], h1["free_at"]) == (16384000, 2, 18), h1
PY
set +e
"$REPORT" --export-graph "$TMP/no/such/g.json" "$FIX" >/dev/null 2>"$TMP/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unwritable graph: exit $rc, want 2"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "want one line: $(cat "$TMP/err")"
expect_line "$TMP/err" "$TMP/no/such/g\.json"
echo "ok"
