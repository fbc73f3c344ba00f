#!/bin/sh
# remat-plan --sweep and remat-report --sweep: the curve is monotone, its
# smallest budget is met again, the terminal view has a row per budget,
# and the HTML page draws the curve: rendered by headless Chromium, the
# screenshot has the curve's colour in it.  Run from the repo root.
BUILD=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_sweep.sh: $*"; exit 1; }
g=tests/planner/fixtures/trace-small

"$BUILD/remat-plan" "$g" --sweep 6 --plan-version 2 --time-limit 20 -o "$tmp/sw.json" \
	>"$tmp/out" 2>&1 || fail "sweep: exit $?: $(cat "$tmp/out")"
python3 - "$tmp/sw.json" >"$tmp/min" <<'PY' || fail "bad sweep file"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["format"] == "remat-sweep" and s["end"] is True
pts = s["points"]
assert len(pts) >= 2, pts
assert pts[0]["budget"] == s["baseline_peak"] and pts[0]["recompute_ns"] == 0, pts[0]
assert pts[-1]["budget"] == s["min_peak"], (pts[-1], s["min_peak"])
for a, b in zip(pts, pts[1:]):
    assert a["budget"] > b["budget"], (a, b)
    assert a["recompute_ns"] <= b["recompute_ns"], ("not monotone", a, b)
for p in pts:
    assert p["peak"] <= p["budget"], p
    assert p["bound_ns"] <= p["recompute_ns"], p
print(s["min_peak"])
PY
"$BUILD/remat-plan" "$g" --budget "$(cat "$tmp/min")" --plan-version 2 >/dev/null 2>&1 ||
	fail "the sweep's smallest budget is not met again"

"$BUILD/remat-report" --sweep "$tmp/sw.json" --html "$tmp/sw.html" --ascii >"$tmp/term" 2>&1 ||
	fail "remat-report --sweep: exit $?: $(cat "$tmp/term")"
grep -q "RECOMPUTE TIME BY BUDGET" "$tmp/term" || fail "no heading: $(cat "$tmp/term")"
rows=$(grep -c "%  *[0-9.]*%  *[0-9.n/a%]*  " "$tmp/term")
[ "$rows" -ge 2 ] || fail "terminal view: $rows rows: $(cat "$tmp/term")"
"$BUILD/remat-report" --sweep "$tmp/sw.json" "$g" >/dev/null 2>&1 && fail "--sweep with a trace accepted"
echo '{"format": "remat-sweep", "version": 1}' >"$tmp/bad.json"
"$BUILD/remat-report" --sweep "$tmp/bad.json" >"$tmp/err" 2>&1
[ $? -eq 2 ] || fail "a bad sweep file: want exit 2"
grep -q "bad.json" "$tmp/err" || fail "bad sweep file message: $(cat "$tmp/err")"

chrome=$(command -v chromium-headless-shell || command -v chromium) ||
	fail "headless Chromium is missing (Debian: chromium-headless-shell; make deps)"
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$tmp/profile" --window-size=820,640 --screenshot="$tmp/sw.png" \
	"file://$tmp/sw.html" >"$tmp/chrome.log" 2>&1
[ -s "$tmp/sw.png" ] || fail "Chromium wrote no screenshot: $(tail -3 "$tmp/chrome.log")"
python3 - "$tmp/sw.png" <<'PY' || fail "the rendered page shows no curve"
# Decodes the PNG (zlib, the five row filters) and counts pixels of the
# curve's colour (#1f77b4, anti-aliasing aside): a drawn curve has
# hundreds; a page without the chart has none.
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and ctype in (2, 6), (depth, ctype)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), w * bpp
prev, hits, i = bytearray(stride), 0, 0
for y in range(h):
    f, row = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = row[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: row[x] = (row[x] + a) & 255
        elif f == 2: row[x] = (row[x] + b) & 255
        elif f == 3: row[x] = (row[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = row[x], row[x + 1], row[x + 2]
        if abs(r - 0x1f) < 24 and abs(g - 0x77) < 24 and abs(bl - 0xb4) < 24:
            hits += 1
    prev = row
print("curve pixels:", hits)
assert hits > 200, hits
PY
echo "report_sweep.sh: ok"
