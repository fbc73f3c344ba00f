#!/bin/sh
# --alloc async|caching|vmm changes where tensors live, never the numbers:
# every mode prints the bytes of the default run (plain, --bwd-thread,
# --accum 2), also when fresh memory is random (a kernel reading memory it
# did not write would show).  The caching pool really reuses its segments
# (their number does not grow with the iterations) and vmm really grows a
# range with chunks; the simulator's count of device allocations agrees
# with the trainer's (--alloc-stats): the (N+1)-th would fail unnoticed,
# the N-th fails once and the pool recovers as PyTorch's does.
. tests/e2e/trainer_lib.sh

# astat FILE KEY: a value of the --alloc-stats line.
astat() {
	v=$(sed -n "s/.* alloc=.* $2=\([0-9][0-9]*\).*/\1/p" "$1")
	[ -n "$v" ] || fail "$1: no $2 in the --alloc-stats line: $(cat "$1")"
	echo "$v"
}
# faults FILE: faults_injected of the simulator's report line.
faults() {
	sed -n 's/^simcuda: .* faults_injected=\([0-9]*\).*$/\1/p' "$1"
}

for t in mlp gpt; do
	for fill in poison random; do
		for flags in "" "--bwd-thread" "--accum 2"; do
			tag=$t.$fill.$(echo "$flags" | tr -d ' -')
			# shellcheck disable=SC2086
			SIMCUDA_FILL=$fill run "$tag" "$TR/$t" --iters 2 $flags
			check_format "$tmp/$tag.out" 2
			for m in caching vmm; do
				# shellcheck disable=SC2086
				SIMCUDA_FILL=$fill run "$tag.$m" "$TR/$t" --iters 2 $flags --alloc $m \
					--alloc-stats
				cmp -s "$tmp/$tag.out" "$tmp/$tag.$m.out" ||
					fail "$t --alloc $m $flags (fill $fill) changed the output:" \
						"$(diff "$tmp/$tag.out" "$tmp/$tag.$m.out" | head -n 4)"
			done
		done
	done
	run "$t.async.2" "$TR/$t" --iters 2 --alloc async --alloc-stats
	cmp -s "$tmp/$t.poison..out" "$tmp/$t.async.2.out" || fail "$t: --alloc async is not the default"
	cp "$tmp/$t.poison..caching.err" "$tmp/$t.caching.2.err"
	cp "$tmp/$t.poison..vmm.err" "$tmp/$t.vmm.2.err"

	# Reuse: the pools' device allocations do not grow with the iterations;
	# async allocates every tensor anew.
	for m in async caching vmm; do
		run "$t.$m.4" "$TR/$t" --iters 4 --alloc $m --alloc-stats
		a2=$(astat "$tmp/$t.$m.2.err" device_allocs)
		a4=$(astat "$tmp/$t.$m.4.err" device_allocs)
		t2=$(astat "$tmp/$t.$m.2.err" tensors)
		t4=$(astat "$tmp/$t.$m.4.err" tensors)
		[ "$t4" -gt "$t2" ] || fail "$t $m: $t2 tensors in 2 iterations, $t4 in 4"
		case $m in
		async)
			[ "$a4" = "$t4" ] && [ "$a4" -gt "$a2" ] ||
				fail "$t async: $a2 and $a4 device allocations for $t2 and $t4 tensors"
			;;
		*)
			[ "$a2" = "$a4" ] && [ "$a4" -lt 10 ] ||
				fail "$t $m: $a2 device allocations in 2 iterations, $a4 in 4"
			r4=$(astat "$tmp/$t.$m.4.err" reused)
			[ "$r4" = $((t4 - a4)) ] ||
				fail "$t $m: $r4 of $t4 tensors reused with $a4 device allocations"
			;;
		esac
	done
	[ "$(astat "$tmp/$t.caching.4.err" chunks)" = 0 ] || fail "$t caching: chunks mapped"
	[ "$(astat "$tmp/$t.vmm.4.err" chunks)" = "$(astat "$tmp/$t.vmm.4.err" device_allocs)" ] ||
		fail "$t vmm: device allocations that are not chunks: $(cat "$tmp/$t.vmm.4.err")"
	# One range (the small pool of the compute stream), chunks of one granule.
	[ "$(astat "$tmp/$t.vmm.4.err" segments)" = 1 ] || fail "$t vmm: more than one range"
	SIMCUDA_GRANULARITY=64K run "$t.vmm64k" "$TR/$t" --iters 2 --alloc vmm --alloc-stats
	c64=$(astat "$tmp/$t.vmm64k.err" chunks)
	[ "$(astat "$tmp/$t.vmm64k.err" reserved_bytes)" = $((c64 * 65536)) ] &&
		[ "$c64" -gt "$(astat "$tmp/$t.vmm.2.err" chunks)" ] ||
		fail "$t vmm: $c64 chunks at 64K granularity: $(cat "$tmp/$t.vmm64k.err")"

	# The simulator counts the same device allocations.
	for m in caching vmm; do
		n=$(astat "$tmp/$t.$m.2.err" device_allocs)
		SIMCUDA_REPORT=1 SIMCUDA_FAIL_ALLOC=$((n + 1)) run "$t.$m.over" "$TR/$t" --iters 2 \
			--alloc $m
		[ "$(faults "$tmp/$t.$m.over.err")" = 0 ] ||
			fail "$t $m: more than $n device allocations: $(cat "$tmp/$t.$m.over.err")"
		SIMCUDA_REPORT=1 SIMCUDA_FAIL_ALLOC=$n run "$t.$m.last" "$TR/$t" --iters 2 --alloc $m
		[ "$(faults "$tmp/$t.$m.last.err")" = 1 ] ||
			fail "$t $m: fewer than $n device allocations: $(cat "$tmp/$t.$m.last.err")"
		cmp -s "$tmp/$t.poison..out" "$tmp/$t.$m.last.out" ||
			fail "$t $m: a failed device allocation changed the output"
	done
done

set +e
"$SIMRUN" "$TR/mlp" --alloc pooled >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "^mlp: invalid value 'pooled' for --alloc (expected async, caching or vmm)" \
	"$tmp/err" || fail "bad --alloc: $rc $(cat "$tmp/err")"
echo "trainer --alloc: ok"
