#!/bin/sh
# validate-trainers.sh — libremat on a real NVIDIA GPU with the C trainers
# (build/trainers/mlp and gpt, kernels from the sm_90 cubins, the real
# libcuda; no simulator).  For each trainer:
#
#   plain         the trainer alone: the reference output (losses, checksum)
#   pass-through  LD_PRELOAD=libremat.so, no REMAT_*: identical output,
#                 nothing more on stderr
#   trace         REMAT_MODE=trace: identical; the trace is valid, was taken
#                 on the GPU, remat-report reads it and its CUPTI
#                 cross-check says the counts match
#   plan          remat-plan at the budget (default: persistent memory + 50%
#                 of the per-iteration memory) writes a plan remat-report
#                 accepts
#   run-cold      REMAT_BUDGET, empty plan cache: identical output
#   run           REMAT_BUDGET again, the plan now cached: identical output,
#                 the plan applied with evictions, the physical peak of the
#                 replay iterations within the budget
#
# Usage: tools/gpu/validate-trainers.sh [--skip-build] [--out DIR]
#            [--fraction F] [--iters N] [--only mlp|gpt] [--simulate]
#   MLP_ARGS / GPT_ARGS replace the model flags of each trainer.
#   --simulate runs the same checks on the simulated device (tools/simrun),
#   to test this script on a machine without a GPU.
#
# Exit: 0 all passed, 1 a check failed, 2 usage or build error, 77 no GPU.
set -eu
PROG=validate-trainers
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

build_it=1 out='' fraction=0.5 iters=12 only='' simulate=0
while [ $# -gt 0 ]; do
	case $1 in
	--skip-build) build_it=0 ;;
	--out) out=${2:?--out needs a directory} && shift ;;
	--fraction) fraction=${2:?--fraction needs a number} && shift ;;
	--iters) iters=${2:?--iters needs a number} && shift ;;
	--only) only=${2:?--only needs mlp or gpt} && shift ;;
	--simulate) simulate=1 ;;
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
[ "$iters" -ge 8 ] || die "--iters $iters: at least 8 (warm-up, profile, then replay iterations)"
case $only in
'' | mlp | gpt) ;;
*) die "--only '$only': expected mlp or gpt" ;;
esac

clean_env
cd "$ROOT"
bdir=${BUILD:-build} # relative, for make
BUILD=$ROOT/$bdir
OUT=${out:-$BUILD/gpu-validation/trainers}
LIB=$BUILD/libremat.so

if [ "$simulate" = 1 ]; then
	# The simulated device: its .so kernel modules, 64 KiB chunks so that the
	# trainers' default activations are worth evicting.
	WRAP=$ROOT/tools/simrun
	KARGS="--kernel-format so"
	export SIMCUDA_GRANULARITY=64K
	: "${MLP_ARGS=}" "${GPT_ARGS=}"
	trace_kind=sim
else
	need_gpu
	[ -x "$CUDA_HOME/bin/nvcc" ] ||
		skip "no CUDA toolkit: $CUDA_HOME/bin/nvcc is missing (set CUDA_HOME); the trainers' kernels need nvcc"
	cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
	case $cap in
	9.0) ;;
	*) skip "the GPU's compute capability is '$cap'; the trainers' kernels are built for sm_90 (9.0) only" ;;
	esac
	WRAP=
	KARGS="--kernels $BUILD/kernels --kernel-format cubin"
	# A GPU allocates in 2 MiB granules: activations of several MiB, so a plan
	# has something to evict (the defaults are sized for the simulator).
	: "${MLP_ARGS=--batch 4096 --hidden 1024 --layers 4 --in 256 --lr 0.001}"
	: "${GPT_ARGS=--batch 32 --seq 128 --hidden 256 --heads 4 --layers 4 --vocab 512}"
	trace_kind=real
fi

if [ "$build_it" = 1 ]; then
	mkdir -p "$BUILD"
	say "building libremat, remat-plan, remat-report and the trainers (make)"
	make -j"$(nproc 2>/dev/null || echo 2)" BUILD="$bdir" "$bdir/libremat.so" \
		"$bdir/remat-plan" "$bdir/remat-report" trainers >"$BUILD/gpu-validation-make.log" 2>&1 ||
		die "make failed: see $BUILD/gpu-validation-make.log"
fi
for f in "$LIB" "$BUILD/remat-plan" "$BUILD/remat-report" "$BUILD/trainers/mlp" \
	"$BUILD/trainers/gpt"; do
	[ -e "$f" ] || die "$f is missing (run without --skip-build)"
