#!/bin/sh
# Bad input gives one clear message naming the file and the problem, exit 2.
. tests/report/lib.sh

# check NAME DIR REGEX: remat-report DIR exits 2 with one stderr line matching REGEX
check() {
	set +e
	"$REPORT" "$2" >"$TMP/$1.out" 2>"$TMP/$1.err"
	rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "$1: exit $rc, want 2"
	[ "$(wc -l <"$TMP/$1.err")" -eq 1 ] || fail "$1: want exactly one line on stderr: $(cat "$TMP/$1.err")"
	expect_line "$TMP/$1.err" "$3"
	[ ! -s "$TMP/$1.out" ] || fail "$1: printed a report for a bad trace"
}

broken() {
	cp -r "$FIX" "$TMP/$1"
	echo "$TMP/$1"
}

check missing "$TMP/nope" "^remat-report: $TMP/nope: .*(no such|not)"
# a file is read as a graph file: one that is not says so
check notgraph "$FIX/params.bin" "params\.bin:.*JSON"

d=$(broken badjson)
head -c 3000 "$FIX/trace.json" >"$d/trace.json" # cut mid-file: a live writer's half file
check truncated "$d" "$d/trace\.json.*(JSON|truncated|end)"

d=$(broken noend)
python3 - "$d/trace.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
del t["end"]
json.dump(t, open(sys.argv[1], "w"))
PY
check noend "$d" "$d/trace\.json.*end"

d=$(broken short)
head -c 700 "$FIX/params.bin" >"$d/params.bin"
check params-size "$d" "$d/params\.bin.*700.*776"

d=$(broken hash)
printf '\001' | dd of="$d/params.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
check params-hash "$d" "$d/params\.bin.*(FNV|hash|fnv)"

d=$(broken version)
sed 's/"version": 1,/"version": 2,/' "$FIX/trace.json" >"$d/trace.json"
check version "$d" "$d/trace\.json.*version.*2.*1"

d=$(broken noparams)
rm "$d/params.bin"
check noparams "$d" "params\.bin"

# usage
"$REPORT" --help >"$TMP/help" || fail "--help exited $?"
expect_line "$TMP/help" '^usage: remat-report '
expect_line "$TMP/help" '--plan PLAN\.json'
set +e
"$REPORT" >/dev/null 2>"$TMP/noarg"
rc=$?
"$REPORT" --width x "$FIX" >/dev/null 2>"$TMP/badwidth"
rc2=$?
set -e
[ "$rc" -eq 2 ] || fail "no argument: exit $rc, want 2"
[ "$rc2" -eq 2 ] || fail "--width x: exit $rc2, want 2"
expect_line "$TMP/badwidth" 'width'
echo "ok"
