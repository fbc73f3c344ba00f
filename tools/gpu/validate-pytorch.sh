#!/bin/sh
# validate-pytorch.sh — libremat under an unmodified PyTorch job on a real
# NVIDIA GPU (tools/gpu/train_torch.py).  Each way of running the job is a
# series of checks (tools/gpu/lib.sh, series):
#
#   plain     without libremat, twice: the reference losses and checksum
#   trace     LD_PRELOAD=libremat.so REMAT_MODE=trace: identical output, a
#             valid trace per process that remat-report reads, CUPTI
#             counts that match
#   plan      remat-plan at the budget ($REMAT_BUDGET or --budget, else
#             persistent memory + 50% of the per-iteration memory)
#   run-cold  REMAT_BUDGET, empty plan cache: identical output
#   run       REMAT_BUDGET, plan cached: identical output, plan applied with
#             evictions, replay iterations' physical peak within the budget
#
# The series:
#   eager          one process, eager mode; also once with PyTorch's
#                  cudaMallocAsync backend, which PyTorch uses under libremat
#   graphs-blocks  the transformer blocks as CUDA graphs
#                  (torch.cuda.make_graphed_callables), + graph launches
#                  seen in the trace
#   graphs-step    the whole training step captured in one CUDA graph
#                  (torch.cuda.graph, capturable AdamW)
#   graphs-compile torch.compile(mode="reduce-overhead") (CUDA graph trees)
#   ddpN           torchrun --nproc_per_node N (DistributedDataParallel,
#                  NCCL) through tools/remat-torchrun-wrapper.sh, each rank
#                  its own trace; when nvidia-smi lists at least N GPUs,
#                  else one SKIP row
# A graph mode PyTorch cannot run here (no triton for torch.compile, a step
# PyTorch cannot capture) is one SKIP row; a graph series whose plan has
# nothing to evict (all of it inside graphs) is checked at its peak.  Then
# a MEASUREMENTS table: each run's memory (PyTorch's max_memory_allocated,
# the activation peak of one step, the peak of nvidia-smi's memory.used
# above the idle GPU) and median step time against its series' plain run.
#
# Usage: tools/gpu/validate-pytorch.sh [--skip-build] [--out DIR]
#            [--budget B] [--fraction F] [--iters N] [--graphs LIST]
#            [--ddp N] [--python PY]
#   TRAIN_ARGS: extra flags for train_torch.py (model size: --batch, --seq,
#   --width, --blocks, --dropout ...; see train_torch.py --help).
#   --graphs LIST: graph series to run, of blocks,step,compile (the
#   default: all three), or none.
#   --ddp N: ranks of the torchrun series (default 2; 0: none).
#
# Exit: 0 no check failed, 1 a check failed, 2 usage or build error, 77 no
# GPU, or no PyTorch that can use it.
set -eu
PROG=validate-pytorch
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

user_budget=${REMAT_BUDGET:-}
build_it=1 out='' fraction=0.5 iters=30 ddp=2 py=python3 graphs=blocks,step,compile
while [ $# -gt 0 ]; do
	case $1 in
	--skip-build) build_it=0 ;;
	--out) out=${2:?--out needs a directory} && shift ;;
	--budget) user_budget=${2:?--budget needs a size} && shift ;;
	--fraction) fraction=${2:?--fraction needs a number} && shift ;;
	--iters) iters=${2:?--iters needs a number} && shift ;;
	--graphs) graphs=${2:?--graphs needs a list} && shift ;;
	--ddp) ddp=${2:?--ddp needs a process count} && shift ;;
	--python) py=${2:?--python needs an interpreter} && shift ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
want_fraction "$fraction"
want_iters "$iters" 10
case $ddp in
'' | *[!0-9]*) die "--ddp '$ddp': expected a process count" ;;
esac
[ "$ddp" -ne 1 ] || die "--ddp 1: a torchrun series needs at least 2 ranks (0: none)"
[ "$graphs" != none ] || graphs=''
for g in $(echo "$graphs" | tr ',' ' '); do
	case $g in
	blocks | step | compile) ;;
	*) die "--graphs: unknown mode '$g' (blocks, step, compile or none)" ;;
	esac
done
budget_bytes=''
[ -z "$user_budget" ] || budget_bytes=$(budget_bytes_of "$user_budget")

