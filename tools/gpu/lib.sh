# shellcheck shell=sh disable=SC2154 # the variables the sourcing script sets
# Sourced by tools/gpu/validate-*.sh: helpers shared by the real-GPU
# validation scripts (skip/fail messages, a PASS/FAIL table, trace, report,
# budget and run-mode checks).  Callers set PROG (their name), OUT (the
# results directory) and BUILD; ROOT is the repository root.
#
# Every check prints one verdict row: PASS, FAIL or SKIP (the check could
# not be made here: a second GPU, an optional package, a trainer flag this
# build lacks), with a detail.  A SKIP row is never counted as passed.
#
# Exit codes of the scripts: 0 no check failed, 1 a check failed, 2 bad
# usage or a build failure, 77 skipped whole (no GPU, no CUDA toolkit, no
# torch or jax), with one line on stderr saying why.

# shellcheck disable=SC2034 # used by the scripts that source this file
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
# usage: the comment block at the top of the calling script, for --help.
usage() { sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
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

# want_fraction F [0]: dies unless F is a number in (0, 1] (or 0, the
# smallest reachable peak, with a second argument 0).
want_fraction() {
	case $1 in
	0.[0-9]* | 1 | 1.0) ;;
	0) [ "${2:-}" = 0 ] || die "--fraction '$1': expected a number in (0, 1], like 0.5" ;;
	*) die "--fraction '$1': expected a number in (0, 1], like 0.5" ;;
	esac
}

# want_iters N MIN: dies unless N is a whole number of at least MIN.
want_iters() {
	case $1 in
	'' | *[!0-9]*) die "--iters '$1': expected a whole number" ;;
	esac
	[ "$1" -ge "$2" ] || die "--iters $1: at least $2 (warm-up, profile, then replay iterations)"
}

# build_tools TARGET...: make in the repository root with BUILD=$bdir (the
# log in $BUILD/gpu-validation-make.log); dies when make fails.
build_tools() {
	mkdir -p "$BUILD"
	say "building $* (make)"
	make -j"$(nproc 2>/dev/null || echo 2)" BUILD="$bdir" "$@" \
		>"$BUILD/gpu-validation-make.log" 2>&1 ||
		die "make failed: see $BUILD/gpu-validation-make.log"
}

# budget_bytes_of B: B in bytes (digits with an optional K/M/G/T suffix);
# dies on anything else (the run-mode checks compare bytes: no percentage).
budget_bytes_of() {
	python3 -c '
import re, sys
m = re.fullmatch(r"(\d+)([KMGT]?)(i?B)?", sys.argv[1], re.I)
if not m or int(m.group(1)) == 0:
    sys.exit(1)
print(int(m.group(1)) << (10 * " KMGT".index((m.group(2) or " ").upper())))' "$1" ||
		die "budget '$1': expected bytes with an optional K/M/G/T suffix, like 12G"
}

# need_module PY MODULE FRAMEWORK: skips unless the interpreter PY exists
# and imports MODULE.
need_module() {
	command -v "$1" >/dev/null 2>&1 || skip "no $3: no '$1' interpreter (see --python)"
	_err=$("$1" -c "import $2" 2>&1) ||
		skip "no $3: '$1 -c \"import $2\"' failed: $(printf '%s' "$_err" | tail -n 1)"
}

# remat_tools: builds libremat.so, remat-plan and remat-report (unless
# build_it is 0) and dies when one is missing.
# shellcheck disable=SC2120 # validate-trainers.sh adds "trainers"
remat_tools() {
	[ "$build_it" = 0 ] || build_tools "$bdir/libremat.so" "$bdir/remat-plan" "$bdir/remat-report" "$@"
	for _f in "$BUILD/libremat.so" "$BUILD/remat-plan" "$BUILD/remat-report"; do
		[ -e "$_f" ] || die "$_f is missing (run without --skip-build)"
	done
	bundle_libs
}

