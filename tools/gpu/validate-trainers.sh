#!/bin/sh
# validate-trainers.sh — libremat on a real NVIDIA GPU with the C trainers
# (build/trainers/mlp, gpt and arena, kernels from the sm_90 cubins, the
# real libcuda and NCCL; no simulator).  The full checks, for mlp, gpt and
# each gpt variant below:
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
# The groups (--only picks some):
#   mlp, gpt      the full checks with MLP_ARGS / GPT_ARGS
#   graphs        gpt --graphs (blocks captured as CUDA graphs and
#                 replayed): the full checks at the smallest reachable
#                 budget (so that the plan evicts around the graphs), the
#                 same bytes as gpt, both graph launches in the trace
#   launch-attrs  gpt --launch-attrs (a cluster launch, a cooperative one):
#                 the full checks at the smallest reachable budget, the
#                 attributes in the trace, the plan rebuilding both kernels
#   alloc         mlp and gpt with --alloc caching and --alloc vmm (their
#                 activations in the program's own pool): the full checks
#   ranks         gpt and mlp --ranks 2 (NCCL, one process and GPU per rank,
#                 through tools/remat-torchrun-wrapper.sh, bounded by
#                 RANKS_TIMEOUT seconds): every rank identical to its plain
#                 run traced and in run mode, the plan applied in each,
#                 collectives marked in the traces (gpt: the ranks'
#                 checksums agree); one SKIP row with fewer than 2 GPUs
#   arena         build/trainers/arena (one cudaMalloc per arena, launches
#                 with <<<>>>; built when nvcc exists): plain, trace, run
#                 at REMAT_BUDGET=50% (identical; what it saves is not
#                 asserted)
# A trainer that lacks a group's flag (a build from before it existed) is
# one SKIP row.
#
# Usage: tools/gpu/validate-trainers.sh [--skip-build] [--out DIR]
#            [--fraction F] [--iters N] [--only LIST] [--simulate]
#   LIST: comma-separated groups (default: all).
#   MLP_ARGS / GPT_ARGS / ARENA_ARGS replace the model flags of each trainer.
#   --simulate runs the same checks on the simulated device (sim/bin/simrun),
#   to test this script on a machine without a GPU.
#
# Exit: 0 no check failed, 1 a check failed, 2 usage or build error, 77 no
# GPU (or not an sm_90 one), no CUDA toolkit.
set -eu
PROG=validate-trainers
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

GROUPS_ALL="mlp gpt graphs launch-attrs alloc ranks arena"
build_it=1 out='' fraction=0.5 iters=12 only='' simulate=0
while [ $# -gt 0 ]; do
	case $1 in
	--skip-build) build_it=0 ;;
	--out) out=${2:?--out needs a directory} && shift ;;
	--fraction) fraction=${2:?--fraction needs a number} && shift ;;
	--iters) iters=${2:?--iters needs a number} && shift ;;
	--only) only=${2:?--only needs a list of groups} && shift ;;
	--simulate) simulate=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
want_fraction "$fraction"
want_iters "$iters" 8
only=$(echo "${only:-$GROUPS_ALL}" | tr ',' ' ')
for g in $only; do
	case " $GROUPS_ALL " in
	*" $g "*) ;;
	*) die "--only: unknown group '$g' (groups: $GROUPS_ALL)" ;;
	esac
done
RANKS_TIMEOUT=${RANKS_TIMEOUT:-300}
case $RANKS_TIMEOUT in
'' | *[!0-9]*) die "RANKS_TIMEOUT '$RANKS_TIMEOUT': expected seconds" ;;
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
	WRAP=$ROOT/sim/bin/simrun
	KARGS="--kernel-format so"
	export SIMCUDA_GRANULARITY=64K
	: "${MLP_ARGS=}" "${GPT_ARGS=}" "${ARENA_ARGS=}"
	trace_kind=sim
	ngpu=2 # the simulated NCCL runs any number of ranks
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
	: "${ARENA_ARGS=--batch 16 --seq 128 --width 256 --heads 4 --layers 4}"
	trace_kind=real
	ngpu=$(gpu_count)
fi

remat_tools trainers
for f in "$BUILD/trainers/mlp" "$BUILD/trainers/gpt"; do
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
	use_real_cuda "$OUT/cuda-libs" libcudart.so.13 libcupti.so.13 libcupti.so libnccl.so.2
