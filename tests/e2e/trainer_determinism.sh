#!/bin/sh
# The same trainer with the same flags prints byte-identical output (losses
# and the parameter checksum), also with gradient accumulation and a short
# last batch, from any working directory.
. tests/e2e/trainer_lib.sh
for t in mlp gpt; do
	run "$t.a" "$TR/$t"
	run "$t.b" "$TR/$t"
	check_format "$tmp/$t.a.out" "$(grep -c '^iter' "$tmp/$t.a.out")"
	cmp -s "$tmp/$t.a.out" "$tmp/$t.b.out" || fail "$t: two runs differ: $(diff "$tmp/$t.a.out" "$tmp/$t.b.out")"
	[ ! -s "$tmp/$t.a.err" ] || fail "$t wrote to stderr: $(head -n 3 "$tmp/$t.a.err")"
done
root=$(pwd)
for t in mlp gpt; do
	(cd "$tmp" && "$SIMRUN" "$root/$TR/$t" --iters 2 --accum 2 --short-last 3 >"$t.c.out" 2>"$t.c.err") ||
		fail "$t --accum 2 --short-last 3 failed: $(cat "$tmp/$t.c.err")"
	run "$t.d" "$TR/$t" --iters 2 --accum 2 --short-last 3
	check_format "$tmp/$t.c.out" 2
	cmp -s "$tmp/$t.c.out" "$tmp/$t.d.out" || fail "$t --accum/--short-last: runs differ"
	cmp -s "$tmp/$t.a.out" "$tmp/$t.c.out" && fail "$t: --accum 2 --short-last 3 changed nothing"
done
echo "trainer determinism: ok"
