#!/bin/sh
# build/trainers/arena (host code by nvcc, <<<>>> launches, cuBLAS, every
# tensor in one of five arenas): linked like a real CUDA program, with the
# simcc module beside nvcc's fat binary; byte-identical output on two runs,
# also when fresh memory is random (it reads nothing it did not write);
# the loss falls from about ln(vocabulary); bad flags and too little
# memory give one message.  Listed only when nvcc exists.
. tests/e2e/trainer_lib.sh
A=$TR/arena
needed=$(readelf -d "$A" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in libcublas.so.13 libcudart.so.13; do
	echo "$needed" | grep -qx "$lib" || fail "arena: no NEEDED $lib"
done
readelf -nW "$A" | grep -q '^ *simcuda ' || fail "arena carries no simcc module"

run a "$A" --iters 8
run b "$A" --iters 8
check_format "$tmp/a.out" 8
cmp -s "$tmp/a.out" "$tmp/b.out" || fail "two runs differ: $(diff "$tmp/a.out" "$tmp/b.out")"
[ ! -s "$tmp/a.err" ] || fail "arena wrote to stderr: $(head -n 3 "$tmp/a.err")"
SIMCUDA_FILL=random run random "$A" --iters 8
cmp -s "$tmp/a.out" "$tmp/random.out" || fail "the output depends on fresh memory's contents"

first=$(loss "$tmp/a.out" 0)
last=$(loss "$tmp/a.out" 7)
echo "arena: loss $first -> $last"
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.8 * a) }' || fail "loss did not fall enough ($first -> $last)"
# ln(512) = 6.24 for the default vocabulary
awk -v a="$first" 'BEGIN { exit !(a > 5.6 && a < 6.9) }' || fail "odd first loss $first"

# Other shapes run too: three layers, eight heads, a longer sequence.
run shape "$A" --iters 2 --layers 3 --heads 8 --seq 48 --width 128
check_format "$tmp/shape.out" 2

set +e
"$SIMRUN" "$A" --width 48 >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "^arena: --width must be a multiple of 32 and of --heads" "$tmp/err" ||
	fail "bad --width: exit $rc: $(cat "$tmp/err")"
set +e
SIMCUDA_MEMORY=1M "$SIMRUN" "$A" >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
	grep -q "^arena: out of device memory allocating [0-9]* bytes for the [a-z]" "$tmp/err" ||
	fail "out of memory: exit $rc: $(cat "$tmp/err")"
echo "arena trainer: ok"