fi

# wanted GROUP: the group is in --only's list.
wanted() {
	case " $only " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# has_flag TRAINER FLAG: the trainer's --help lists FLAG (trainers built
# before a flag existed lack it: their group is skipped, not failed).
has_flag() {
	# shellcheck disable=SC2086
	$WRAP "$BUILD/trainers/$1" --help 2>/dev/null | grep -q -- "^ *$2 "
}

# tcmd TRAINER ARGS...: the command line of a trainer (arena takes no
# kernel flags: nvcc compiled its kernels into it).
tcmd() {
	_tc=$1
	shift
	case $_tc in
	arena) echo "$BUILD/trainers/arena $* --iters $iters" ;;
	*) echo "$BUILD/trainers/$_tc $KARGS $* --iters $iters" ;;
	esac
}

# plain_row S LABEL CMD: runs S-plain; one row; fails when it did not print
# a loss line per step and a checksum.
plain_row() {
	# shellcheck disable=SC2086 # $WRAP and $3 are word lists on purpose
	if run "$1-plain" $WRAP $3; then
		_n=$(grep -c '^iter [0-9]* loss ' "$OUT/$1-plain.out" || true)
		if [ "$_n" -eq "$iters" ] && tail -n 1 "$OUT/$1-plain.out" | grep -q '^checksum '; then
			pass "$2 plain: runs, prints losses + checksum" "$(tail -n 1 "$OUT/$1-plain.out")"
			return 0
		fi
		fail "$2 plain: runs, prints losses + checksum" "$_n loss lines, want $iters"
	else
		fail "$2 plain: runs, prints losses + checksum" "exit $(cat "$OUT/$1-plain.rc"): $(last_err "$1-plain")"
	fi
	return 1
}

