# shellcheck shell=sh
# Sourced by tools/gpu/validate-*.sh: helpers shared by the real-GPU
# validation scripts (skip/fail messages, a PASS/FAIL table, trace, report,
# budget and run-mode checks).  Callers set PROG (their name), OUT (the
# results directory) and BUILD; ROOT is the repository root.
#
# Exit codes of the scripts: 0 all checks passed, 1 a check failed, 2 bad
# usage or a build failure, 77 skipped (no GPU, no CUDA toolkit, no torch).

# shellcheck disable=SC2034 # used by the scripts that source this file
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() {
	say "$*"
	exit 2
}
# skip MESSAGE: the machine cannot run this validation at all.
skip() {
	say "SKIP: $*"
	exit 77
}

# need_gpu: exits 77 unless nvidia-smi exists and lists at least one GPU.
need_gpu() {
	command -v nvidia-smi >/dev/null 2>&1 ||
		skip "no GPU: nvidia-smi is not installed (this validation needs an NVIDIA GPU and its driver)"
	_smi=$(nvidia-smi -L 2>&1) ||
		skip "no GPU: 'nvidia-smi -L' failed (exit $?): $(printf '%s' "$_smi" | head -n 1)"
	printf '%s\n' "$_smi" | grep -q '^GPU [0-9]' ||
		skip "no GPU: 'nvidia-smi -L' lists no GPU"
}

# gpu_count: the number of GPUs nvidia-smi lists.
gpu_count() { nvidia-smi -L 2>/dev/null | grep -c '^GPU [0-9]' || true; }

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export CUDA_HOME

# use_real_cuda DIR LIB...: links each named library of the CUDA toolkit
# (libcudart.so.13 for the trainers, libcupti.so.13 that libremat dlopens)
# into DIR and puts DIR first on LD_LIBRARY_PATH.  Only those libraries:
# the whole toolkit directory on the path would also override the CUDA
# libraries a PyTorch install brings along.  Refuses a path that holds the
# simulated device.
use_real_cuda() {
	_dir=$1
	shift
	mkdir -p "$_dir"
	for _lib in "$@"; do
		for _d in "$CUDA_HOME/lib64" "$CUDA_HOME/extras/CUPTI/lib64" \
			"$CUDA_HOME/targets/x86_64-linux/lib"; do
			if [ -e "$_d/$_lib" ]; then
				ln -sf "$_d/$_lib" "$_dir/$_lib"
				break
			fi
		done
	done
	_old_ifs=$IFS
	IFS=:
	for _d in ${LD_LIBRARY_PATH:-}; do
		if [ -e "$_d/libcuda.so.1" ] && [ -e "$_d/libsimcuda_kernel.so" ]; then
			IFS=$_old_ifs
			die "LD_LIBRARY_PATH holds the simulated device ($_d): remove it for a real-GPU run"
		fi
	done
	IFS=$_old_ifs
	LD_LIBRARY_PATH=$_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
}