# bundle_libs: the libraries tools/gpu/bundle.sh copied into
# $BUILD/bundle-lib that this machine lacks (ldconfig does not know them)
# go on LD_LIBRARY_PATH, through links in $BUILD/bundle-lib.used; the ones
# it has stay its own.
bundle_libs() {
	[ -d "$BUILD/bundle-lib" ] || return 0
	_known=$(ldconfig -p 2>/dev/null | awk '{ print $1 }')
	rm -rf "$BUILD/bundle-lib.used"
	mkdir -p "$BUILD/bundle-lib.used"
	for _l in "$BUILD/bundle-lib"/*; do
		[ -e "$_l" ] || continue
		printf '%s\n' "$_known" | grep -qxF "$(basename "$_l")" ||
			ln -sf "$_l" "$BUILD/bundle-lib.used/$(basename "$_l")"
	done
	LD_LIBRARY_PATH=$BUILD/bundle-lib.used${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export LD_LIBRARY_PATH
}

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

# result WHAT PASS|FAIL|SKIP DETAIL: one row of the final table (tabs and
# newlines in DETAIL become spaces: one row is one line).
result() {
	_detail=$(printf '%s' "$3" | tr '\t\n' '  ')
	printf '%s\t%s\t%s\n' "$1" "$2" "$_detail" >>"$OUT/results.tsv"
	printf '%-4s  %-44s %s\n' "$2" "$1" "$_detail" >&2
}
pass() { result "$1" PASS "$2"; }
fail() { result "$1" FAIL "$2"; }
skiprow() { result "$1" SKIP "$2"; }

# table: prints the table to stdout, then "PROG: N passed, N failed,
# N skipped"; returns 1 when any row failed.
table() {
	echo
	printf '%-46s %-6s %s\n' "CHECK" "RESULT" "DETAIL"
	awk -F '\t' '{ printf "%-46s %-6s %s\n", $1, $2, $3 }' "$OUT/results.tsv"
	_np=$(grep -c '	PASS	' "$OUT/results.tsv" || true)
	_nf=$(grep -c '	FAIL	' "$OUT/results.tsv" || true)
	_ns=$(grep -c '	SKIP	' "$OUT/results.tsv" || true)
	echo
	echo "$PROG: $_np passed, $_nf failed, $_ns skipped (logs, traces and plans in $OUT)"
	[ "$_nf" -eq 0 ]
}

# skip_reason NAME: the SKIP line a job that exited 77 printed, for a row.
skip_reason() {
	grep -h 'SKIP' "$OUT/$1.err" 2>/dev/null | tail -n 1 | sed 's/.*SKIP: *//' | cut -c1-300
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
# CONST = persistent + small pool, PEAK = the baseline peak, MIN = the
# smallest peak remat-plan can reach, BUDGET = CONST + FRACTION of the
# per-iteration memory (PEAK - CONST), raised to MIN when below it.  Where
# the activations live in the program's own long-lived pool (PyTorch's
# caching allocator, JAX's BFC, the trainers' --alloc caching|vmm), they
# count as persistent and CONST reaches PEAK: then FRACTION is of what lies
# between MIN and PEAK.  PLAN_ARGS: more remat-plan flags (the alloc
# group's --plan-version 2: buffers live across the boundary are freed only
# by what version 1 lacks).
budget() {
	# A budget of one byte cannot be met: remat-plan then says the smallest
	# peak it can reach.
	# shellcheck disable=SC2086 # PLAN_ARGS: a word list on purpose
	"$BUILD/remat-plan" "$1" --budget 1 ${PLAN_ARGS:-} >"$OUT/$3.min.txt" 2>&1 || true
	python3 - "$1/trace.json" "$OUT/$3.min.txt" "$2" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1]))["memory"]
const = m["persistent_bytes"] + m["small_pool_bytes"]
peak = m["peak_bytes"]
r = re.search(r"smallest reachable peak: .*\((\d+) bytes\)", open(sys.argv[2]).read())
if not r:
    sys.exit("remat-plan did not report the smallest reachable peak (see %s)" % sys.argv[2])
low = int(r.group(1))
base = min(const, low)
want = int(base + float(sys.argv[3]) * (peak - base))
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

# ---- a framework's job (validate-pytorch.sh, validate-jax.sh) -------------
#
# The caller defines job NAME VAR=VALUE... (its training script with those
# variables: the deterministic lines of rank R in $OUT/NAME.rankR.out, its
# stats in $OUT/NAME.rankR.json, stderr in $OUT/NAME.err; returns the exit
# status, which run() also keeps in $OUT/NAME.rc) and after_trace PREFIX
# LABEL (rows of its own on the trace run), and sets nranks (processes per
# job), REF_VARS (variables of the reference runs without libremat), strict,
# LIB, BUILD, budget_bytes (empty: from the trace), fraction and iters.