# validate S LABEL CMD [FRACTION]: every check on one command; files are
# named S-*, rows "LABEL ...".
validate() {
	s=$1 lb=$2 cmd=$3 vfrac=${4:-$fraction}
	echo "$cmd" >"$OUT/$s.cmd"
	say "$lb: $cmd"
	plain_row "$s" "$lb" "$cmd" || return 0

	# shellcheck disable=SC2086
	# Silent: libremat adds nothing to what the trainer says on stderr.
	if run "$s-pass" LD_PRELOAD="$LIB" $WRAP $cmd && same "$s-plain" "$s-pass" &&
		cmp -s "$OUT/$s-plain.err" "$OUT/$s-pass.err"; then
		pass "$lb pass-through: identical and silent" ""
	else
		fail "$lb pass-through: identical and silent" "exit $(cat "$OUT/$s-pass.rc"): $(differ_line "$s-plain" "$s-pass") $(last_err "$s-pass")"
	fi

	tdir=$OUT/$s-trace.d
	# shellcheck disable=SC2086
	if run "$s-trace" LD_PRELOAD="$LIB" REMAT_MODE=trace REMAT_TRACE_DIR="$tdir" REMAT_LOG=1 \
		$WRAP $cmd; then
		if same "$s-plain" "$s-trace"; then
			pass "$lb trace: output identical" ""
		else
			fail "$lb trace: output identical" "$(differ_line "$s-plain" "$s-trace")"
		fi
	else
		fail "$lb trace: runs" "exit $(cat "$OUT/$s-trace.rc"): $(last_err "$s-trace")"
		return 0
	fi
	if d=$(check_trace "$tdir" "$trace_kind" 2>&1); then
		pass "$lb trace: valid trace" "$d"
	else
		fail "$lb trace: valid trace" "$(echo "$d" | tail -n 1)"
		return 0
	fi
	if d=$(check_report "$tdir" "$s-trace"); then
		pass "$lb trace: remat-report, CUPTI cross-check" "$d"
	else
		fail "$lb trace: remat-report, CUPTI cross-check" "$d"
	fi
	after_trace "$s" "$lb" "$tdir"

	if b=$(budget "$tdir" "$vfrac" "$s" 2>"$OUT/$s.budget.err"); then
		read -r bud cst peak low <<EOF
$b
EOF
	else
		fail "$lb plan: budget" "$(tail -n 1 "$OUT/$s.budget.err")"
		return 0
	fi
	echo "$bud" >"$OUT/$s.budget"
	note="const $(human "$cst"), peak $(human "$peak"), smallest $(human "$low")"
	if [ "$low" -ge "$peak" ]; then
		if [ "$cst" -ge "$peak" ]; then
			# Everything lives in the program's own pool: what a plan
			# can free there the profile proves only with its proofs on.
			fail "$lb plan: something to evict" "no plan frees any of the program's own pool ($note; REMAT_WRITE_PROOF=${REMAT_WRITE_PROOF:-data})"
		else
			fail "$lb plan: something to evict" "no plan saves memory ($note); use bigger activations"
		fi
		return 0
	fi
	# shellcheck disable=SC2086 # PLAN_ARGS: a word list on purpose
	if "$BUILD/remat-plan" "$tdir" --budget "$bud" ${PLAN_ARGS:-} -o "$OUT/$s.plan.json" \
		>"$OUT/$s.plan.txt" 2>&1 && "$BUILD/remat-report" --no-color --ascii --plan "$OUT/$s.plan.json" "$tdir" \
		>"$OUT/$s.plan.report" 2>&1; then
		pass "$lb plan: at budget $(human "$bud")" "$note; $(grep 'planned peak' "$OUT/$s.plan.txt" | sed 's/  */ /g')"
	else
		fail "$lb plan: at budget $(human "$bud")" "$note; $(tail -n 1 "$OUT/$s.plan.txt") $(tail -n 1 "$OUT/$s.plan.report")"
		return 0
	fi
	after_plan "$s" "$lb" "$tdir"

	# Run mode twice with one plan cache: remat-plan runs beside the job and
	# may finish after a fast GPU run has ended (it still stores its plan), so
	# the second run is the one that must apply it.
	cache=$OUT/$s-cache
	for r in run-cold run; do
		# shellcheck disable=SC2086
		if ! run "$s-$r" LD_PRELOAD="$LIB" REMAT_BUDGET="$bud" REMAT_LOG=1 \
			REMAT_TRACE_DIR="$OUT/$s-$r.d" REMAT_CACHE_DIR="$cache" \
			REMAT_PLANNER="$BUILD/remat-plan" $WRAP $cmd; then
			fail "$lb $r: runs" "exit $(cat "$OUT/$s-$r.rc"): $(last_err "$s-$r")"
			return 0
		fi
		if [ "$r" = run-cold ]; then
			if same "$s-plain" "$s-run-cold"; then
				pass "$lb run-cold: output identical" "$(run_facts "$s-run-cold" | cut -d' ' -f1 | sed 's/1/plan applied/; s/0/plan not yet applied/')"
			else
				fail "$lb run-cold: output identical" "$(differ_line "$s-plain" "$s-run-cold")"
			fi
			wait_plan "$cache" 150 ||
				fail "$lb run-cold: plan cached" "no plan in $cache after 150 s: $(grep libremat "$OUT/$s-run-cold.err" | tail -n 2 | tr '\n' ' ')"
		fi
	done
	check_run_mode "$s-run" "$s-plain" "$bud" "$lb run"
}

# py_row LABEL TRACE_DIR [PLAN] <<PY: a python check of a trace (and plan)
# as one row: PASS with what it prints, FAIL with its last line.
py_row() {
	_pl=$1
	shift
	if _pd=$(python3 - "$@" 2>&1); then
		pass "$_pl" "$(echo "$_pd" | tail -n 1)"
	else
		fail "$_pl" "$(echo "$_pd" | tail -n 1)"
	fi
}

# after_trace S LABEL TRACE_DIR / after_plan S LABEL TRACE_DIR: the rows
# of a variant on its trace and on its plan.
after_trace() {
	case $1 in
	gpt-graphs)
		if [ -e "$OUT/gpt-plain.out" ]; then
			if same gpt-plain gpt-graphs-plain; then
				pass "$2: the same bytes as gpt" ""
			else
				fail "$2: the same bytes as gpt" "$(differ_line gpt-plain gpt-graphs-plain)"
			fi
		fi
		py_row "$2 trace: graph launches traced" "$3/trace.json" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
g = [o for o in ops if o.get("kind") == "graph"]
assert len(g) == 2, "%d graph launches in the iteration, want 2 (forward, backward)" % len(g)
assert not any(o["replayable"] for o in g), "a graph launch is marked replayable"
print("%d graph launches, %d and %d buffers referenced" % (len(g), len(g[0]["reads"]), len(g[1]["writes"])))
PY
		;;
	gpt-launch-attrs)
		py_row "$2 trace: launch attributes recorded" "$3/trace.json" <<'PY'