# clean_env: no REMAT_* variable and no preload leaks from the caller into
# the baseline runs (the scripts set them per run).
clean_env() {
	for _v in $(env | sed -n 's/^\(REMAT_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$_v"
	done
	unset LD_PRELOAD
}

# ---- results table ----------------------------------------------------------

# result WHAT PASS|FAIL DETAIL: one row of the final table.
result() {
	printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$OUT/results.tsv"
	printf '%-4s  %-44s %s\n' "$2" "$1" "$3" >&2
}
pass() { result "$1" PASS "$2"; }
fail() { result "$1" FAIL "$2"; }

# table: prints the PASS/FAIL table to stdout; returns 1 when any row failed.
table() {
	echo
	printf '%-46s %-6s %s\n' "CHECK" "RESULT" "DETAIL"
	awk -F '\t' '{ printf "%-46s %-6s %s\n", $1, $2, $3 }' "$OUT/results.tsv"
	_np=$(grep -c '	PASS	' "$OUT/results.tsv" || true)
	_nf=$(grep -c '	FAIL	' "$OUT/results.tsv" || true)
	echo
	echo "$PROG: $_np passed, $_nf failed (logs, traces and plans in $OUT)"
	[ "$_nf" -eq 0 ]
}

# ---- running ----------------------------------------------------------------

# run NAME [VAR=VALUE...] CMD ARGS...: runs through env(1): stdout to
# $OUT/NAME.out, stderr to $OUT/NAME.err, exit status to $OUT/NAME.rc;
# returns that status.
run() {
	_name=$1
	shift
	_rc=0
	env "$@" >"$OUT/$_name.out" 2>"$OUT/$_name.err" || _rc=$?
	echo "$_rc" >"$OUT/$_name.rc"
	return "$_rc"
}

# last_err NAME: the tail of a run's stderr, on one line, for a table row.
last_err() { tail -n 3 "$OUT/$1.err" 2>/dev/null | tr '\n' ' ' | cut -c1-300; }

# same A B: byte-identical deterministic output of two runs.
same() { cmp -s "$OUT/$1.out" "$OUT/$2.out"; }

# differ_line A B: the first differing line, for a table row.
differ_line() {
	diff "$OUT/$1.out" "$OUT/$2.out" | sed -n '2,3p' | tr '\n' ' ' | cut -c1-200
}

# same_out A B: same A B, printing a detail for the table row.  A script
# may redefine it (validate-pytorch.sh compares one file per rank).
same_out() {
	if same "$1" "$2"; then
		echo "$(wc -l <"$OUT/$2.out") lines"
	else
		differ_line "$1" "$2"
		return 1
	fi
}

# ---- traces, reports, budgets, plans ---------------------------------------

# check_trace DIR: trace.json parses and ends with "end": true, params.bin has
# the size and FNV-1a 64 that trace.json records, and (with a second argument
# "real") the device is not the simulator.  Prints the device and op count.
check_trace() {
	python3 - "$1" "${2:-}" <<'PY'
import json, os, sys
d, want_real = sys.argv[1], sys.argv[2] == "real"
t = json.load(open(os.path.join(d, "trace.json")))
assert t.get("format") == "remat-trace", "not a remat trace"
assert t.get("end") is True, "trace.json has no end marker (truncated?)"
data = open(os.path.join(d, "params.bin"), "rb").read()
h = 0xcbf29ce484222325
for b in data:
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
f = t["files"]["params.bin"]
assert f["size"] == len(data), "params.bin size differs from trace.json"
assert int(f["fnv1a64"], 16) == h, "params.bin hash differs from trace.json"
assert len(t["ops"]) == t["iteration"]["period"], "op count differs from the period"
dev = t["process"]["device"]
assert not (want_real and dev == "simcuda"), "traced on the simulator, not a GPU"
print("%s, %d ops, %d buffers" % (dev, len(t["ops"]), len(t["buffers"])))
PY
}

# check_report TRACE_DIR NAME: remat-report reads the trace (to
# $OUT/NAME.report) and its CUPTI cross-check says the counts match.
# Prints the cross-check line.
check_report() {
	"$BUILD/remat-report" --no-color --ascii "$1" >"$OUT/$2.report" 2>"$OUT/$2.report.err" ||
		{
			echo "remat-report failed: $(head -n 2 "$OUT/$2.report.err" | tr '\n' ' ')"
			return 1
		}
	_line=$(sed -n '/^CUPTI CROSS-CHECK/{n;p;}' "$OUT/$2.report" | sed 's/^ *//')
	echo "${_line:-no CUPTI CROSS-CHECK section}"
	case $_line in
	*"they match"*) return 0 ;;
	*) return 1 ;;
	esac
}

