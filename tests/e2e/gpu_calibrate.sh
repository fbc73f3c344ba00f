#!/bin/sh
# tools/gpu/calibrate.sh, which measures a GPU for the simulated device's
# profile: --help, a bad argument in one line (exit 2), without a GPU one
# SKIP line (exit 77).  With --simulate it builds calibrate.cu with simnvcc
# and times the simulated device with its own host clock, so it must print
# the profile back exactly: every SIMCUDA_* figure it measures at its H100
# default, and values set in the environment (a per-call cost, a per-chunk
# one, SIMCUDA_VMM_SYNC=none) come back.  Every line is a '#' comment or
# NAME=value, so the output can be set as environment.  Needs nvcc.
set -eu
# G, tmp, fail, expect
. tests/e2e/gpu_lib.sh

sh "$G/calibrate.sh" --help >"$tmp/help" 2>&1 || fail "--help: exit $?"
grep -q '^Usage: tools/gpu/calibrate.sh' "$tmp/help" || fail "--help: no usage line"
grep -q '^Exit: 0' "$tmp/help" || fail "--help: the exit codes are not documented"
expect bad 2 "^calibrate: unknown argument '--bogus' \\(try --help\\)$" sh "$G/calibrate.sh" --bogus
expect bad-reps 2 "^calibrate: --reps 'x': expected a whole number" sh "$G/calibrate.sh" --reps x
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "No devices were found"\n' >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
expect nogpu 77 "^calibrate: SKIP: no GPU: 'nvidia-smi -L' lists no GPU$" \
	env PATH="$tmp/bin:$PATH" sh "$G/calibrate.sh"
if ! command -v nvidia-smi >/dev/null 2>&1; then
	expect nosmi 77 "^calibrate: SKIP: no GPU: nvidia-smi is not installed" sh "$G/calibrate.sh"
fi

# The profile's defaults (H100), as calibrate prints them.
cat >"$tmp/defaults" <<'EOF'
SIMCUDA_LAUNCH_NS=3000
SIMCUDA_COPY_ISSUE_NS=5000
SIMCUDA_EVENT_NS=1000
SIMCUDA_SYNC_NS=1000
SIMCUDA_STREAM_WAIT_NS=1000
SIMCUDA_MALLOC_NS=50000
SIMCUDA_MALLOC_ASYNC_NS=1000
SIMCUDA_VMM_CREATE_NS=193000
SIMCUDA_VMM_CREATE_CHUNK_NS=0
SIMCUDA_VMM_MAP_NS=1450
SIMCUDA_VMM_MAP_CHUNK_NS=0
SIMCUDA_VMM_SET_ACCESS_NS=36000
SIMCUDA_VMM_SET_ACCESS_CHUNK_NS=0
SIMCUDA_VMM_UNMAP_NS=25600
SIMCUDA_VMM_UNMAP_CHUNK_NS=0
SIMCUDA_VMM_RELEASE_NS=25600
SIMCUDA_VMM_RELEASE_CHUNK_NS=0
SIMCUDA_VMM_RESERVE_NS=19000
SIMCUDA_VMM_RESERVE_CHUNK_NS=0
SIMCUDA_VMM_SYNC=device
EOF

# calibrate NAME [VAR=VALUE...]: calibrate.sh --simulate with only those
# SIMCUDA_* variables set; its output must be WANT with them replaced.
calibrate() {
	_n=$1
	shift
	cp "$tmp/defaults" "$tmp/$_n.want"
	for _kv in "$@"; do
		sed -i "s/^${_kv%%=*}=.*/$_kv/" "$tmp/$_n.want"
	done
	_rc=0
	# shellcheck disable=SC2046 # one "-u NAME" per SIMCUDA_* variable set
	env $(env | sed -n 's/^\(SIMCUDA_[A-Za-z0-9_]*\)=.*/-u \1/p') "$@" \
		sh "$G/calibrate.sh" --simulate >"$tmp/$_n.out" 2>"$tmp/$_n.err" || _rc=$?
	[ "$_rc" = 0 ] || fail "calibrate.sh --simulate $*: exit $_rc: $(tail -n 5 "$tmp/$_n.err")"
	_bad=$(grep -Ev '^(#.*|SIMCUDA_[A-Z0-9_]+=[0-9a-z]+)$' "$tmp/$_n.out" | head -n 3)
	[ -z "$_bad" ] || fail "$*: lines neither comment nor NAME=value: $_bad"
	grep -v '^#' "$tmp/$_n.out" >"$tmp/$_n.got"
	cmp -s "$tmp/$_n.want" "$tmp/$_n.got" && return
	_d=$(awk -F= 'NR == FNR { want[$1] = $2; next }
		{ got[$1] = $2; if (!($1 in want)) printf "%s=%s not wanted; ", $1, $2 }
		END { for (k in want) if (!(k in got)) printf "no %s; ", k;
		      else if (got[k] != want[k]) printf "%s=%s, want %s; ", k, got[k], want[k] }' \
		"$tmp/$_n.want" "$tmp/$_n.got")
	fail "calibrate.sh --simulate${*:+ $*}: not the profile: ${_d:-the lines out of order}"
}
# The h100 profile by name (legacy, whose calls cost nothing, is still the
# simulator's default).
calibrate defaults SIMCUDA_DEVICE=h100
calibrate override SIMCUDA_DEVICE=h100 SIMCUDA_VMM_UNMAP_NS=12345 SIMCUDA_LAUNCH_NS=7000 SIMCUDA_VMM_MAP_CHUNK_NS=100 \
	SIMCUDA_VMM_SYNC=none
echo "gpu_calibrate: --help, bad arguments, SKIP without a GPU; --simulate prints the profile back, defaults and overrides"
