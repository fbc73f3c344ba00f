#!/bin/sh
# --bwd-thread runs each backward pass on a second host thread; the results
# must not change.
. tests/e2e/trainer_lib.sh
for t in mlp gpt; do
	run "$t.main" "$TR/$t" --iters 3
	run "$t.thread" "$TR/$t" --iters 3 --bwd-thread
	check_format "$tmp/$t.thread.out" 3
	cmp -s "$tmp/$t.main.out" "$tmp/$t.thread.out" ||
		fail "$t: --bwd-thread changed the output: $(diff "$tmp/$t.main.out" "$tmp/$t.thread.out")"
done
echo "trainer --bwd-thread: ok"
