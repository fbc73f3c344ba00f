#!/bin/sh
# Both trainers really learn: the loss of the last iteration is well below
# the first (the forward, backward and optimizer math is right), and the
# first loss is near ln(classes), as for an untrained classifier.
. tests/e2e/trainer_lib.sh
run mlp "$TR/mlp" --iters 8
run gpt "$TR/gpt" --iters 8
check_format "$tmp/mlp.out" 8
check_format "$tmp/gpt.out" 8
for t in mlp gpt; do
	first=$(loss "$tmp/$t.out" 0)
	last=$(loss "$tmp/$t.out" 7)
	echo "$t: loss $first -> $last"
	awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < 0.75 * a) }' ||
		fail "$t: loss did not fall enough ($first -> $last)"
	# Fresh batches and dropout add noise, so single steps may rise; the
	# second half of the run must still be lower than the first.
	awk '$1 == "iter" { print $4 }' "$tmp/$t.out" | while read -r h; do printf '%.6f\n' "$h"; done |
		awk '{ v[NR] = $1 } END { for (i = 1; i <= 4; i++) { a += v[i]; b += v[i + 4] } exit !(b < a) }' ||
		fail "$t: the second half of the losses is not lower: $(cat "$tmp/$t.out")"
done
# ln(10) = 2.30 for mlp's 10 classes; ln(64) = 4.16 for gpt's vocabulary.
awk -v a="$(loss "$tmp/mlp.out" 0)" 'BEGIN { exit !(a > 1.8 && a < 3.2) }' || fail "mlp: odd first loss"
awk -v a="$(loss "$tmp/gpt.out" 0)" 'BEGIN { exit !(a > 3.5 && a < 5.0) }' || fail "gpt: odd first loss"
echo "trainers learn: ok"
