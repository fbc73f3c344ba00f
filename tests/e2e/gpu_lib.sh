# tests/e2e/gpu_lib.sh: sourced by the tests of tools/gpu/ (gpu_scripts.sh,
# gpu_calibrate.sh) from the repository root: a temporary directory, fail,
# and expect, the check of a script's one-line answers.
G=tools/gpu
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}

# expect NAME RC PATTERN CMD...: CMD exits RC, prints nothing on stdout and
# one line on stderr, matching the grep -E PATTERN.
expect() {
	_n=$1 _want=$2 _pat=$3
	shift 3
	_rc=0
	"$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err" || _rc=$?
	[ "$_rc" = "$_want" ] || fail "$_n: exit $_rc, want $_want: $(head -n 3 "$tmp/$_n.err")"
	[ ! -s "$tmp/$_n.out" ] || fail "$_n: printed on stdout: $(head -n 2 "$tmp/$_n.out")"
	[ "$(wc -l <"$tmp/$_n.err")" -eq 1 ] ||
		fail "$_n: $(wc -l <"$tmp/$_n.err") lines on stderr, want one: $(head -n 4 "$tmp/$_n.err")"
	grep -Eq "$_pat" "$tmp/$_n.err" || fail "$_n: '$(cat "$tmp/$_n.err")' does not match '$_pat'"
}