import json, sys
attrs = {o["name"]: o.get("attrs") for o in json.load(open(sys.argv[1]))["ops"] if o["kind"] == "kernel"}
names = {a.get("name") for k in ("bias_gelu_fwd_cluster", "layernorm_fwd_coop") for a in attrs.get(k) or []}
assert "cluster_dimension" in names, "bias_gelu_fwd_cluster: attributes %r" % attrs.get("bias_gelu_fwd_cluster")
assert "cooperative" in names, "layernorm_fwd_coop: attributes %r" % attrs.get("layernorm_fwd_coop")
print("cluster: %r; cooperative: %r" % (attrs["bias_gelu_fwd_cluster"], attrs["layernorm_fwd_coop"]))
PY
		;;
	esac
}
after_plan() {
	case $1 in
	gpt-launch-attrs)
		py_row "$2 plan: rebuilds the cluster and cooperative kernels" "$3/trace.json" \
			"$OUT/$1.plan.json" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
plan = json.load(open(sys.argv[2]))
names = {ops[s[1]]["name"] for o in plan["ops"] for s in o.get("before", []) if s[0] == "replay"}
want = {"bias_gelu_fwd_cluster", "layernorm_fwd_coop"}
assert want <= names, "the plan replays %s, not %s" % (sorted(names & want) or "neither", sorted(want - names))
print("the plan replays %d kernels, both among them" % len(names))
PY
		;;
	esac
}

# light S LABEL CMD: plain, trace (identical, valid) and run mode at
# REMAT_BUDGET=50% (identical; what was saved is in the detail, not
# asserted): for programs whose activations live in memory of their own.
light() {
	s=$1 lb=$2 cmd=$3
	echo "$cmd" >"$OUT/$s.cmd"
	say "$lb: $cmd"
	plain_row "$s" "$lb" "$cmd" || return 0
	# shellcheck disable=SC2086
	if ! run "$s-trace" LD_PRELOAD="$LIB" REMAT_MODE=trace REMAT_TRACE_DIR="$OUT/$s-trace.d" \
		$WRAP $cmd; then
		fail "$lb trace: identical, valid trace" "exit $(cat "$OUT/$s-trace.rc"): $(last_err "$s-trace")"
	elif ! same "$s-plain" "$s-trace"; then
		fail "$lb trace: identical, valid trace" "$(differ_line "$s-plain" "$s-trace")"
	elif d=$(check_trace "$OUT/$s-trace.d" "$trace_kind" 2>&1); then
		pass "$lb trace: identical, valid trace" "$d"
	else
		fail "$lb trace: identical, valid trace" "$(echo "$d" | tail -n 1)"
	fi
	# shellcheck disable=SC2086
	if ! run "$s-run" LD_PRELOAD="$LIB" REMAT_BUDGET=50% REMAT_LOG=1 \
		REMAT_TRACE_DIR="$OUT/$s-run.d" REMAT_CACHE_DIR="$OUT/$s-cache" \
		REMAT_PLANNER="$BUILD/remat-plan" $WRAP $cmd; then
		fail "$lb run at 50%: output identical" "exit $(cat "$OUT/$s-run.rc"): $(last_err "$s-run")"
	elif same "$s-plain" "$s-run"; then
		read -r ap pk ev rp <<EOF
$(run_facts "$s-run")
EOF
		pass "$lb run at 50%: output identical" "plans applied $ap, evictions $ev, replays $rp, replay peak $pk"
	else
		fail "$lb run at 50%: output identical" "$(differ_line "$s-plain" "$s-run")"
	fi
}

