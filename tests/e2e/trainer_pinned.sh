#!/bin/sh
# --pinned stages the inputs in cudaMallocHost memory (and reads the loss
# back into it); the results must not change.
. tests/e2e/trainer_lib.sh
for t in mlp gpt; do
	run "$t.plain" "$TR/$t" --iters 3
	run "$t.pinned" "$TR/$t" --iters 3 --pinned
	check_format "$tmp/$t.pinned.out" 3
	cmp -s "$tmp/$t.plain.out" "$tmp/$t.pinned.out" ||
		fail "$t: --pinned changed the output: $(diff "$tmp/$t.plain.out" "$tmp/$t.pinned.out")"
done
echo "trainer --pinned: ok"
