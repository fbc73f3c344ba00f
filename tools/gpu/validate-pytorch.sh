#!/bin/sh
# validate-pytorch.sh — libremat under an unmodified PyTorch job on a real
# NVIDIA GPU (tools/gpu/train_torch.py).  Runs it:
#
#   plain     without libremat, twice: the reference losses and checksum
#             (and once more with PyTorch's cudaMallocAsync backend, which
#             PyTorch uses under libremat)
#   trace     LD_PRELOAD=libremat.so REMAT_MODE=trace: identical output, a
#             valid trace that remat-report reads, CUPTI counts that match
#   plan      remat-plan at the budget ($REMAT_BUDGET or --budget, else
#             persistent memory + 50% of the per-iteration memory)
#   run-cold  REMAT_BUDGET, empty plan cache: identical output
#   run       REMAT_BUDGET, plan cached: identical output, plan applied with
#             evictions, replay iterations' physical peak within the budget
#
# and prints, beside the PASS/FAIL table, each run's memory (PyTorch's
# max_memory_allocated, the activation peak of one step, the peak of
# nvidia-smi's memory.used above the idle GPU) and its median step time
# against the plain run's.
#
# Usage: tools/gpu/validate-pytorch.sh [--skip-build] [--out DIR]
#            [--budget B] [--fraction F] [--iters N] [--ddp N] [--python PY]
#   TRAIN_ARGS: extra flags for train_torch.py (model size: --batch, --seq,
#   --width, --blocks, --dropout ...; see train_torch.py --help).
#   --ddp N: torchrun --nproc_per_node=N, DistributedDataParallel over N
#   GPUs, each rank with its own trace directory.
#
# Exit: 0 all passed, 1 a check failed, 2 usage or build error, 77 no GPU,
# no PyTorch, or fewer GPUs than --ddp asks for.
set -eu
PROG=validate-pytorch
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

user_budget=${REMAT_BUDGET:-}
build_it=1 out='' fraction=0.5 iters=30 ddp=0 py=python3
while [ $# -gt 0 ]; do
	case $1 in
	--skip-build) build_it=0 ;;
	--out) out=${2:?--out needs a directory} && shift ;;
	--budget) user_budget=${2:?--budget needs a size} && shift ;;
	--fraction) fraction=${2:?--fraction needs a number} && shift ;;
	--iters) iters=${2:?--iters needs a number} && shift ;;
	--ddp) ddp=${2:?--ddp needs a process count} && shift ;;
	--python) py=${2:?--python needs an interpreter} && shift ;;
	-h | --help)
		sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