# ranks S LABEL LIBREMAT VAR=VALUE... -- CMD...: two processes as torchrun
# starts them (RANK, LOCAL_RANK, WORLD_SIZE; on a GPU each its own device
# by CUDA_VISIBLE_DEVICES), a fresh rendezvous directory, through the
# torchrun wrapper (each rank's trace in $REMAT_TRACE_DIR/rankR) when
# LIBREMAT is 1, each bounded by RANKS_TIMEOUT.  Outputs in
# $OUT/S.rankR.{out,err,rc}.  Returns 1 when a rank failed (a row says so).
NRANKS=2
ranks() {
	_s=$1 _rl=$2 _w=$3
	shift 3
	_e=''
	while [ "$1" != -- ]; do
		_e="$_e $1"
		shift
	done
	shift
	rm -rf "$OUT/$_s.rdzv"
	mkdir -p "$OUT/$_s.rdzv"
	_pre=''
	[ "$_w" = 0 ] || _pre="env LIBREMAT_SO=$LIB $ROOT/tools/remat-torchrun-wrapper.sh"
	_r=0
	while [ "$_r" -lt "$NRANKS" ]; do
		_dev=''
		[ "$simulate" = 1 ] || _dev=CUDA_VISIBLE_DEVICES=$_r
		# shellcheck disable=SC2086 # word lists on purpose
		(
			_rc=0
			env $_e $_dev RANK=$_r LOCAL_RANK=$_r WORLD_SIZE=$NRANKS timeout "$RANKS_TIMEOUT" \
				$_pre $WRAP "$@" --ranks $NRANKS --rendezvous "$OUT/$_s.rdzv" \
				>"$OUT/$_s.rank$_r.out" 2>"$OUT/$_s.rank$_r.err" || _rc=$?
			echo "$_rc" >"$OUT/$_s.rank$_r.rc"
		) &
		_r=$((_r + 1))
	done
	wait
	_r=0
	while [ "$_r" -lt "$NRANKS" ]; do
		_rc=$(cat "$OUT/$_s.rank$_r.rc")
		if [ "$_rc" != 0 ]; then
			fail "$_rl: runs" "rank $_r exited $_rc (124: timed out after ${RANKS_TIMEOUT}s): $(last_err "$_s.rank$_r")"
			return 1
		fi
		_r=$((_r + 1))
	done
}

# ranks_validate T ARGS: T --ranks 2, plain, traced, and in run mode.
# shellcheck disable=SC2086 # $cmd is a word list on purpose
ranks_validate() {
	t=$1 s=$1-ranks lb="$1 --ranks $NRANKS"
	cmd=$(tcmd "$t" "$2")
	echo "$cmd --ranks $NRANKS" >"$OUT/$s.cmd"
	say "$lb: $cmd"
	ranks "$s-plain" "$lb plain" 0 -- $cmd || return 0
	# gpt's checksum is over parameters, which the ranks share; mlp's also
	# over each rank's own batch-norm running statistics.
	agree=0 what="every rank runs"
	[ "$t" != gpt ] || agree=1 what="every rank runs, checksums agree"
	if d=$(python3 - "$OUT/$s-plain" "$NRANKS" "$iters" "$agree" <<'PY' 2>&1
import sys
base, n, iters, agree = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
sums = set()
for r in range(n):
    lines = open("%s.rank%d.out" % (base, r)).read().splitlines()
    assert sum(l.startswith("iter ") for l in lines) == iters, "rank %d: not %d loss lines" % (r, iters)
    assert lines and lines[-1].startswith("checksum "), "rank %d: no checksum" % r
    sums.add(lines[-1])
assert len(sums) == 1 or not agree, "the ranks' checksums differ: %s" % sorted(sums)
print(", ".join(sorted(sums)))
PY
	); then
		pass "$lb plain: $what" "$d"
	else
		fail "$lb plain: $what" "$(echo "$d" | tail -n 1)"
		return 0
	fi

	ranks "$s-trace" "$lb trace" 1 REMAT_MODE=trace REMAT_TRACE_DIR="$OUT/$s-trace.d" \
		REMAT_LOG=1 -- $cmd || return 0
	r=0
	while [ "$r" -lt "$NRANKS" ]; do
		if ! same "$s-plain.rank$r" "$s-trace.rank$r"; then
			fail "$lb trace: rank $r identical, valid trace" "$(differ_line "$s-plain.rank$r" "$s-trace.rank$r")"
		elif d=$(check_trace "$OUT/$s-trace.d/rank$r" "$trace_kind" 2>&1); then
			pass "$lb trace: rank $r identical, valid trace" "$d"
		else
			fail "$lb trace: rank $r identical, valid trace" "$(echo "$d" | tail -n 1)"
			return 0
		fi
		r=$((r + 1))
	done
	py_row "$lb trace: collectives never replayed" "$OUT/$s-trace.d/rank0/trace.json" <<'PY'
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
coll = [o for o in ops if "ncclDevKernel_" in o["name"]]
assert coll, "no NCCL kernel (ncclDevKernel_*) in the trace"
bad = [o["name"] for o in coll if o.get("collective") is not True or o["replayable"]]
assert not bad, "not marked collective, or replayable: %s" % bad[:3]
print("%d collective ops, none replayable" % len(coll))
PY

	tdir=$OUT/$s-trace.d/rank0
	if b=$(budget "$tdir" "$fraction" "$s" 2>"$OUT/$s.budget.err"); then
		read -r bud cst peak low <<EOF
$b
EOF
	else
		fail "$lb plan: budget" "$(tail -n 1 "$OUT/$s.budget.err")"
		return 0
	fi
	if [ "$low" -ge "$peak" ]; then
		fail "$lb plan: something to evict" "no plan saves memory (peak $(human "$peak"), smallest $(human "$low"))"
		return 0
	fi
	for r in run-cold run; do
		ranks "$s-$r" "$lb $r" 1 REMAT_BUDGET="$bud" REMAT_LOG=1 REMAT_TRACE_DIR="$OUT/$s-$r.d" \
			REMAT_CACHE_DIR="$OUT/$s-cache" REMAT_PLANNER="$BUILD/remat-plan" -- $cmd || return 0
		[ "$r" = run ] || wait_plan "$OUT/$s-cache" 150 ||
			fail "$lb run-cold: plan cached" "no plan in $OUT/$s-cache after 150 s"
	done
	r=0
	while [ "$r" -lt "$NRANKS" ]; do
		check_run_mode "$s-run.rank$r" "$s-plain.rank$r" "$bud" "$lb run rank $r"
		r=$((r + 1))
	done
}