done
if [ "$simulate" = 0 ]; then
	# Every kernel module the build made for the simulator has its cubin.
	for so in "$BUILD"/kernels/*.so; do
		k=$(basename "$so" .so)
		[ -e "$BUILD/kernels/sm_90/$k.cubin" ] ||
			die "$BUILD/kernels/sm_90/$k.cubin is missing (did nvcc build the cubins?)"
	done
fi

rm -rf "$OUT"
mkdir -p "$OUT"
: >"$OUT/results.tsv"
say "results in $OUT"
[ "$simulate" = 1 ] && say "SIMULATED DEVICE (--simulate): this checks the script, not a GPU"
if [ "$simulate" = 0 ]; then
	nvidia-smi -L >"$OUT/gpu.txt" 2>&1
	use_real_cuda "$OUT/cuda-libs" libcudart.so.13 libcupti.so.13 libcupti.so
fi

# validate NAME MODEL_ARGS: every check on one trainer.
validate() {
	t=$1 margs=$2
	cmd="$BUILD/trainers/$t $KARGS $margs --iters $iters"
	echo "$cmd" >"$OUT/$t.cmd"
	say "$t: $cmd"

	# shellcheck disable=SC2086 # $WRAP and $cmd are word lists on purpose
	if run "$t-plain" $WRAP $cmd; then
		n=$(grep -c '^iter [0-9]* loss ' "$OUT/$t-plain.out" || true)
		if [ "$n" -eq "$iters" ] && tail -n 1 "$OUT/$t-plain.out" | grep -q '^checksum '; then
			pass "$t plain: runs, prints losses + checksum" "$(tail -n 1 "$OUT/$t-plain.out")"
		else
			fail "$t plain: runs, prints losses + checksum" "$n loss lines, want $iters"
			return
		fi
	else
		fail "$t plain: runs, prints losses + checksum" "exit $(cat "$OUT/$t-plain.rc"): $(last_err "$t-plain")"
		return
	fi

	# shellcheck disable=SC2086
	# Silent: libremat adds nothing to what the trainer says on stderr.
	if run "$t-pass" LD_PRELOAD="$LIB" $WRAP $cmd && same "$t-plain" "$t-pass" &&
		cmp -s "$OUT/$t-plain.err" "$OUT/$t-pass.err"; then
		pass "$t pass-through: identical and silent" ""
	else
		fail "$t pass-through: identical and silent" "exit $(cat "$OUT/$t-pass.rc"): $(differ_line "$t-plain" "$t-pass") $(last_err "$t-pass")"
	fi

	tdir=$OUT/$t-trace.d
	# shellcheck disable=SC2086
	if run "$t-trace" LD_PRELOAD="$LIB" REMAT_MODE=trace REMAT_TRACE_DIR="$tdir" REMAT_LOG=1 \
		$WRAP $cmd; then
		if same "$t-plain" "$t-trace"; then
			pass "$t trace: output identical" ""
		else
			fail "$t trace: output identical" "$(differ_line "$t-plain" "$t-trace")"
		fi
	else
		fail "$t trace: runs" "exit $(cat "$OUT/$t-trace.rc"): $(last_err "$t-trace")"
		return
	fi
	if d=$(check_trace "$tdir" "$trace_kind" 2>&1); then
		pass "$t trace: valid trace" "$d"
	else
		fail "$t trace: valid trace" "$(echo "$d" | tail -n 1)"
		return
	fi
	if d=$(check_report "$tdir" "$t-trace"); then
		pass "$t trace: remat-report, CUPTI cross-check" "$d"
	else
		fail "$t trace: remat-report, CUPTI cross-check" "$d"
	fi

	if b=$(budget "$tdir" "$fraction" "$t" 2>"$OUT/$t.budget.err"); then
		read -r bud cst peak low <<EOF
$b
EOF
	else
		fail "$t plan: budget" "$(tail -n 1 "$OUT/$t.budget.err")"
		return
	fi
	echo "$bud" >"$OUT/$t.budget"
	note="const $(human "$cst"), peak $(human "$peak"), smallest $(human "$low")"
	if [ "$low" -ge "$peak" ]; then
		fail "$t plan: something to evict" "no plan saves memory ($note); use bigger activations"
		return
	fi
	if "$BUILD/remat-plan" "$tdir" --budget "$bud" -o "$OUT/$t.plan.json" >"$OUT/$t.plan.txt" \
		2>&1 && "$BUILD/remat-report" --no-color --ascii --plan "$OUT/$t.plan.json" "$tdir" \
		>"$OUT/$t.plan.report" 2>&1; then
		pass "$t plan: at budget $(human "$bud")" "$note; $(grep 'planned peak' "$OUT/$t.plan.txt" | sed 's/  */ /g')"
	else
		fail "$t plan: at budget $(human "$bud")" "$note; $(tail -n 1 "$OUT/$t.plan.txt") $(tail -n 1 "$OUT/$t.plan.report")"
		return
	fi

	# Run mode twice with one plan cache: remat-plan runs beside the job and
	# may finish after a fast GPU run has ended (it still stores its plan), so
	# the second run is the one that must apply it.
	cache=$OUT/$t-cache
	for r in run-cold run; do
		# shellcheck disable=SC2086
		if ! run "$t-$r" LD_PRELOAD="$LIB" REMAT_BUDGET="$bud" REMAT_LOG=1 \
			REMAT_TRACE_DIR="$OUT/$t-$r.d" REMAT_CACHE_DIR="$cache" \
			REMAT_PLANNER="$BUILD/remat-plan" $WRAP $cmd; then
			fail "$t $r: runs" "exit $(cat "$OUT/$t-$r.rc"): $(last_err "$t-$r")"
			return
		fi
		if [ "$r" = run-cold ]; then
			if same "$t-plain" "$t-run-cold"; then
				pass "$t run-cold: output identical" "$(run_facts "$t-run-cold" | cut -d' ' -f1 | sed 's/1/plan applied/; s/0/plan not yet applied/')"
			else
				fail "$t run-cold: output identical" "$(differ_line "$t-plain" "$t-run-cold")"
			fi
			wait_plan "$cache" 150 ||
				fail "$t run-cold: plan cached" "no plan in $cache after 150 s: $(grep libremat "$OUT/$t-run-cold.err" | tail -n 2 | tr '\n' ' ')"
		fi
	done
	check_run_mode "$t-run" "$t-plain" "$bud" "$t run"
}

[ "$only" = gpt ] || validate mlp "$MLP_ARGS"
[ "$only" = mlp ] || validate gpt "$GPT_ARGS"
table
