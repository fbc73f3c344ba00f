#!/bin/sh
# The detected period is the trainer's ops per iteration, as the simulated
# device counts executed ops (kernels + copies + sets): two runs differing
# only in --iters give the per-iteration count (kernels + copies + sets +
# host functions).  Both runs are traced, so
# the profile's own host copies cancel out.  Several sizes, both trainers.
. tests/e2e/trace_lib.sh
check() { # NAME TRAINER ARGS...
	name=$1
	shift
	for it in 6 8; do
		run $name-$it LD_PRELOAD="$PRELOAD" REMAT_MODE=trace REMAT_TRACE_DIR=$tmp/$name-$it \
			SIMCUDA_REPORT_FILE=$tmp/$name-$it.report -- "$@" --iters $it
	done
	python3 - "$tmp/$name-6.report" "$tmp/$name-8.report" "$tmp/$name-8/trace.json" "$name" <<'PY'
import json, sys
def ops(path):
    # kernels, copies, sets and host functions: what the trace calls ops
    # (the device's ops= also counts event records and waits).
    f = dict(kv.split("=") for kv in open(path).read().split() if "=" in kv)
    return sum(int(f[k]) for k in ("kernels", "memcpy", "memset", "host_funcs"))
per_iter, rem = divmod(ops(sys.argv[2]) - ops(sys.argv[1]), 2)
t = json.load(open(sys.argv[3]))
period = t["iteration"]["period"]
assert rem == 0, "odd op difference"
assert period == per_iter, f"{sys.argv[4]}: period {period}, device counts {per_iter} ops per iteration"
assert len(t["ops"]) == per_iter
print(f"{sys.argv[4]}: {period} ops per iteration")
PY
	[ $? -eq 0 ] || fail "$name: period check"
}
check mlp-l1 $TR/mlp --layers 1
check mlp-l3 $TR/mlp --layers 3 --hidden 128
check mlp-acc $TR/mlp --accum 2
check gpt-l1 $TR/gpt --layers 1
check gpt-l2 $TR/gpt --layers 2
echo "PASS: detected periods match the device's ops per iteration"
