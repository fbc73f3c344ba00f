# Sourced by the tests/e2e/trainer_*.sh scripts (run from the repo root).
set -eu
BUILD=${BUILD:-build}
TR=$BUILD/trainers
SIMRUN=${SIMRUN:-sim/bin/simrun}
case "$SIMRUN" in /*) ;; *) SIMRUN=$(pwd)/$SIMRUN ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*"
	exit 1
}

# run NAME TRAINER ARGS...: stdout to $tmp/NAME.out, stderr to $tmp/NAME.err;
# any failure is fatal.
run() {
	name=$1
	shift
	"$SIMRUN" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		fail "$* exited $?: $(tail -n 5 "$tmp/$name.err")"
}

# check_format FILE ITERS: ITERS 'iter N loss HEX' lines, then one checksum.
check_format() {
	n=$(grep -c '^iter [0-9][0-9]* loss -\{0,1\}0x[0-9a-f.]*p[-+][0-9]*$' "$1" || true)
	[ "$n" = "$2" ] || fail "$1: expected $2 iteration lines, got $n: $(head -n 3 "$1")"
	grep -q '^checksum [0-9a-f]\{16\}$' "$1" || fail "$1: no checksum line"
	[ "$(wc -l <"$1")" -eq $(($2 + 1)) ] || fail "$1: unexpected extra output"
}

# loss FILE N: the loss of iteration N as a decimal number.
loss() {
	printf '%.6f' "$(awk -v n="$2" '$1 == "iter" && $2 == n { print $4 }' "$1")"
}