# framework_setup NAME SCRIPT: BUILD, OUT (default build/gpu-validation/
# NAME), LIB and SCRIPT (tools/gpu/SCRIPT) set, the tools built, OUT made
# anew with the GPUs in gpu.txt, CUPTI from the toolkit.
framework_setup() {
	bdir=${BUILD:-build} # relative, for make
	BUILD=$ROOT/$bdir
	OUT=${out:-$BUILD/gpu-validation/$1}
	LIB=$BUILD/libremat.so
	SCRIPT=$ROOT/tools/gpu/$2
	# shellcheck disable=SC2119 # no targets beyond libremat's
	remat_tools
	rm -rf "$OUT"
	mkdir -p "$OUT"
	: >"$OUT/results.tsv"
	: >"$OUT/runs.tsv"
	nvidia-smi -L >"$OUT/gpu.txt" 2>&1
	use_real_cuda "$OUT/cuda-libs" libcupti.so.13 libcupti.so
	say "results in $OUT"
}

# traces NAME: the trace directories a run wrote (one per rank), one a line.
traces() {
	find "$OUT/$1.d" -name trace.json 2>/dev/null | sed 's|/trace.json$||' | sort
}

# same_ranks A B: every rank printed the same bytes in runs A and B; prints
# a detail for the row.
same_ranks() {
	_r=0
	while [ "$_r" -lt "$nranks" ]; do
		if ! cmp -s "$OUT/$1.rank$_r.out" "$OUT/$2.rank$_r.out"; then
			echo "rank $_r: $(diff "$OUT/$1.rank$_r.out" "$OUT/$2.rank$_r.out" 2>&1 |
				sed -n '2,3p' | tr '\n' ' ' | cut -c1-200)"
			return 1
		fi
		_r=$((_r + 1))
	done
	echo "$nranks rank(s), $(wc -l <"$OUT/$2.rank0.out") lines each"
}

# nvidia-smi memory.used over a run, every 200 ms, all GPUs ("index, MiB").
SMI_Q="--query-gpu=index,memory.used --format=csv,noheader,nounits"
smi_pid=''
smi_start() {
	# shellcheck disable=SC2086
	nvidia-smi $SMI_Q >"$OUT/$1.smi-idle" 2>/dev/null || true
	# shellcheck disable=SC2086
	nvidia-smi $SMI_Q -lms 200 >"$OUT/$1.smi" 2>/dev/null &
	smi_pid=$!
}
smi_stop() {
	kill "$smi_pid" 2>/dev/null || true
	wait "$smi_pid" 2>/dev/null || true
}

# sjob SERIES_PLAIN NAME VAR=VALUE...: job while sampling nvidia-smi; the
# run is listed for the measurements beside its series' plain run.
sjob() {
	printf '%s\t%s\n' "$2" "$1" >>"$OUT/runs.tsv"
	_sj=$2
	shift 2
	smi_start "$_sj"
	_src=0
	job "$_sj" "$@" || _src=$?
	smi_stop
	return "$_src"
}

