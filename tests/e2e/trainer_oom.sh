#!/bin/sh
# Out of device memory: one clear message naming the size and what the
# allocation was for, and exit status 2 -- at the first allocation and in
# the middle of a forward pass, in every --alloc mode (vmm names the
# driver's error: cuMemCreate is what failed).
. tests/e2e/trainer_lib.sh
check_oom() {
	name=$1 mem=$2 error=${ERROR:-cudaErrorMemoryAllocation}
	shift 2
	set +e
	SIMCUDA_MEMORY=$mem "$SIMRUN" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	set -e
	[ "$rc" = 2 ] || fail "$name: exit $rc, expected 2: $(cat "$tmp/$name.err")"
	[ "$(wc -l <"$tmp/$name.err")" = 1 ] || fail "$name: expected one message: $(cat "$tmp/$name.err")"
	grep -q "^$(basename "$1"): out of device memory allocating [0-9][0-9]* bytes for [a-z].* ($error)\$" \
		"$tmp/$name.err" || fail "$name: unexpected message: $(cat "$tmp/$name.err")"
}
check_oom mlp-tiny 4K "$TR/mlp"
check_oom gpt-tiny 4K "$TR/gpt"
# Parameters fit, activations do not: the failure comes from cudaMallocAsync.
check_oom mlp-act 2M "$TR/mlp" --batch 1024
grep -q "for a \(linear layer\|GELU\|batch-norm\|dropout\)" "$tmp/mlp-act.err" ||
	fail "mlp: expected an activation to be the one that failed: $(cat "$tmp/mlp-act.err")"
check_oom gpt-act 3M "$TR/gpt" --batch 32
for m in caching vmm; do
	[ $m = vmm ] && e=CUDA_ERROR_OUT_OF_MEMORY || e=cudaErrorMemoryAllocation
	ERROR=$e check_oom mlp-tiny-$m 4K "$TR/mlp" --alloc $m
	ERROR=$e check_oom gpt-tiny-$m 4K "$TR/gpt" --alloc $m
	# The pool holds the parameters; its next segment or chunk does not fit.
	ERROR=$e check_oom mlp-act-$m 2M "$TR/mlp" --batch 1024 --alloc $m
	grep -q "for a linear layer output" "$tmp/mlp-act-$m.err" ||
		fail "mlp $m: expected an activation to be the one that failed: $(cat "$tmp/mlp-act-$m.err")"
	ERROR=$e check_oom gpt-act-$m 3M "$TR/gpt" --batch 32 --alloc $m
done
echo "trainer out-of-memory: ok"
