#!/bin/sh
# validate-jax.sh — libremat under an unmodified JAX job on a real NVIDIA
# GPU (tools/gpu/train_jax.py: a jitted training step, losses as hex, a
# parameter checksum).  The checks of tools/gpu/lib.sh's series:
#
#   plain      without libremat, twice: the reference losses and checksum
#              (XLA_FLAGS=--xla_gpu_deterministic_ops=true, set by the job)
#   plain-alt  XLA_PYTHON_CLIENT_PREALLOCATE=false
#              XLA_PYTHON_CLIENT_ALLOCATOR=platform, what libremat sets at
#              load: identical (if not, libremat's runs are compared with
#              this run, so that a difference is libremat's)
#   trace      LD_PRELOAD=libremat.so REMAT_MODE=trace: identical; the
#              trace valid, remat-report reads it, CUPTI counts match; JAX
#              started with libremat's allocator settings
#   plan       remat-plan at the budget ($REMAT_BUDGET or --budget, else
#              persistent memory + 50% of the per-iteration memory)
#   run-cold   REMAT_BUDGET, empty plan cache: identical output
#   run        REMAT_BUDGET, plan cached: identical, the plan applied with
#              evictions, the replay iterations' peak within the budget
#
# then a MEASUREMENTS table (JAX's peak_bytes_in_use where it reports one,
# nvidia-smi's memory.used above the idle GPU, median step time).
#
# Usage: tools/gpu/validate-jax.sh [--skip-build] [--out DIR] [--budget B]
#            [--fraction F] [--iters N] [--python PY]
#   JAX_ARGS: extra flags for train_jax.py (--batch, --width, --depth ...;
#   see train_jax.py --help).
#
# Exit: 0 no check failed, 1 a check failed, 2 usage or build error, 77 no
# GPU, or no JAX that can use it.
set -eu
PROG=validate-jax
# shellcheck source=tools/gpu/lib.sh
. "$(dirname "$0")/lib.sh"

user_budget=${REMAT_BUDGET:-}
build_it=1 out='' fraction=0.5 iters=30 py=python3
while [ $# -gt 0 ]; do
	case $1 in
	--skip-build) build_it=0 ;;
	--out) out=${2:?--out needs a directory} && shift ;;
	--budget) user_budget=${2:?--budget needs a size} && shift ;;
	--fraction) fraction=${2:?--fraction needs a number} && shift ;;
	--iters) iters=${2:?--iters needs a number} && shift ;;
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
budget_bytes=''
[ -z "$user_budget" ] || budget_bytes=$(budget_bytes_of "$user_budget")

clean_env
cd "$ROOT"
need_gpu
need_module "$py" jax JAX
backend=$("$py" -c 'import jax; print(jax.default_backend())' 2>/dev/null | tail -n 1) || true
[ "$backend" = gpu ] ||
	skip "JAX cannot use the GPU (jax.default_backend() is '${backend:-?}': a jaxlib without the CUDA plugin?)"

framework_setup jax train_jax.py
"$py" -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' \
	>>"$OUT/gpu.txt" 2>&1 || true

# job NAME VAR=VALUE...: train_jax.py with those variables.
job() {
	_j=$1
	shift
	# shellcheck disable=SC2086 # JAX_ARGS is a word list on purpose
	run "$_j" "$@" "$py" "$SCRIPT" ${JAX_ARGS:-} --iters "$iters" \
		--output "$OUT/$_j.rank0.out" --stats "$OUT/$_j.rank0.json"
}
same_out() { same_ranks "$@"; }

# after_trace: JAX started with the allocator settings libremat makes (no
# preallocated 75% of the device, a buffer per allocation).
after_trace() {
	if at_d=$(python3 - "$OUT/${1}trace.rank0.json" <<'PY' 2>&1
import json, sys
env = json.load(open(sys.argv[1]))["env"]
want = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false", "XLA_PYTHON_CLIENT_ALLOCATOR": "platform"}
bad = {k: env.get(k) for k, v in want.items() if env.get(k) != v}
assert not bad, "JAX started with %r, want %r" % (bad, want)
print(", ".join("%s=%s" % kv for kv in sorted(want.items())))
PY
	); then
		pass "$2 trace: libremat's allocator settings" "$at_d"
	else
		fail "$2 trace: libremat's allocator settings" "$(echo "$at_d" | tail -n 1)"
	fi
}

REF_VARS='' strict=1 nranks=1
series "" jax "XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_ALLOCATOR=platform"
measurements "jax peak MiB" | tee "$OUT/measurements.txt"
table