clean_env
cd "$ROOT"
need_gpu
need_module "$py" torch PyTorch
"$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	skip "PyTorch cannot use the GPU (torch.cuda.is_available() is False: a CPU-only build?)"

framework_setup pytorch train_torch.py
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' \
	>>"$OUT/gpu.txt" 2>&1 || true
# Each rank its own trace directory (and the preload): the user-facing wrapper.
RANKWRAP=$ROOT/tools/remat-torchrun-wrapper.sh

# job NAME VAR=VALUE...: train_torch.py with the series' flags ($sargs;
# under torchrun when nranks > 1) and those variables.
job() {
	_j=$1
	shift
	_rc=0
	# shellcheck disable=SC2086 # TRAIN_ARGS and sargs are word lists on purpose
	if [ "$nranks" -gt 1 ]; then
		run "$_j" "$@" "$py" -m torch.distributed.run --standalone --nproc_per_node "$nranks" \
			--no_python "$RANKWRAP" "$py" "$SCRIPT" ${TRAIN_ARGS:-} $sargs --iters "$iters" \
			--output "$OUT/$_j.rank{rank}.out" --stats "$OUT/$_j.rank{rank}.json" || _rc=$?
	else
		run "$_j" "$@" "$py" "$SCRIPT" ${TRAIN_ARGS:-} $sargs --iters "$iters" \
			--output "$OUT/$_j.rank0.out" --stats "$OUT/$_j.rank0.json" || _rc=$?
	fi
	return "$_rc"
}
same_out() { same_ranks "$@"; }

# after_trace PREFIX LABEL: in a graph series, the graph launches are ops
# of the traced iteration (libremat saw them and read their nodes), and
# PyTorch under libremat saw the allocator settings libremat made.
after_trace() {
	case $1 in
	graphs-*)
		if at_d=$(python3 - "$OUT/${1}trace.d" <<'PY' 2>&1
import glob, json, sys
n = 0
for path in sorted(glob.glob(sys.argv[1] + "/**/trace.json", recursive=True)):
    n += sum(1 for o in json.load(open(path))["ops"] if o.get("kind") == "graph")
assert n > 0, "no graph launch among the traced ops"
print("%d graph launch(es) in the iteration" % n)
PY
		); then
			pass "$2 trace: graph launches traced" "$at_d"
		else
			fail "$2 trace: graph launches traced" "$(echo "$at_d" | tail -n 1)"
		fi
		;;
	'')
		if at_d=$(python3 - "$OUT/trace.rank0.json" <<'PY' 2>&1
import json, sys
env = json.load(open(sys.argv[1])).get("env", {})
conf = env.get("PYTORCH_ALLOC_CONF") or env.get("PYTORCH_CUDA_ALLOC_CONF") or ""
assert "backend:cudaMallocAsync" in conf, "PyTorch saw allocator settings %r" % env
print(", ".join("%s=%s" % kv for kv in sorted(env.items()) if kv[1] is not None))
PY
		); then
			pass "eager trace: libremat's allocator settings" "$at_d"
		else
			fail "eager trace: libremat's allocator settings" "$(echo "$at_d" | tail -n 1)"
		fi
		;;
	esac
}

ASYNC="PYTORCH_ALLOC_CONF=backend:cudaMallocAsync PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync"
REF_VARS='' strict=1 nranks=1 sargs=''
series "" eager "$ASYNC"
# Graph modes: everything may sit inside graphs, where libremat evicts
# nothing (strict=0), and PyTorch may be unable to capture (a SKIP row).
strict=0
for g in $(echo "$graphs" | tr ',' ' '); do
	sargs="--graphs $g"
	series "graphs-$g-" "graphs-$g"
done
strict=1 sargs=''
if [ "$ddp" -gt 0 ]; then
	ngpu=$(gpu_count)
	if [ "$ngpu" -ge "$ddp" ]; then
		nranks=$ddp
		series "ddp$ddp-" "ddp$ddp"
	else
		skiprow "ddp$ddp" "torchrun --nproc_per_node $ddp needs $ddp GPUs, nvidia-smi lists $ngpu"
	fi
fi

measurements "torch max MiB" | tee "$OUT/measurements.txt"
table