# series PREFIX LABEL [ALT_VARS]: the standard checks on one way of running
# the job; rows are named "LABEL ...", runs PREFIX + the names below.
#   plain     without libremat (REF_VARS): exits 0 (77: one SKIP row with
#             the script's reason), a loss line per step and a checksum
#   plain2    the same bytes; if not, the framework is not deterministic
#             here and nothing after would mean anything (FAIL when strict,
#             else SKIP)
#   plain-alt with ALT_VARS (the allocator settings libremat makes): the
#             same bytes; if not, the row fails and libremat's runs (and
#             later series' plain runs) are compared with this allocator's
#   trace     REMAT_MODE=trace: identical, one complete trace per process,
#             taken on the GPU, remat-report's CUPTI counts match; then
#             after_trace's rows
#   plan      remat-plan at the budget (budget_bytes, else computed)
#   run-cold, run  REMAT_BUDGET, one plan cache: identical; the plan applied
#             with evictions in every process, the replay peak within budget
# strict=0: a trace where no plan saves memory skips the plan rows and runs
# once at its peak (identical output only); strict=1 fails there.
series() {
	_p=$1 _l=$2 _alt=${3:-}
	_pl=${_p}plain
	# shellcheck disable=SC2086 # REF_VARS is a word list on purpose
	sjob "$_pl" "$_pl" $REF_VARS || true
	_rc=$(cat "$OUT/$_pl.rc")
	if [ "$_rc" = 77 ]; then
		skiprow "$_l" "$(skip_reason "$_pl")"
		return
	elif [ "$_rc" != 0 ]; then
		fail "$_l plain: runs" "exit $_rc: $(last_err "$_pl")"
		return
	fi
	_o=$OUT/$_pl.rank0.out
	_n=$(grep -c '^iter [0-9]* loss 0x' "$_o" 2>/dev/null || true)
	if [ "${_n:-0}" -eq "$iters" ] && tail -n 1 "$_o" | grep -q '^checksum '; then
		pass "$_l plain: runs, prints losses + checksum" "$(tail -n 1 "$_o" | cut -c1-30)..."
	else
		fail "$_l plain: runs, prints losses + checksum" "${_n:-no} loss lines in $_o, want $iters"
		return
	fi
	# A second plain run: if the framework is not deterministic here, the
	# comparisons below would blame libremat for it.
	_d=''
	# shellcheck disable=SC2086
	if sjob "$_pl" "${_p}plain2" $REF_VARS && _d=$(same_out "$_pl" "${_p}plain2"); then
		pass "$_l plain twice: identical" "$_d"
	else
		_d="not deterministic without libremat, nothing to compare: $_d $(last_err "${_p}plain2")"
		if [ "$strict" = 1 ]; then
			fail "$_l plain twice: identical" "$_d"
		else
			skiprow "$_l plain twice: identical" "$_d"
		fi
		return
	fi
	_ref=$_pl
	if [ -n "$_alt" ]; then
		_d=''
		# shellcheck disable=SC2086
		if sjob "$_pl" "${_p}plain-alt" $_alt && _d=$(same_out "$_pl" "${_p}plain-alt"); then
			pass "$_l plain, libremat's allocator settings" "identical: $_d ($_alt)"
		else
			fail "$_l plain, libremat's allocator settings" "$_d $(last_err "${_p}plain-alt") ($_alt changes the results; libremat's runs are compared with this run)"
			[ "$(cat "$OUT/${_p}plain-alt.rc")" = 0 ] || return
			_ref=${_p}plain-alt
			REF_VARS=$_alt
		fi
	fi

	_tr=${_p}trace
	if sjob "$_pl" "$_tr" LD_PRELOAD="$LIB" REMAT_MODE=trace REMAT_TRACE_DIR="$OUT/$_tr.d" \
		REMAT_LOG=1; then
		if _d=$(same_out "$_ref" "$_tr"); then
			pass "$_l trace: output identical" "$_d"
		else
			fail "$_l trace: output identical" "$_d"
		fi
	else
		fail "$_l trace: runs" "exit $(cat "$OUT/$_tr.rc"): $(last_err "$_tr")"
		return
	fi
	_nt=$(traces "$_tr" | wc -l)
	if [ "$_nt" -ne "$nranks" ]; then
		fail "$_l trace: one trace per process" "$_nt trace(s) under $OUT/$_tr.d, want $nranks"
		return
	fi
	_i=0
	for _t in $(traces "$_tr"); do
		if _d=$(check_trace "$_t" "${trace_kind:-real}" 2>&1); then
			pass "$_l trace: valid trace ${_t#"$OUT"/}" "$_d"
		else
			fail "$_l trace: valid trace ${_t#"$OUT"/}" "$(echo "$_d" | tail -n 1)"
			return
		fi
		if _d=$(check_report "$_t" "$_tr$_i"); then
			pass "$_l trace: remat-report, CUPTI ${_t#"$OUT"/}" "$_d"
		else
			fail "$_l trace: remat-report, CUPTI ${_t#"$OUT"/}" "$_d"
		fi
		_i=$((_i + 1))
	done
	after_trace "$_p" "$_l"
	_t=$(traces "$_tr" | head -n 1)

	_evict=1
	if [ -n "$budget_bytes" ]; then
		_bud=$budget_bytes _note="given"
	elif _b=$(budget "$_t" "$fraction" "${_p}budget" 2>"$OUT/${_p}budget.err"); then
		read -r _bud _cst _peak _low <<EOT
$_b
EOT
		_note="const $(human "$_cst"), peak $(human "$_peak"), smallest $(human "$_low")"
		if [ "$_low" -ge "$_peak" ]; then
			if [ "$strict" = 1 ]; then
				fail "$_l plan: something to evict" "no plan saves memory ($_note)"
				return
			fi
			skiprow "$_l plan: something to evict" "no plan saves memory ($_note); run mode checked at the peak"
			_evict=0 _bud=$_peak
		fi
	else
		fail "$_l plan: budget" "$(tail -n 1 "$OUT/${_p}budget.err")"
		return
	fi
	echo "$_bud" >"$OUT/${_p}budget"
	if [ "$_evict" = 1 ]; then
		if "$BUILD/remat-plan" "$_t" --budget "$_bud" -o "$OUT/${_p}plan.json" \
			>"$OUT/${_p}plan.txt" 2>&1 &&
			"$BUILD/remat-report" --no-color --ascii --plan "$OUT/${_p}plan.json" "$_t" \
				>"$OUT/${_p}plan.report" 2>&1; then
			pass "$_l plan: at budget $(human "$_bud")" "$_note; $(grep 'planned peak' "$OUT/${_p}plan.txt" | sed 's/  */ /g')"
		else
			fail "$_l plan: at budget $(human "$_bud")" "$_note; $(tail -n 1 "$OUT/${_p}plan.txt")"
			return
		fi
	fi

	# Twice with one plan cache: remat-plan runs beside the job and stores
	# its plan even when the job ends first; the second run must apply it.
	for _r in run-cold run; do
		[ "$_evict" = 1 ] || [ "$_r" = run ] || continue
		if ! sjob "$_pl" "${_p}$_r" LD_PRELOAD="$LIB" REMAT_BUDGET="$_bud" REMAT_LOG=1 \
			REMAT_TRACE_DIR="$OUT/${_p}$_r.d" REMAT_CACHE_DIR="$OUT/${_p}cache" \
			REMAT_PLANNER="$BUILD/remat-plan"; then
			fail "$_l $_r: runs" "exit $(cat "$OUT/${_p}$_r.rc"): $(last_err "${_p}$_r")"
			return
		fi
	done
	if [ "$_evict" = 0 ]; then
		if _d=$(same_out "$_ref" "${_p}run"); then
			pass "$_l run at the peak: output identical" "$_d"
		else
			fail "$_l run at the peak: output identical" "$_d"
		fi
		return
	fi
	if _d=$(same_out "$_ref" "${_p}run-cold"); then
		pass "$_l run-cold: output identical" "$_d"
	else
		fail "$_l run-cold: output identical" "$_d"
	fi
	wait_plan "$OUT/${_p}cache" 150 ||
		fail "$_l run-cold: plan cached" "no plan in $OUT/${_p}cache after 150 s: $(grep libremat "$OUT/${_p}run-cold.err" | tail -n 2 | tr '\n' ' ')"
	check_run_mode "${_p}run" "$_ref" "$_bud" "$_l run" "$nranks"
}