# targs TRAINER: the model flags of mlp or gpt.
targs() {
	case $1 in
	mlp) echo "$MLP_ARGS" ;;
	gpt) echo "$GPT_ARGS" ;;
	esac
}

# pool_args TRAINER: its flags for the alloc group.  On the simulator the
# defaults fit in the pool's first 2 MiB segments, which no plan frees:
# the sizes run_alloc_pool.sh uses.
pool_args() {
	if [ "$simulate" = 1 ] && [ -z "$(targs "$1")" ]; then
		case $1 in
		mlp) echo "--layers 4 --batch 1024" ;;
		gpt) echo "--layers 4 --batch 16" ;;
		esac
	else
		targs "$1"
	fi
}

# variant GROUP TRAINER FLAG: the group's SKIP row when the trainer lacks
# FLAG; returns 1 then.
variant() {
	has_flag "$2" "$3" && return 0
	skiprow "$2 $3" "this build's $2 has no $3 (group $1)"
	return 1
}

if wanted mlp; then
	validate mlp mlp "$(tcmd mlp "$MLP_ARGS")"
fi
if wanted gpt; then
	validate gpt gpt "$(tcmd gpt "$GPT_ARGS")"
fi
if wanted graphs && variant graphs gpt --graphs; then
	validate gpt-graphs "gpt --graphs" "$(tcmd gpt "$GPT_ARGS --graphs")" 0
fi
if wanted launch-attrs && variant launch-attrs gpt --launch-attrs; then
	# The smallest reachable budget: the plan must rebuild the attributed
	# kernels too.
	validate gpt-launch-attrs "gpt --launch-attrs" "$(tcmd gpt "$GPT_ARGS --launch-attrs")" 0
fi
if wanted alloc; then
	for t in mlp gpt; do
		variant alloc "$t" --alloc || continue
		for m in caching vmm; do
			PLAN_ARGS="--plan-version 2"
			validate "$t-alloc-$m" "$t --alloc $m" "$(tcmd "$t" "$(pool_args "$t") --alloc $m")"
			PLAN_ARGS=
		done
	done
fi
if wanted ranks; then
	for t in gpt mlp; do
		if [ "$ngpu" -lt "$NRANKS" ]; then
			skiprow "$t --ranks $NRANKS" "needs $NRANKS GPUs (one per rank), nvidia-smi lists $ngpu"
		elif variant ranks "$t" --ranks; then
			ranks_validate "$t" "$(targs "$t")"
		fi
	done
fi
if wanted arena; then
	if [ -x "$BUILD/trainers/arena" ]; then
		light arena arena "$(tcmd arena "$ARENA_ARGS")"
	else
		skiprow arena "$BUILD/trainers/arena is not built (no nvcc when make ran)"
	fi
fi
table