# budget TRACE_DIR FRACTION NAME: prints "BUDGET CONST PEAK MIN" in bytes:
# CONST = persistent + small pool (never evicted), PEAK = the baseline peak,
# MIN = the smallest peak remat-plan can reach, BUDGET = CONST + FRACTION of
# the per-iteration memory (PEAK - CONST), raised to MIN when below it.
budget() {
	# A budget of one byte cannot be met: remat-plan then says the smallest
	# peak it can reach.
	"$BUILD/remat-plan" "$1" --budget 1 >"$OUT/$3.min.txt" 2>&1 || true
	python3 - "$1/trace.json" "$OUT/$3.min.txt" "$2" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1]))["memory"]
const = m["persistent_bytes"] + m["small_pool_bytes"]
peak = m["peak_bytes"]
r = re.search(r"smallest reachable peak: .*\((\d+) bytes\)", open(sys.argv[2]).read())
if not r:
    sys.exit("remat-plan did not report the smallest reachable peak (see %s)" % sys.argv[2])
low = int(r.group(1))
want = int(const + float(sys.argv[3]) * (peak - const))
print(max(want, low), const, peak, low)
PY
}

# human BYTES: MiB with one decimal.
human() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

# wait_plan CACHE_DIR SECONDS: waits until remat-plan (started by a run-mode
# job, which goes on after the job exits) has stored a plan in the cache.
wait_plan() {
	_t=0
	while [ "$_t" -lt "$2" ]; do
		for _f in "$1"/*.plan.json; do
			[ -f "$_f" ] && return 0
		done
		sleep 1
		_t=$((_t + 1))
	done
	return 1
}

# run_facts NAME: from a run-mode stderr (REMAT_LOG=1; several processes
# may have written to it), prints "APPLIED PEAK EVICTIONS REPLAYS": how many
# processes applied a plan, the highest physical peak of their replay
# iterations ("-" when none was reported), the fewest evictions and replays.
run_facts() {
	awk '
	/applied from iteration/ { ap++ }
	/physical peak [0-9]+ bytes in replay iterations/ {
		for (i = 1; i < NF; i++) if ($i == "peak") { v = $(i + 1) + 0; if (pk == "" || v > pk) pk = v }
	}
	/iterations, [0-9]+ evictions, [0-9]+ replays/ {
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^evictions/) { v = $(i - 1) + 0; if (ev == "" || v < ev) ev = v }
			if ($i ~ /^replays/) { v = $(i - 1) + 0; if (rp == "" || v < rp) rp = v }
		}
	}
	END {
		printf "%d %s %s %s\n", ap, pk == "" ? "-" : pk, ev == "" ? "-" : ev, rp == "" ? "-" : rp
	}' "$OUT/$1.err"
}

# check_run_mode NAME BASE BUDGET LABEL [PROCESSES]: the standard verdicts
# on a run-mode run: output identical to BASE (same_out), a plan applied in
# each of PROCESSES (default 1) with evictions, the replay iterations'
# physical peak within the budget.  Rows are named "LABEL: ...".
check_run_mode() {
	_cn=$1 _cb=$2 _cbud=$3 _cl=$4 _cnp=${5:-1}
	if _d=$(same_out "$_cb" "$_cn"); then
		pass "$_cl: output identical" "$_d"
	else
		fail "$_cl: output identical" "$_d"
	fi
	read -r _ap _pk _ev _rp <<EOF
$(run_facts "$_cn")
EOF
	if [ "$_ap" -ge "$_cnp" ] && [ "$_ev" != "-" ] && [ "$_ev" -gt 0 ]; then
		pass "$_cl: plan applied" "$_ev evictions, $_rp replays"
	else
		fail "$_cl: plan applied" "applied=$_ap evictions=$_ev; $(grep libremat "$OUT/$_cn.err" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
	fi
	if [ "$_pk" != "-" ] && [ "$_pk" -le "$_cbud" ]; then
		pass "$_cl: replay peak within budget" "$(human "$_pk") <= $(human "$_cbud")"
	else
		fail "$_cl: replay peak within budget" "peak $_pk, budget $_cbud"
	fi
}