# measurements PEAK_HEADER: memory and time of each run (rank 0) against
# its series' plain run, from the stats files (framework_peak_bytes,
# activation_peak_bytes, median_iter_s_second_half) and nvidia-smi samples.
measurements() {
	python3 - "$OUT" "$1" <<'PY'
import json, os, sys
out, peak_header = sys.argv[1], sys.argv[2]

def smi_peak(name):
    """Highest memory.used above the idle reading, over the GPUs (MiB)."""
    def read(path):
        vals = {}
        try:
            for line in open(path):
                parts = [p.strip() for p in line.split(",")]
                if len(parts) == 2 and parts[1].isdigit():
                    vals.setdefault(parts[0], []).append(int(parts[1]))
        except OSError:
            pass
        return vals
    idle, samples = read(os.path.join(out, name + ".smi-idle")), read(os.path.join(out, name + ".smi"))
    deltas = [max(v) - min(idle.get(g, [0])) for g, v in samples.items()]
    return max(deltas) if deltas else None

def stats(name):
    try:
        return json.load(open(os.path.join(out, name + ".rank0.json")))
    except (OSError, ValueError):
        return None

def mib(b):
    return "-" if b is None else "%.1f" % (b / 2**20)

try:
    runs = [line.rstrip("\n").split("\t") for line in open(os.path.join(out, "runs.tsv"))]
except OSError:
    runs = []
rows = []
for name, plain in runs:
    s, b = stats(name), stats(plain)
    if s is None:
        continue
    t = s["median_iter_s_second_half"]
    base = b["median_iter_s_second_half"] if b else None
    smi = smi_peak(name)
    rows.append((name, mib(s.get("framework_peak_bytes")), mib(s.get("activation_peak_bytes")),
                 "-" if smi is None else str(smi), "%.2f" % (1e3 * t),
                 "%.2fx" % (t / base) if base else "-"))
print("\nMEASUREMENTS (rank 0; step time: median of the second half of the steps)")
fmt = "%-26s %15s %16s %20s %10s %9s"
print(fmt % ("run", peak_header, "activations MiB", "nvidia-smi peak MiB", "step ms", "vs plain"))
for row in rows:
    print(fmt % row)
print("%s: what the framework's allocator handed out (the same with libremat);" % peak_header)
print("nvidia-smi peak: memory.used above the idle GPU, where libremat's savings show;")
print("vs plain: against the plain run of the same series.")
PY
}
