# Sourced by tests/cli/*.sh (run from the repository root): the remat
# command on the simulated device.
set -eu
BUILD=${BUILD:-build}
REMAT=$(pwd)/$BUILD/remat
SIMRUN=$(pwd)/sim/bin/simrun
TR=$(pwd)/$BUILD/trainers
export SIMCUDA_GRANULARITY=64K
# gpt sized so activations dominate: 50% of its peak is reachable.
GPT="$TR/gpt --iters 8 --layers 4 --seq 64"
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
export REMAT_CACHE_DIR=$tmp/cache
[ -x "$REMAT" ] || {
	echo "FAIL: $REMAT is not built"
	exit 1
}

# make check-asan / check-tsan: a sanitized libremat.so needs the
# sanitizer's runtime first in LD_PRELOAD (remat keeps a preload that is
# there first), in remat's environment only: TSan's runtime preloaded into
# an uninstrumented sh crashes it.
SANENV=${TEST_SAN_RUNTIME:+LD_PRELOAD=$TEST_SAN_RUNTIME}
if [ -n "${TEST_SAN_RUNTIME:-}" ]; then
	printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$TEST_SAN_RUNTIME" "$REMAT" >"$tmp/remat"
	chmod +x "$tmp/remat"
	REMAT=$tmp/remat
fi

fail() {
	echo "FAIL: $*"
	exit 1
}

# expect FILE REGEX: some line of FILE matches the extended regex.
expect() {
	grep -Eq -- "$2" "$1" || fail "no line of $1 matches: $2
--- $1:
$(cat "$1")"
}

# status WANT CMD...: CMD exits WANT (stdout, stderr in $tmp/st.out, .err).
status() {
	_want=$1
	shift
	set +e
	"$@" >"$tmp/st.out" 2>"$tmp/st.err"
	_rc=$?
	set -e
	[ "$_rc" = "$_want" ] || fail "$* exited $_rc, want $_want: $(cat "$tmp/st.err")"
}