case $fraction in
0.[0-9]* | 1 | 1.0) ;;
*) die "--fraction '$fraction': expected a number in (0, 1], like 0.5" ;;
esac
case $iters in
'' | *[!0-9]*) die "--iters '$iters': expected a whole number" ;;
esac
[ "$iters" -ge 10 ] || die "--iters $iters: at least 10 (warm-up, profile, then replay iterations)"
case $ddp in
'' | *[!0-9]*) die "--ddp '$ddp': expected a process count" ;;
esac
# The budget check below compares bytes: no percentage here.
budget_bytes=''
if [ -n "$user_budget" ]; then
	budget_bytes=$(python3 -c '
import re, sys
m = re.fullmatch(r"(\d+)([KMGT]?)(i?B)?", sys.argv[1], re.I)
if not m or int(m.group(1)) == 0:
    sys.exit(1)
print(int(m.group(1)) << (10 * " KMGT".index((m.group(2) or " ").upper())))' "$user_budget") ||
		die "budget '$user_budget': expected bytes with an optional K/M/G/T suffix, like 12G"
fi

clean_env
cd "$ROOT"
need_gpu
command -v "$py" >/dev/null 2>&1 || skip "no PyTorch: no '$py' interpreter (see --python)"
err=$("$py" -c 'import torch' 2>&1) ||
	skip "no PyTorch: '$py -c \"import torch\"' failed: $(printf '%s' "$err" | tail -n 1)"
"$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	skip "PyTorch cannot use the GPU (torch.cuda.is_available() is False: a CPU-only build?)"
nranks=1
if [ "$ddp" -gt 0 ]; then
	nranks=$ddp
	[ "$(gpu_count)" -ge "$ddp" ] || skip "--ddp $ddp needs $ddp GPUs, nvidia-smi lists $(gpu_count)"
fi

bdir=${BUILD:-build} # relative, for make
BUILD=$ROOT/$bdir
OUT=${out:-$BUILD/gpu-validation/pytorch}
LIB=$BUILD/libremat.so
SCRIPT=$ROOT/tools/gpu/train_torch.py
if [ "$build_it" = 1 ]; then
	mkdir -p "$BUILD"
	say "building libremat, remat-plan and remat-report (make)"
	make -j"$(nproc 2>/dev/null || echo 2)" BUILD="$bdir" "$bdir/libremat.so" \
		"$bdir/remat-plan" "$bdir/remat-report" >"$BUILD/gpu-validation-make.log" 2>&1 ||
		die "make failed: see $BUILD/gpu-validation-make.log"
fi
for f in "$LIB" "$BUILD/remat-plan" "$BUILD/remat-report"; do
	[ -e "$f" ] || die "$f is missing (run without --skip-build)"
done
# Each rank its own trace directory (and the preload): the user-facing wrapper.
RANKWRAP=$ROOT/tools/remat-torchrun-wrapper.sh

rm -rf "$OUT"
mkdir -p "$OUT"
: >"$OUT/results.tsv"
nvidia-smi -L >"$OUT/gpu.txt" 2>&1
use_real_cuda "$OUT/cuda-libs" libcupti.so.13 libcupti.so
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' \
	>>"$OUT/gpu.txt" 2>&1 || true
say "results in $OUT"

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

# job NAME VAR=VALUE...: train_torch.py (under torchrun with --ddp) with
# those variables; deterministic output in $OUT/NAME.rankR.out, stats in
# $OUT/NAME.rankR.json, stderr in $OUT/NAME.err.
job() {
	_j=$1
	shift
	smi_start "$_j"
	_rc=0
	# shellcheck disable=SC2086 # TRAIN_ARGS is a word list on purpose
	if [ "$ddp" -gt 0 ]; then
		run "$_j" "$@" "$py" -m torch.distributed.run --standalone --nproc_per_node "$ddp" \
			--no_python "$RANKWRAP" "$py" "$SCRIPT" ${TRAIN_ARGS:-} --iters "$iters" --ddp \
			--output "$OUT/$_j.rank{rank}.out" --stats "$OUT/$_j.rank{rank}.json" || _rc=$?
	else
		run "$_j" "$@" "$py" "$SCRIPT" ${TRAIN_ARGS:-} --iters "$iters" \
			--output "$OUT/$_j.rank0.out" --stats "$OUT/$_j.rank0.json" || _rc=$?
	fi
	smi_stop
	return "$_rc"
}

# same_out A B (replaces lib.sh's): every rank printed the same bytes.
same_out() {
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

# traces NAME: the trace directories a run wrote (one per rank), one a line.
traces() {
	find "$OUT/$1.d" -name trace.json 2>/dev/null | sed 's|/trace.json$||' | sort
}

verdicts() {
	if job plain; then
		n=$(grep -c '^iter [0-9]* loss 0x' "$OUT/plain.rank0.out" || true)
		if [ "$n" -eq "$iters" ] && tail -n 1 "$OUT/plain.rank0.out" | grep -q '^checksum '; then
			pass "plain: runs, prints losses + checksum" "$(tail -n 1 "$OUT/plain.rank0.out" | cut -c1-30)..."
		else
			fail "plain: runs, prints losses + checksum" "$n loss lines, want $iters"
			return
		fi
	else
		fail "plain: runs" "exit $(cat "$OUT/plain.rc"): $(last_err plain)"
		return
	fi
	# A second plain run: if PyTorch is not deterministic here, the
	# comparisons below would blame libremat for it.
	if job plain2 && d=$(same_out plain plain2); then
		pass "plain twice: identical (PyTorch deterministic)" "$d"
	else
		fail "plain twice: identical (PyTorch deterministic)" "$(same_out plain plain2) $(last_err plain2)"
		return
	fi

	# Under libremat PyTorch uses its cudaMallocAsync backend (libremat sets
	# PYTORCH_CUDA_ALLOC_CONF).  Should that alone change the results, the
	# libremat runs are compared with this run instead, so that a difference
	# is libremat's.
	ref=plain d=""
	if job plain-async PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync &&
		d=$(same_out plain plain-async); then
		pass "plain, cudaMallocAsync backend: identical" "$d"
	else
		fail "plain, cudaMallocAsync backend: identical" "$d $(last_err plain-async) (PyTorch's results depend on its allocator; libremat's runs are compared with plain-async)"
		[ "$(cat "$OUT/plain-async.rc")" = 0 ] || return
		ref=plain-async
	fi

	if job trace LD_PRELOAD="$LIB" REMAT_MODE=trace REMAT_TRACE_DIR="$OUT/trace.d" REMAT_LOG=1; then
		if d=$(same_out "$ref" trace); then
			pass "trace: output identical" "$d"
		else
			fail "trace: output identical" "$d"
		fi
	else
		fail "trace: runs" "exit $(cat "$OUT/trace.rc"): $(last_err trace)"
		return
	fi
	nt=$(traces trace | wc -l)
	if [ "$nt" -ne "$nranks" ]; then
		fail "trace: one trace per process" "$nt trace(s) under $OUT/trace.d, want $nranks"
		return
	fi
	i=0
	for tdir in $(traces trace); do
		if d=$(check_trace "$tdir" real 2>&1); then
			pass "trace: valid trace ${tdir#"$OUT"/}" "$d"
		else
			fail "trace: valid trace ${tdir#"$OUT"/}" "$(echo "$d" | tail -n 1)"
			return
		fi
		if d=$(check_report "$tdir" "trace$i"); then
			pass "trace: remat-report, CUPTI ${tdir#"$OUT"/}" "$d"
		else
			fail "trace: remat-report, CUPTI ${tdir#"$OUT"/}" "$d"
		fi
		i=$((i + 1))
	done
	tdir=$(traces trace | head -n 1)

	if [ -n "$budget_bytes" ]; then
		bud=$budget_bytes
		note="given"
	elif b=$(budget "$tdir" "$fraction" torch 2>"$OUT/budget.err"); then
		read -r bud cst peak low <<EOF
$b
EOF
		note="const $(human "$cst"), peak $(human "$peak"), smallest $(human "$low")"
		if [ "$low" -ge "$peak" ]; then
			fail "plan: something to evict" "no plan saves memory ($note)"
			return
		fi
	else
		fail "plan: budget" "$(tail -n 1 "$OUT/budget.err")"
		return
	fi
	echo "$bud" >"$OUT/budget"
	if "$BUILD/remat-plan" "$tdir" --budget "$bud" -o "$OUT/plan.json" >"$OUT/plan.txt" 2>&1 &&
		"$BUILD/remat-report" --no-color --ascii --plan "$OUT/plan.json" "$tdir" \
			>"$OUT/plan.report" 2>&1; then
		pass "plan: at budget $(human "$bud")" "$note; $(grep 'planned peak' "$OUT/plan.txt" | sed 's/  */ /g')"
	else
		fail "plan: at budget $(human "$bud")" "$note; $(tail -n 1 "$OUT/plan.txt")"
		return
	fi

	# Twice with one plan cache: remat-plan runs beside the job and stores
	# its plan even when the job ends first; the second run must apply it.
	for r in run-cold run; do
		if ! job "$r" LD_PRELOAD="$LIB" REMAT_BUDGET="$bud" REMAT_LOG=1 \
			REMAT_TRACE_DIR="$OUT/$r.d" REMAT_CACHE_DIR="$OUT/cache" \
			REMAT_PLANNER="$BUILD/remat-plan"; then
			fail "$r: runs" "exit $(cat "$OUT/$r.rc"): $(last_err "$r")"
			return
		fi
	done
	if d=$(same_out "$ref" run-cold); then
		pass "run-cold: output identical" "$d"
	else
		fail "run-cold: output identical" "$d"
	fi
	wait_plan "$OUT/cache" 150 ||
		fail "run-cold: plan cached" "no plan in $OUT/cache after 150 s: $(grep libremat "$OUT/run-cold.err" | tail -n 2 | tr '\n' ' ')"
	check_run_mode run "$ref" "$bud" run "$nranks"
}

# measurements: memory and time of each run against the plain one.
measurements() {
	python3 - "$OUT" plain plain2 plain-async trace run-cold run <<'PY'
import json, os, sys
out, runs = sys.argv[1], sys.argv[2:]

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

mib = lambda b: "-" if b is None else "%.1f" % (b / 2**20)
rows, base = [], None
for r in runs:
    try:
        s = json.load(open(os.path.join(out, r + ".rank0.json")))
    except (OSError, ValueError):
        continue
    t = s["median_iter_s_second_half"]
    if r == "plain":
        base = t
    smi = smi_peak(r)
    rows.append((r, mib(s["max_memory_allocated"]), mib(s["activation_peak_bytes"]),
                 "-" if smi is None else str(smi), "%.2f" % (1e3 * t),
                 "%.2fx" % (t / base) if base else "-"))
print("\nMEASUREMENTS (rank 0; step time: median of the second half of the steps)")
fmt = "%-12s %15s %16s %20s %10s %9s"
print(fmt % ("run", "torch max MiB", "activations MiB", "nvidia-smi peak MiB", "step ms", "vs plain"))
for row in rows:
    print(fmt % row)
print("torch max = torch.cuda.max_memory_allocated: the tensors PyTorch asked for, the same with")
print("libremat; nvidia-smi peak = memory.used above the idle GPU, where libremat's savings show.")
PY
}

verdicts
measurements | tee "$OUT/measurements.txt"
table
