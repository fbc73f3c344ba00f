# Sourced by tests/e2e/trace_*.sh (run from the repository root): runs the
# trainers on the simulated device with and without libremat.
set -eu
BUILD=${BUILD:-build}
TR=$BUILD/trainers
LIB=$(pwd)/$BUILD/libremat.so
# What the tests preload: the library, after a sanitizer's runtime when
# libremat.so is built with one (make check-asan / check-tsan).
PRELOAD="${TEST_SAN_RUNTIME:+$TEST_SAN_RUNTIME:}$LIB"
SIMRUN=$(pwd)/sim/bin/simrun
export SIMCUDA_GRANULARITY=64K
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
[ -e "$LIB" ] || {
	echo "FAIL: $LIB is not built"
	exit 1
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# run NAME ENV... -- TRAINER ARGS...: stdout to $tmp/NAME.out, stderr to
# $tmp/NAME.err; a failing trainer is fatal.
run() {
	_run=$1
	shift
	_envs=""
	while [ "$1" != "--" ]; do
		_envs="$_envs $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	env $_envs "$SIMRUN" "$@" >"$tmp/$_run.out" 2>"$tmp/$_run.err" ||
		fail "$_run: $* exited $?: $(tail -n 5 "$tmp/$_run.err")"
}

# same A B: two runs printed identical bytes.
same() {
	cmp -s "$tmp/$1.out" "$tmp/$2.out" ||
		fail "$1 and $2 differ: $(diff "$tmp/$1.out" "$tmp/$2.out" | head -n 6)"
}

# check_trace DIR...: in each DIR, trace.json parses, ends with "end": true,
# and params.bin has the size and FNV-1a 64 that trace.json says (one
# python for all: a fault sweep has a trace for each run that recovered).
check_trace() {
	[ $# -gt 0 ] || return 0
	python3 - "$@" >"$tmp/bad-trace" <<'PY' || fail "trace in $(cat "$tmp/bad-trace") is not valid"
import json, sys, os


def check(d):
    t = json.load(open(os.path.join(d, "trace.json")))
    assert t["format"] == "remat-trace" and t["version"] == 1, "format"
    assert t.get("end") is True, "no end marker"
    data = open(os.path.join(d, "params.bin"), "rb").read()
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    f = t["files"]["params.bin"]
    assert f["size"] == len(data), "params.bin size"
    assert int(f["fnv1a64"], 16) == h, "params.bin hash"
    assert len(t["ops"]) == t["iteration"]["period"], "ops vs period"
    for o in t["ops"]:
        if o["kind"] == "kernel":
            off, n = o["params"]
            assert off + n <= len(data), "params range"
        for r in o["refs"]:
            assert 0 <= r[0] < len(t["buffers"]), "ref to unknown buffer"


for d in sys.argv[1:]:
    try:
        check(d)
    except Exception:
        print(d)
        raise
PY
}
