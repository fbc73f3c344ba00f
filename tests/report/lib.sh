# Shared by the tests/report/*.sh scripts (sourced, run from the repo root).
set -eu
B=${BUILD:-build}
REPORT=$B/remat-report
FIX=tests/report/fixtures/mlp3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export LC_ALL=C # plain ASCII chart, stable number formatting
unset NO_COLOR

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect_line FILE REGEX: some line of FILE matches the extended regex
expect_line() {
	grep -Eq -- "$2" "$1" || {
		echo "--- $1:" >&2
		cat "$1" >&2
		fail "no line matches: $2"
	}
}
